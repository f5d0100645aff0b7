"""Cross-encoders from a local model folder: ONNX through onnxruntime, or any model
sentence-transformers loads.

A cross-encoder reads the question and a passage together ("[CLS] question [SEP]
passage [SEP]") and gives one relevance logit (Nogueira & Cho, "Passage Re-ranking
with BERT", 2019). Both backends return the raw logit: a one-output head as it is, a
two-output head as logit₁ − logit₀ (monotone in the softmax probability of the
"relevant" class). Pairs are truncated longest-first to ``max_length`` tokens, as
transformers does, and padded per batch.

``onnx:<folder>``: ``model.onnx`` (or ``onnx/model.onnx``) and the Hugging Face
``tokenizer.json`` beside it; needs the ``rerank`` extra (the tokenizers package).
``sentence-transformers:<folder>``: any folder ``CrossEncoder`` loads; needs the
``rerank-st`` extra (sentence-transformers, which brings PyTorch). Nothing is downloaded.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from chaja.rerank.base import check_scores


def _folder(folder: str | Path) -> Path:
    path = Path(folder).expanduser()
    if not path.is_dir():
        raise FileNotFoundError(f"reranker model folder {str(path)!r} does not exist")
    return path


def _relevance(logits: np.ndarray) -> np.ndarray:
    out = np.asarray(logits, dtype=np.float64)
    if out.ndim == 1:
        return out
    out = out.reshape(out.shape[0], -1)
    if out.shape[1] == 1:
        return out[:, 0]
    if out.shape[1] == 2:
        return out[:, 1] - out[:, 0]
    raise RuntimeError(f"the cross-encoder gives {out.shape[1]} outputs a pair; chaja reads one or two")


class OnnxCrossEncoder:
    """A cross-encoder exported to ONNX, run by onnxruntime."""

    def __init__(self, folder: str | Path, *, max_length: int = 512, batch_size: int = 16, threads: int = 0):
        path = _folder(folder)
        model = next((p for p in (path / "model.onnx", path / "onnx" / "model.onnx") if p.exists()), None)
        if model is None:
            raise FileNotFoundError(f"no model.onnx (or onnx/model.onnx) in {str(path)!r}")
        if not (path / "tokenizer.json").exists():
            raise FileNotFoundError(f"no tokenizer.json in {str(path)!r} (the Hugging Face tokenizer file)")
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ImportError("the onnx reranker needs the tokenizers package: pip install 'chaja[rerank]'") from exc
        import onnxruntime as ort

        self.name = f"onnx:{path.resolve().name}"
        self.batch_size = max(1, int(batch_size))
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.max_length = min(int(max_length), _model_max_length(path))
        self.tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        pad_token = _pad_token(path)
        pad_id = self.tokenizer.token_to_id(pad_token) if pad_token else None
        self.tokenizer.enable_padding(pad_id=pad_id or 0, pad_token=pad_token or "[PAD]")
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = max(0, int(threads))
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= self.inputs:
            raise RuntimeError(f"{model} takes {sorted(self.inputs)}; a cross-encoder takes input_ids and attention_mask")

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        out: list[np.ndarray] = []
        for at in range(0, len(passages), self.batch_size):
            batch = self.tokenizer.encode_batch([(query, p) for p in passages[at:at + self.batch_size]])
            feed = {"input_ids": np.array([e.ids for e in batch], dtype=np.int64),
                    "attention_mask": np.array([e.attention_mask for e in batch], dtype=np.int64)}
            if "token_type_ids" in self.inputs:
                feed["token_type_ids"] = np.array([e.type_ids for e in batch], dtype=np.int64)
            out.append(_relevance(self.session.run(None, feed)[0]))
        return check_scores(np.concatenate(out) if out else np.zeros(0), len(passages), self.name)


class SentenceTransformersCrossEncoder:
    """Any cross-encoder folder that sentence-transformers' ``CrossEncoder`` loads, on the CPU."""

    def __init__(self, folder: str | Path, *, max_length: int = 512, batch_size: int = 16):
        path = _folder(folder)
        try:
            import torch
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise ImportError("the sentence-transformers reranker needs sentence-transformers: "
                              "pip install 'chaja[rerank-st]'") from exc
        self.name = f"sentence-transformers:{path.resolve().name}"
        self.batch_size = max(1, int(batch_size))
        self.model = CrossEncoder(str(path), device="cpu", max_length=int(max_length))
        self._identity = torch.nn.Identity()

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        if not passages:
            return np.zeros(0)
        logits = self.model.predict([(query, p) for p in passages], batch_size=self.batch_size,
                                    activation_fn=self._identity, show_progress_bar=False)
        return check_scores(_relevance(np.asarray(logits)), len(passages), self.name)


def _tokenizer_config(path: Path) -> dict:
    try:
        return json.loads((path / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _model_max_length(path: Path) -> int:
    """The longest input the model takes: tokenizer_config's model_max_length, else
    config.json's max_position_embeddings, else no limit of its own."""
    value = _tokenizer_config(path).get("model_max_length")
    if isinstance(value, int) and 0 < value < 1_000_000:
        return value
    try:
        value = json.loads((path / "config.json").read_text(encoding="utf-8")).get("max_position_embeddings")
    except (OSError, ValueError):
        value = None
    return value if isinstance(value, int) and value > 0 else 1_000_000


def _pad_token(path: Path) -> str | None:
    token = _tokenizer_config(path).get("pad_token")
    if isinstance(token, dict):
        token = token.get("content")
    return token if isinstance(token, str) else None
