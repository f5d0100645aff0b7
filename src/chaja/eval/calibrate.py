"""Fit the reranker's score mapping on a development run (``chaja eval calibrate``), or
with ``--fused`` the mapping of hybrid search's fused scores to a probability of being
relevant (``search.relevance_scale``, ``relevance_gap``, ``relevance_shift``:
:mod:`chaja.search.relevance`, fit by :func:`fit_fused`).

Every document a reranked run reranked is one example: its raw reranker score and
whether it is useful (a gold page, or graded 2–3; graded-pool questions count an
unjudged document as not useful, as their metrics do). :func:`fit` fits Platt's
p(s) = σ(a·s + b) (:func:`chaja.rerank.selection.fit_platt`) and reports the log loss
and Brier score of the mapping before (the configured a, b) and after, so the fit can
be checked on a held-out run with the same function.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from chaja.eval.pools import pool_judgments
from chaja.eval.questions import ABSTAIN, USEFUL_GRADE
from chaja.eval.report import read_records
from chaja.rerank.selection import fit_platt, mapped


def examples(run_dir: str | Path) -> tuple[list[float], list[int]]:
    """(raw scores, useful labels) of every reranked document in the run's records."""
    _, records = read_records(run_dir)
    scores: list[float] = []
    labels: list[int] = []
    for rec in records:
        grades = pool_judgments(rec)
        for d in rec.get("documents") or []:
            g = grades.get(d["doc_id"], 0)
            if d.get("rerank") is None or g == ABSTAIN:
                continue
            scores.append(float(d["rerank"]))
            labels.append(int(int(g) >= USEFUL_GRADE))
    if not scores:
        raise ValueError(f"{run_dir}: no reranked documents in its records (run it with a search.reranker)")
    return scores, labels


def fused_examples(run_dir: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """Features (fused score s, s − the search's best s₁) and useful labels of every document
    in a hybrid run's records (an unanswerable question's documents are all not useful)."""
    _, records = read_records(run_dir)
    rows: list[tuple[float, float]] = []
    labels: list[int] = []
    for rec in records:
        docs = rec.get("documents") or []
        grades = pool_judgments(rec)
        for d in docs:
            g = grades.get(d["doc_id"], 0)
            if g == ABSTAIN:
                continue
            rows.append((float(d["score"]), float(d["score"]) - float(docs[0]["score"])))
            labels.append(int(int(g) >= USEFUL_GRADE))
    if not rows:
        raise ValueError(f"{run_dir}: no documents in its records")
    return np.array(rows), np.array(labels, dtype=np.float64)


def fit_logistic(x: np.ndarray, y: np.ndarray, ridge: float = 1e-3, iterations: int = 50) -> np.ndarray:
    """Weights w (one per column of ``x``, then the intercept) minimising the log loss of
    p = σ(x·w[:-1] + w[-1]) plus ``ridge``·|w|²/2, by Newton's method."""
    xb = np.hstack([x, np.ones((x.shape[0], 1))])
    w = np.zeros(xb.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(xb @ w, -500, 500)))
        step = np.linalg.solve((xb * (p * (1 - p))[:, None]).T @ xb + ridge * np.eye(w.size), xb.T @ (p - y) + ridge * w)
        w -= step
        if np.abs(step).max() < 1e-10:
            break
    return w


def fused_losses(x: np.ndarray, y: np.ndarray, scale: float, gap: float, shift: float) -> dict[str, float]:
    """Mean log loss and Brier score of p = σ(scale·s + gap·(s − s₁) + shift)."""
    p = 1.0 / (1.0 + np.exp(-np.clip(scale * x[:, 0] + gap * x[:, 1] + shift, -500, 500)))
    p = np.clip(p, 1e-12, 1 - 1e-12)
    return {"log_loss": float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))), "brier": float(np.mean((p - y) ** 2))}


def fit_fused(run_dir: str | Path, scale: float, gap: float, shift: float) -> dict:
    """``search.relevance_scale``, ``relevance_gap`` and ``relevance_shift`` fit on a hybrid run,
    with the losses of the configured and the fitted mapping."""
    x, y = fused_examples(run_dir)
    a, c, b = fit_logistic(x, y).tolist()
    return {"examples": int(y.size), "useful": int(y.sum()), "scale": a, "gap": c, "shift": b,
            "before": fused_losses(x, y, scale, gap, shift), "after": fused_losses(x, y, a, c, b)}


def losses(scores: list[float], labels: list[int], scale: float, shift: float) -> dict[str, float]:
    """Mean log loss and Brier score of the mapping p = σ(scale·s + shift)."""
    eps = 1e-12
    ps = [mapped(s, scale, shift) for s in scores]
    log_loss = -math.fsum(y * math.log(max(p, eps)) + (1 - y) * math.log(max(1 - p, eps))
                          for p, y in zip(ps, labels)) / len(ps)
    brier = math.fsum((p - y) ** 2 for p, y in zip(ps, labels)) / len(ps)
    return {"log_loss": log_loss, "brier": brier}


def fit(run_dir: str | Path, scale: float = 1.0, shift: float = 0.0) -> dict:
    scores, labels = examples(run_dir)
    a, b = fit_platt(scores, labels)
    return {"examples": len(scores), "useful": sum(labels), "scale": a, "shift": b,
            "before": losses(scores, labels, scale, shift), "after": losses(scores, labels, a, b)}
