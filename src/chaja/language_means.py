"""Cross-language vector search: remove what the embedding says about language.

multilingual-e5 places a text near texts of its own language: a Korean question
scores Korean pages on a neighbouring topic above the English page it asks for.
The language signal is estimated from the store itself, as the mean chunk
vector μ_l of each language l (recorded at index time, so results reproduce).

Projection. With B an orthonormal basis of span{μ_l − μ̄} (one direction for two
languages), the query is projected off that subspace,

    q' = q − Bᵀ(B q),

and scored against the stored vectors: q'·v = (Pq)·(Pv) because P = I − BᵀB is
symmetric and idempotent, so projecting the query alone removes the language
direction from both sides, and any store can search with q' unchanged.

Centring. Scoring v − μ_l instead of v shifts every chunk of language l by the
constant −q'·μ_l, so a language-fair list is the merge of per-language lists by
``score − q'·μ_l``.
"""
from __future__ import annotations

import json

import numpy as np

META_KEY = "index.language_means"
MIN_CHUNKS = 20   # a language with fewer chunks does not get a mean of its own


def encode_means(means: dict[str, tuple[int, np.ndarray]]) -> str:
    return json.dumps({lang: {"count": n, "mean": [round(float(x), 7) for x in m]}
                       for lang, (n, m) in sorted(means.items())})


def decode_means(text: str | None, min_chunks: int = MIN_CHUNKS) -> dict[str, np.ndarray]:
    if not text:
        return {}
    data = json.loads(text)
    return {lang: np.asarray(v["mean"], dtype=np.float32) for lang, v in data.items()
            if v["count"] >= min_chunks and lang}


def language_basis(means: dict[str, np.ndarray]) -> np.ndarray:
    """Orthonormal rows spanning the differences between language means (L − 1 rows)."""
    if len(means) < 2:
        return np.zeros((0, 0), dtype=np.float32)
    m = np.stack([means[k] for k in sorted(means)])
    diffs = m - m.mean(axis=0, keepdims=True)
    u, s, vt = np.linalg.svd(diffs, full_matrices=False)
    keep = s > 1e-6 * max(s.max(), 1e-12)
    return vt[keep][: len(means) - 1].astype(np.float32)


def store_basis(meta_value: str | None) -> np.ndarray:
    """The language basis a store's recorded means give (empty for one language)."""
    return language_basis(decode_means(meta_value))


def project_rows_in_place(mat: np.ndarray, basis: np.ndarray, block: int = 65_536) -> np.ndarray:
    """``mat ← mat − (mat Bᵀ) B``, a block of rows at a time (no second matrix in memory)."""
    if basis.size:
        for start in range(0, mat.shape[0], block):
            rows = mat[start:start + block]
            rows -= (rows @ basis.T) @ basis
    return mat


def project_out(q: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """q − Bᵀ(B q): the query without its component in the language subspace."""
    if basis.size == 0:
        return q
    return (q - basis.T @ (basis @ q)).astype(np.float32)
