"""Single-gold scoring (production evaluation): each question has one gold document.

The top ten chunks are grouped into documents in order of first appearance
(:func:`documents_from_chunks`) and the gold document's rank r (1-based; none
when it is absent) is scored:

    R@k      = 1[0 < r <= k]                 (k = 1, 3, 5)
    MRR      = 1 / r
    nDCG@10  = 1 / log2(r + 1)               (r <= 10)

A missed question scores 0 on each. With one gold document the ideal DCG is 1,
so nDCG@10 reduces to the discount of the gold rank. Means are taken over the
questions: metric = (1/|Q|) sum_q metric(q).

When a question lists several gold documents, r is the rank of the best ranked
of them (any gold document answers it). :func:`all_gold_scores` gives the usual
multi-relevant binary-gain nDCG@10 and recall@10 as well, for comparing with
published numbers on sets such as SciFact.
"""
from __future__ import annotations

import math
from typing import Iterable, Sequence

CHUNK_DEPTH = 10
METRICS = ("nDCG@10", "R@1", "R@3", "R@5", "MRR")


def documents_from_chunks(chunk_doc_ids: Iterable[str], depth: int = CHUNK_DEPTH) -> list[str]:
    """Document ids of the first ``depth`` chunks, in order of first appearance."""
    out: dict[str, None] = {}
    for i, doc in enumerate(chunk_doc_ids):
        if i >= depth:
            break
        out.setdefault(doc, None)
    return list(out)


def gold_rank(ranked: Sequence[str], gold: Iterable[str]) -> int | None:
    """1-based rank of the best ranked gold document, or None."""
    gold = set(gold)
    for i, doc in enumerate(ranked, 1):
        if doc in gold:
            return i
    return None


def single_scores(rank: int | None) -> dict[str, float]:
    if rank is None:
        return {m: 0.0 for m in METRICS}
    if rank < 1:
        raise ValueError(f"rank must be >= 1, got {rank}")
    return {
        "nDCG@10": 1.0 / math.log2(rank + 1) if rank <= 10 else 0.0,
        "R@1": float(rank <= 1),
        "R@3": float(rank <= 3),
        "R@5": float(rank <= 5),
        "MRR": 1.0 / rank,
    }


def all_gold_scores(ranked: Sequence[str], gold: Iterable[str], k: int = 10) -> dict[str, float]:
    """Binary-gain nDCG@k and recall@k over every gold document.

    DCG = sum_{i<=k, d_i in G} 1/log2(i+1); IDCG = sum_{i<=min(k,|G|)} 1/log2(i+1);
    recall@k = |G ∩ top k| / |G|.
    """
    gold = set(gold)
    if not gold:
        raise ValueError("no gold documents")
    top = ranked[:k]
    dcg = sum(1.0 / math.log2(i + 1) for i, d in enumerate(top, 1) if d in gold)
    idcg = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(gold)) + 1))
    return {f"nDCG@{k}": dcg / idcg, f"recall@{k}": len(gold.intersection(top)) / len(gold)}


def mean_scores(rows: Sequence[dict[str, float]], metrics: Sequence[str] = METRICS) -> dict[str, float | None]:
    """Plain mean per metric (math.fsum, so the order of questions does not matter); None if no rows."""
    if not rows:
        return {m: None for m in metrics}
    return {m: math.fsum(r[m] for r in rows) / len(rows) for m in metrics}
