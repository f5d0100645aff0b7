"""The query memo: an encoder that encodes each distinct question once, so every cell
of a sweep searches with the same vectors at no further encoding cost."""
from __future__ import annotations

import time
from typing import Any, Sequence, TextIO

import numpy as np


class QueryMemo:
    """An encoder whose :meth:`encode_queries` computes each distinct text once.

    Each missing text is encoded alone (``[text]``), exactly as the searcher asks
    for it, so a cached vector equals the one an uncached search would get; a copy
    is returned every time. Everything else is delegated to the wrapped encoder.
    """

    def __init__(self, encoder: Any):
        self.encoder = encoder
        self.cache: dict[str, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:
        if name == "encoder":                  # not set yet (e.g. during unpickling)
            raise AttributeError(name)
        return getattr(self.encoder, name)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        rows = []
        for t in texts:
            v = self.cache.get(t)
            if v is None:
                v = np.array(self.encoder.encode_queries([t])[0], dtype=np.float32)
                self.cache[t] = v
                self.misses += 1
            else:
                self.hits += 1
            rows.append(v)
        if not rows:
            return self.encoder.encode_queries([])
        return np.stack(rows)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode_passages(texts)

    def warm(self, texts: Sequence[str], stream: TextIO | None = None, every: int = 100) -> int:
        """Encode ``texts`` ahead (the searcher's cleaned form); returns how many were new."""
        from chaja.search.searcher import QueryError, check_query

        new = 0
        start = time.perf_counter()
        for i, text in enumerate(texts, 1):
            try:
                key = check_query(text)
            except QueryError:
                continue
            if key not in self.cache:
                self.encode_queries([key])
                new += 1
            if stream is not None and every > 0 and (i % every == 0 or i == len(texts)):
                print(f"sweep: encoded {i}/{len(texts)} questions ({time.perf_counter() - start:.0f}s)",
                      file=stream, flush=True)
        return new
