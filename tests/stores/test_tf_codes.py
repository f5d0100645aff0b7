"""Term frequencies in one byte a posting (chaja.stores.tf_codes), and keyword segments that
keep them, built, saved, merged and scored."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.stores import postings, tf_codes
from chaja.stores.bm25_segments import SegmentedBM25
from chaja.stores.tf_codes import SPILL, CodedTf, placed


def frequencies(n: int, seed: int = 0) -> np.ndarray:
    """Mostly small triples, with titles, headings and bodies past a code's range mixed in."""
    rng = np.random.default_rng(seed)
    tf = np.stack([rng.integers(0, 3, n), rng.integers(0, 2, n), rng.integers(0, 8, n)], axis=1)
    rare = rng.random(n) < 0.05
    tf[rare] = np.stack([rng.integers(0, 9, rare.sum()), rng.integers(0, 6, rare.sum()),
                         rng.integers(0, 400, rare.sum())], axis=1)
    tf[3] = (70_000, 0, 1)                       # past 16 bits: kept as 65,535, as before
    return tf


def test_codes_decode_to_the_frequencies_in_every_kind_of_index():
    tf = frequencies(5_000)
    coded = CodedTf.encode(tf)
    want = np.minimum(tf, 65535)
    assert coded.codes.dtype == np.uint8 and 0 < (coded.codes == SPILL).sum() == len(coded.spill_at) < 400
    assert np.array_equal(np.asarray(coded), want) and coded.shape == (5_000, 3)
    view = coded[1_000:3_000]                    # a term's postings: a view
    assert isinstance(view, CodedTf) and np.array_equal(np.asarray(view), want[1_000:3_000])
    at = np.array([0, 5, 17, 1_999, 1_500, 5])
    assert np.array_equal(view[at], want[1_000:3_000][at])
    mask = np.random.default_rng(1).random(2_000) < 0.3
    assert np.array_equal(view[mask], want[1_000:3_000][mask])
    assert np.array_equal(view[:, 0], want[1_000:3_000, 0]) and np.array_equal(view[10:20][:, 2], want[1_010:1_020, 2])
    assert len(coded[4_990:6_000]) == 10 and len(coded[:0]) == 0


def test_weighted_frequencies_equal_the_columns_summed_bit_for_bit():
    tf = frequencies(20_000, seed=2)
    coded = CodedTf.encode(tf)
    weights = np.array([2.0, 1.5, 1.0]) / 1.7
    want = np.minimum(tf, 65535).astype(np.uint16)
    f = want[:, 0] * weights[0]
    f += want[:, 1] * weights[1]
    f += want[:, 2] * weights[2]
    assert np.array_equal(coded.weighted(weights), f)
    assert np.array_equal(tf_codes.weighted(want, weights), f) and np.array_equal(tf_codes.weighted(coded, weights), f)
    assert np.array_equal(coded[7_000:9_000].weighted(weights), f[7_000:9_000])


@pytest.mark.parametrize("keep_some", [False, True])
def test_placing_parts_keeps_each_postings_frequencies(keep_some):
    a, b = frequencies(300, seed=3), frequencies(200, seed=4)
    keep_a = np.random.default_rng(5).random(300) < 0.6 if keep_some else None
    kept_a = a if keep_a is None else a[keep_a]
    total = len(kept_a) + len(b)
    where = np.random.default_rng(6).permutation(total)
    parts = [(CodedTf.encode(a), keep_a, where[:len(kept_a)]), (CodedTf.encode(b)[0:200], None, where[len(kept_a):])]
    out = placed(parts, total)
    want = np.empty((total, 3), np.int64)
    want[where[:len(kept_a)]], want[where[len(kept_a):]] = np.minimum(kept_a, 65535), np.minimum(b, 65535)
    assert np.array_equal(np.asarray(out), want) and np.all(np.diff(out.spill_at) > 0)


def test_a_segment_with_large_frequencies_scores_the_same_built_saved_and_merged(tmp_path):
    rows = [(i, "ko" if i % 2 else "en", "보증 " * (i % 7), "기간 " * (i % 4),
             " ".join(["보증"] * (i % 40) + ["기간", "수리"] * (i % 3) + [f"w{i % 11}"]))
            for i in range(1, 400)]
    built = postings.build(rows)
    assert (built.tf.codes == SPILL).any()
    postings.save(built, tmp_path / "k", {})
    loaded = postings.load(tmp_path / "k")
    halves = postings.merge([(postings.build(rows[:150]), np.ones(150, bool)),
                             (postings.build(rows[150:]), np.ones(249, bool))])
    alive = np.ones(399, bool)
    alive[::5] = False
    pruned = postings.merge([(built, alive)])
    for term in ("보증", "기간", "수리", "w3"):
        want_rows, want_tf = built.postings(term)
        for seg in (loaded, halves):
            got_rows, got_tf = seg.postings(term)
            assert np.array_equal(got_rows, want_rows) and np.array_equal(np.asarray(got_tf), np.asarray(want_tf))
        got_rows, got_tf = pruned.postings(term)
        live = alive[np.asarray(want_rows)]
        assert np.array_equal(np.asarray(got_tf), np.asarray(want_tf)[live])
    query = SegmentedBM25.query_tokens(["보증", "기간", "수리"])
    weights = dict(title_weight=2.0, heading_weight=1.5)
    expected = SegmentedBM25.of(built).search(query, 20, **weights)
    assert SegmentedBM25.of(loaded).search(query, 20, **weights) == expected
    assert SegmentedBM25.of(halves).search(query, 20, **weights) == expected
