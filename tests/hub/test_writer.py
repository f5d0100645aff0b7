"""The writer's yielding encoder: a few passages at a time, each piece after the
searches in flight (a counter shared between processes), never waiting for ever."""
from __future__ import annotations

import multiprocessing

import numpy as np

from chaja.hub.writer import PIECE, YieldingEncoder

TEXTS = ["보증 기간은 2년입니다.", "The warranty lasts two years.", "배수 펌프 필터를 청소하세요.",
         "Clean the drain pump filter.", "전구를 교체하기 전에 전원을 끕니다."]


def test_it_gives_the_encoders_vectors_piece_by_piece(encoder):
    active = multiprocessing.get_context("spawn").Value("i", 0)
    y = YieldingEncoder(encoder, active, max_wait_s=1.0)
    got = y.encode_passages(TEXTS)
    want = np.concatenate([encoder.encode_passages(TEXTS[i:i + PIECE]) for i in range(0, len(TEXTS), PIECE)])
    assert got.shape == (len(TEXTS), encoder.dim) and np.allclose(got, want, atol=1e-6)
    assert y.waited_s == 0.0 and y.name == encoder.name
    assert y.encode_passages([]).shape == (0, encoder.dim)


def test_it_waits_for_searches_but_not_for_ever(encoder):
    active = multiprocessing.get_context("spawn").Value("i", 2)      # two searches that never end
    y = YieldingEncoder(encoder, active, max_wait_s=0.05)
    got = y.encode_passages(TEXTS[:3])
    assert got.shape == (3, encoder.dim)
    assert y.waited_s >= 0.05 * 2                                     # it waited before each of the two pieces
    active.value = 0
    before = y.waited_s
    y.encode_passages(TEXTS[:3])
    assert y.waited_s == before


def test_the_writer_encodes_with_one_encoder_at_a_time(tmp_path):
    """An index run elsewhere runs its two encoders side by side (two cores' work); the
    writer, which leaves the other cores to searches, runs them in turn."""
    import chaja
    from chaja.config import Config
    from chaja.hub.writer import writing_index

    assert chaja.index.Index.encoders_side_by_side
    with writing_index(str(tmp_path / "w.chaja"), Config()) as index:
        assert index.encoders_side_by_side is False
