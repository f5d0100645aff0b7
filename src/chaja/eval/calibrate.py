"""Fit the reranker's score mapping on a development run (``chaja eval calibrate``).

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
