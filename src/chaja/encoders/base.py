"""The encoder interface: text → L2-normalised float32 vectors.

An encoder owns its model's conventions: multilingual-e5 expects the prefixes
``"query: "`` and ``"passage: "``, so callers pass plain text to
:meth:`Encoder.encode_queries` and :meth:`Encoder.encode_passages`.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Encoder(Protocol):
    #: identifies model and weights; a store remembers it and refuses a different one
    name: str
    dim: int

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32, rows L2-normalised."""
        ...

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        """(n, dim) float32, rows L2-normalised."""
        ...


def l2_normalize(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    norms[norms == 0] = 1.0
    return x / norms


def model_of(encoder_name: str) -> str:
    """The model part of an encoder name (``model@backend``): backends of one model agree."""
    return encoder_name.split("@", 1)[0]
