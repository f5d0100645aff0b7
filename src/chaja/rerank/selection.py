"""Reranker scores mapped to [0, 1], and the prefix of results a search selects.

Mapping (Platt scaling: J. Platt, "Probabilistic outputs for support vector machines",
1999): a reranker's raw score s becomes

    p(s) = 1 / (1 + exp(-(a·s + b)))

with a = ``rerank.scale`` and b = ``rerank.shift`` fit on a development split by
:func:`fit_platt` (``chaja eval calibrate``), so that p is the probability that the
candidate is useful (the gold page, or graded 2–3). The mapping is monotone, so it
never changes the order, only where the selected prefix ends.

Selected prefix (the reranker evaluation's 3–20-item prefix): the leading results
whose mapped score reaches ``rerank.threshold``, but at least ``rerank.min_k`` and at
most ``rerank.max_k`` (and never more than there are results):

    selected = min(len, max_k, max(min_k, #{leading i : p_i ≥ threshold}))

Counting stops at the first result below the threshold, so the prefix is always the
top of the ranking.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def mapped(score: float, scale: float, shift: float) -> float:
    x = scale * float(score) + shift
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def selected_count(probabilities: Sequence[float], threshold: float, min_k: int, max_k: int) -> int:
    """How many leading results the search selects (formula in the module docstring)."""
    if min_k > max_k:
        raise ValueError(f"rerank.min_k ({min_k}) is larger than rerank.max_k ({max_k})")
    leading = 0
    for p in probabilities:
        if p < threshold:
            break
        leading += 1
    return min(len(probabilities), max_k, max(min_k, leading))


def prefix_length(probabilities: Sequence[float], cfg) -> int:
    """:func:`selected_count` with a :class:`~chaja.config.RerankConfig`'s threshold, min_k and max_k."""
    return selected_count(probabilities, cfg.threshold, cfg.min_k, cfg.max_k)


def fit_platt(scores: Sequence[float], labels: Sequence[int], iterations: int = 100) -> tuple[float, float]:
    """(a, b) minimising the log loss of p(s) = σ(a·s + b) against ``labels`` (1 = useful),
    with Platt's smoothed targets (N₊ + 1)/(N₊ + 2) and 1/(N₋ + 2), by Newton's method."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if s.shape != y.shape or s.size == 0:
        raise ValueError("fit_platt needs as many labels as scores, and at least one")
    pos, neg = float(y.sum()), float(y.size - y.sum())
    if pos == 0 or neg == 0:
        raise ValueError("fit_platt needs useful and not useful examples (one kind is missing)")
    t = np.where(y > 0, (pos + 1) / (pos + 2), 1 / (neg + 2))
    a, b = 0.0, math.log((pos + 1) / (neg + 1))
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-(a * s + b)))
        w = np.maximum(p * (1 - p), 1e-12)
        g = np.array([np.sum((p - t) * s), np.sum(p - t)])
        h = np.array([[np.sum(w * s * s), np.sum(w * s)], [np.sum(w * s), np.sum(w)]]) + 1e-9 * np.eye(2)
        step = np.linalg.solve(h, g)
        a, b = a - step[0], b - step[1]
        if np.max(np.abs(step)) < 1e-10:
            break
    return float(a), float(b)
