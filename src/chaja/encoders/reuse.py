"""Reuse passage vectors that another store already holds.

Changing the analyser or any other index-time setting that leaves passage text
alone needs a new store, but not new vectors: :class:`ReusingEncoder` answers a
passage from a donor store when the donor holds a chunk with exactly the same
passage text (title, heading path and body) encoded by the same model, and
encodes only the rest. The donor's heading vectors answer heading texts the
same way.
"""
from __future__ import annotations

import numpy as np

from chaja.encoders.base import Encoder, model_of


class ReusingEncoder:
    def __init__(self, inner: Encoder, donors: list):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.reused = self.encoded = 0
        self._known: dict[str, np.ndarray] = {}
        for store in donors:
            donor_model = store.get_meta("encoder") or ""
            if model_of(donor_model) != model_of(inner.name):
                raise ValueError(f"cannot reuse vectors of {donor_model!r} for {inner.name!r}")
            mat, ids, _ = store._vectors()
            chunks = store.chunks(ids)
            for i, cid in enumerate(ids):
                if cid in chunks:
                    self._known[chunks[cid].passage_text()] = mat[i]
            # a heading is encoded as a passage of its own, so its vector answers that text
            heads, head_ids, _ = store._vectors("heading")
            for i, cid in enumerate(head_ids):
                text = chunks[cid].heading_passage() if cid in chunks else None
                if text is not None:
                    self._known.setdefault(text, heads[i])

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self.inner.encode_queries(texts)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing = [i for i, t in enumerate(texts) if t not in self._known]
        for i, t in enumerate(texts):
            if t in self._known:
                out[i] = self._known[t]
        self.reused += len(texts) - len(missing)
        self.encoded += len(missing)
        if missing:
            out[missing] = self.inner.encode_passages([texts[i] for i in missing])
        return out
