"""Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009).

    RRF(d) = Σ_m w_m / (k + r_m(d))

where r_m(d) is d's 1-based rank in list m (absent lists add nothing), k = 20 in
chaja's production setup (60 in the original paper), and w_m = 1 unless a list
is given a weight. Only ranks are used, so scores on different scales (BM25,
cosine) never need to be made comparable.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from chaja.documents import Hit


def ranks(hits: Sequence[Hit]) -> dict[str, int]:
    """chunk id → 1-based rank (the first occurrence wins)."""
    out: dict[str, int] = {}
    for i, h in enumerate(hits, 1):
        out.setdefault(h.chunk_id, i)
    return out


def rrf(lists: Mapping[str, Sequence[Hit]], k: float = 20.0,
        weights: Mapping[str, float] | None = None) -> list[tuple[str, float]]:
    """Fuse ranked lists; returns (chunk id, score) best first.

    Ties are broken by the best single rank, then by chunk id, so the order is
    deterministic.
    """
    if k < 0:
        raise ValueError("RRF k must be non-negative")
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    for name, hits in lists.items():
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        for cid, r in ranks(hits).items():
            scores[cid] = scores.get(cid, 0.0) + w / (k + r)
            best[cid] = min(best.get(cid, r), r)
    return sorted(scores.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))
