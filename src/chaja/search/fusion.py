"""Fusion of ranked lists.

Reciprocal Rank Fusion (Cormack, Clarke & Büttcher, SIGIR 2009), the default:

    RRF(d) = Σ_m w_m / (k + r_m(d))

where r_m(d) is d's 1-based rank in list m (absent lists add nothing), k = 20 in
chaja's production setup (60 in the original paper), and w_m = 1 unless a list
is given a weight. Only ranks are used, so scores on different scales (BM25,
cosine) never need to be made comparable.

Convex combination of min-max normalised scores (Bruch, Gai & Ingber, "An
Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023):

    CC(d) = Σ_m w_m · (s_m(d) − min_m) / (max_m − min_m)

over each list's candidates (a chunk absent from list m gets 0 from it). It keeps
how far apart the scores are, which rank fusion throws away.
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


def minmax(hits: Sequence[Hit]) -> dict[str, float]:
    """chunk id → score scaled to [0, 1] within its list (all 1.0 when the scores are equal)."""
    if not hits:
        return {}
    scores = [h.score for h in hits]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    out: dict[str, float] = {}
    for h in hits:
        out.setdefault(h.chunk_id, (h.score - lo) / span if span > 0 else 1.0)
    return out


def zscore(hits: Sequence[Hit]) -> dict[str, float]:
    """chunk id → (score − mean) / std within its list, floored at 0 (absent chunks get 0):
    a list with one clear winner gives it a high value, a flat list gives nobody much."""
    if not hits:
        return {}
    scores = [h.score for h in hits]
    mean = sum(scores) / len(scores)
    std = (sum((x - mean) ** 2 for x in scores) / len(scores)) ** 0.5
    out: dict[str, float] = {}
    for h in hits:
        out.setdefault(h.chunk_id, max(0.0, (h.score - mean) / std) if std > 0 else 0.0)
    return out


NORMALIZERS = {"minmax": minmax, "zscore": zscore}


def convex(lists: Mapping[str, Sequence[Hit]], weights: Mapping[str, float] | None = None,
           normalization: str = "minmax") -> list[tuple[str, float]]:
    """Weighted sum of normalised scores; best first, ties by best rank then id."""
    try:
        norm = NORMALIZERS[normalization]
    except KeyError:
        raise ValueError(f"normalization must be one of {sorted(NORMALIZERS)}, not {normalization!r}") from None
    scores: dict[str, float] = {}
    best: dict[str, int] = {}
    for name, hits in lists.items():
        w = 1.0 if weights is None else float(weights.get(name, 1.0))
        for cid, x in norm(hits).items():
            scores[cid] = scores.get(cid, 0.0) + w * x
        for cid, r in ranks(hits).items():
            best[cid] = min(best.get(cid, r), r)
    return sorted(scores.items(), key=lambda kv: (-kv[1], best[kv[0]], kv[0]))
