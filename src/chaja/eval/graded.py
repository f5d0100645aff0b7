"""Graded-pool scoring (the reranker evaluation's method).

Each question has a pool of judged documents with grades 0–3; grade >= 2 is
*useful*. R = useful documents in the pool; the question is *answerable* when
R > 0. A ranking is the system's order (ties broken by candidate order: see
:func:`rank_candidates`). Unjudged documents score as grade 0.

Abstentions (``"abstain"``: the judge declined to grade the pair): at cutoff k,
abstained documents among the top k are omitted *without backfill*, leaving m
retained positions. If m = 0 the question is left out at that cutoff.

With g_i the grades of the retained documents in order (reindexed 1..m):

    Hit@k       = 1[some g_i >= 2]
    P@k         = #{i : g_i >= 2} / m                  (precision over retained positions)
    Recall@k    = #{i : g_i >= 2} / R                  (answerable questions)
    DCG@k       = sum_{i=1..m} (2^{g_i} - 1) / log2(i + 1)
    IDCG@k      = the same over the pool's judged grades sorted high to low, first k
    nDCG@k      = DCG@k / IDCG@k                       (0 when IDCG@k = 0)

Views: *answerable* (R > 0; all four metrics) and *all* questions (Hit, P and
nDCG; Recall is undefined without useful documents). Each view's value at k is
the mean over the questions kept at k; ``n@k`` says how many.

Selected-prefix precision: precision over the retained positions of the prefix
the system chose to show (the whole ranking unless a length is given).

Cutoffs: 1, 3, 5, 10, 20, 50.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from chaja.eval.questions import ABSTAIN, USEFUL_GRADE
from chaja.eval import random_order
from chaja.rerank.base import rerank_order

CUTOFFS = (1, 3, 5, 10, 20, 50)
Judgments = Mapping[str, "int | str"]


def gain(grade: int) -> float:
    return float(2 ** grade - 1)


def rank_candidates(candidates: Sequence[str], scores: Sequence[float]) -> list[str]:
    """Candidates by descending score; equal scores keep candidate order (stable sort)."""
    if len(candidates) != len(scores):
        raise ValueError("candidates and scores differ in length")
    return [candidates[i] for i in rerank_order(scores)]


def pool_grades(judgments: Judgments) -> list[int]:
    return [int(g) for g in judgments.values() if g != ABSTAIN]


def useful_count(judgments: Judgments, useful: int = USEFUL_GRADE) -> int:
    return sum(1 for g in pool_grades(judgments) if g >= useful)


def ideal_dcg(judgments: Judgments, k: int) -> float:
    grades = sorted(pool_grades(judgments), reverse=True)[:k]
    return math.fsum(gain(g) / math.log2(i + 1) for i, g in enumerate(grades, 1))


def retained_grades(ranking: Sequence[str], judgments: Judgments, k: int | None) -> list[int]:
    """Grades of the top-k documents with abstained ones omitted (no backfill)."""
    top = ranking if k is None else ranking[:k]
    out = []
    for doc in top:
        g = judgments.get(doc, 0)
        if g != ABSTAIN:
            out.append(int(g))
    return out


@dataclass(frozen=True)
class CutoffScores:
    hit: float
    precision: float
    recall: float | None     # None when R = 0
    ndcg: float
    retained: int


def score_at(ranking: Sequence[str], judgments: Judgments, k: int,
             useful: int = USEFUL_GRADE) -> CutoffScores | None:
    """Metrics of one question at cutoff k; None when no position survives the omission."""
    grades = retained_grades(ranking, judgments, k)
    if not grades:
        return None
    hits = sum(1 for g in grades if g >= useful)
    r = useful_count(judgments, useful)
    dcg = math.fsum(gain(g) / math.log2(i + 1) for i, g in enumerate(grades, 1))
    idcg = ideal_dcg(judgments, k)
    return CutoffScores(
        hit=float(hits > 0),
        precision=hits / len(grades),
        recall=hits / r if r else None,
        ndcg=dcg / idcg if idcg > 0 else 0.0,
        retained=len(grades),
    )


def selected_prefix_precision(ranking: Sequence[str], judgments: Judgments, selected: int | None = None,
                              useful: int = USEFUL_GRADE) -> float | None:
    grades = retained_grades(ranking, judgments, selected)
    if not grades:
        return None
    return sum(1 for g in grades if g >= useful) / len(grades)


def question_scores(ranking: Sequence[str], judgments: Judgments, cutoffs: Sequence[int] = CUTOFFS,
                    selected: int | None = None, useful: int = USEFUL_GRADE) -> dict:
    """Everything about one question, as plain data (JSON-ready)."""
    per_k = {}
    for k in cutoffs:
        s = score_at(ranking, judgments, k, useful)
        per_k[str(k)] = None if s is None else {
            "hit": s.hit, "precision": s.precision, "recall": s.recall, "ndcg": s.ndcg, "retained": s.retained}
    return {
        "useful": useful_count(judgments, useful),
        "pool": len(pool_grades(judgments)),
        "at": per_k,
        "selected_precision": selected_prefix_precision(ranking, judgments, selected, useful),
    }


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def summarize_graded(per_question: Sequence[dict], pools: Sequence[Judgments],
                     cutoffs: Sequence[int] = CUTOFFS, useful: int = USEFUL_GRADE) -> dict:
    """Answerable and all-question views, the random-order reference and selected-prefix precision.

    ``per_question`` holds :func:`question_scores` results; ``pools`` the matching judgments.
    """
    answerable = [i for i, q in enumerate(per_question) if q["useful"] > 0]
    views: dict[str, dict] = {}
    for view, members in (("answerable", answerable), ("all", list(range(len(per_question))))):
        out: dict[str, float | int | None] = {}
        for k in cutoffs:
            rows = [per_question[i]["at"][str(k)] for i in members]
            rows = [r for r in rows if r is not None]
            out[f"n@{k}"] = len(rows)
            out[f"Hit@{k}"] = _mean([r["hit"] for r in rows])
            out[f"P@{k}"] = _mean([r["precision"] for r in rows])
            if view == "answerable":
                out[f"Recall@{k}"] = _mean([r["recall"] for r in rows])
            out[f"nDCG@{k}"] = _mean([r["ndcg"] for r in rows])
        sel = [per_question[i]["selected_precision"] for i in members]
        sel = [s for s in sel if s is not None]
        out["selected_prefix_precision"] = _mean(sel)
        out["n_selected"] = len(sel)
        views[view] = {"questions": len(members), **out}
    views["random"] = random_order.reference([pools[i] for i in answerable], cutoffs, useful)
    return {"questions": len(per_question), "answerable_questions": len(answerable), "cutoffs": list(cutoffs),
            **views}
