"""Exact random-order reference for graded pools (reranker evaluation).

If a pool of N judged documents, R of them useful, is put in uniformly random
order, then at cutoff k (with k' = min(k, N)):

    E[P@k]       = R / N
    Hit@k        = 1 - C(N - R, k') / C(N, k')       (probability of a useful one in the top k')
    E[Recall@k]  = k' / N
    E[nDCG@k]    = (mean gain of the pool) * sum_{i=1..k'} 1/log2(i+1) / IDCG@k

Each position holds any pool member with probability 1/N, which gives the
precision, recall and DCG expectations; the Hit formula counts the top-k sets
with no useful member. The pool is the question's judged, non-abstained
documents; the reference is averaged over answerable pools (R > 0).
"""
from __future__ import annotations

import math
from typing import Mapping, Sequence

from chaja.eval.questions import ABSTAIN, USEFUL_GRADE


def _grades(pool: Mapping[str, "int | str"]) -> list[int]:
    return [int(g) for g in pool.values() if g != ABSTAIN]


def random_hit(n: int, r: int, k: int) -> float:
    if n <= 0:
        raise ValueError("empty pool")
    k = min(k, n)
    return 1.0 - math.comb(n - r, k) / math.comb(n, k)


def random_precision(n: int, r: int) -> float:
    if n <= 0:
        raise ValueError("empty pool")
    return r / n


def random_recall(n: int, k: int) -> float:
    if n <= 0:
        raise ValueError("empty pool")
    return min(k, n) / n


def random_ndcg(grades: Sequence[int], k: int) -> float:
    n = len(grades)
    if n == 0:
        raise ValueError("empty pool")
    gains = [2.0 ** g - 1 for g in grades]
    ideal = sorted(gains, reverse=True)[:k]
    idcg = math.fsum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    if idcg == 0:
        return 0.0
    discounts = math.fsum(1.0 / math.log2(i + 1) for i in range(1, min(k, n) + 1))
    return math.fsum(gains) / n * discounts / idcg


def reference(pools: Sequence[Mapping[str, "int | str"]], cutoffs: Sequence[int],
              useful: int = USEFUL_GRADE) -> dict:
    """Mean random-order metrics over the answerable pools given."""
    rows = []
    for pool in pools:
        grades = _grades(pool)
        n, r = len(grades), sum(1 for g in grades if g >= useful)
        if n and r:
            rows.append((grades, n, r))
    out: dict[str, float | int | None] = {"questions": len(rows)}
    for k in cutoffs:
        def mean(values):
            return math.fsum(values) / len(values) if values else None
        out[f"Hit@{k}"] = mean([random_hit(n, r, k) for _, n, r in rows])
        out[f"P@{k}"] = mean([random_precision(n, r) for _, n, r in rows])
        out[f"Recall@{k}"] = mean([random_recall(n, k) for _, n, _ in rows])
        out[f"nDCG@{k}"] = mean([random_ndcg(g, k) for g, _, _ in rows])
    return out
