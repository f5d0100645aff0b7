"""The reranker evaluation's tables for any run, from its records alone (``chaja eval pools``).

A run's recorded documents (``chaja eval run --depth 50``) are its candidate pool, as
the reranker evaluation's fixed pools of 50 are. Within that pool each document has a
grade: a graded question's own grade (unjudged = 0, abstentions kept and omitted
without backfill), or for a single-gold question 3 for a gold page and 0 for any
other. :func:`chaja.eval.graded.summarize_graded` then gives the tables:

* fixed-depth Hit@1/3/5/10/20/50 and nDCG@10 (gain 2^g − 1, log₂ discount), on the
  *answerable* pools (a useful document among the candidates) and on *all* queries;
* selected-prefix precision: precision over the prefix the run selected (a reranked
  run's ``selected``; the whole list otherwise);
* the exact random-order reference within each pool, Hit@k = 1 − C(N−R, k)/C(N, k).

Answerable-pool Hit@N is 1 by construction; what a reranker changes is the top.
"""
from __future__ import annotations

from pathlib import Path

from chaja.eval import graded as graded_mod
from chaja.eval.report import read_records

ROWS = ("Hit@1", "Hit@3", "Hit@5", "Hit@10", "Hit@20", "Hit@50", "nDCG@10", "selected_prefix_precision")


def pool_judgments(rec: dict) -> dict:
    """Each recorded document's grade, within the recorded pool."""
    ranked = rec.get("ranked") or []
    judgments = rec.get("judgments")
    if judgments is not None:
        return {d: judgments.get(d, 0) for d in ranked}
    gold = set(rec.get("gold") or [])
    return {d: 3 if d in gold else 0 for d in ranked}


def _pool_rows(run_dir: str | Path) -> tuple[dict, list[tuple[str, dict, dict]]]:
    """(run description, [(question id, pool scores, pool)]) of every question with a pool."""
    meta, records = read_records(run_dir)
    out = []
    for rec in records:
        if not rec.get("gold") and rec.get("judgments") is None:
            continue                                    # unanswerable by construction: no metric
        pool = pool_judgments(rec)
        if not pool:
            continue
        ranked = [] if rec.get("abstained") else list(rec["ranked"])
        out.append((rec["id"], graded_mod.question_scores(ranked, pool, selected=rec.get("selected")), pool))
    return meta, out


#: what ``chaja eval compare --pools`` pairs, question by question (answerable pools)
PAIRED = ("Hit@1", "Hit@3", "Hit@5", "Hit@10", "Hit@20", "Hit@50", "nDCG@10", "selected_prefix_precision")


def pool_question_metrics(run_dir: str | Path) -> dict[str, dict[str, float]]:
    """Question id → :data:`PAIRED` metric → value, for the answerable pools of a run."""
    _, rows = _pool_rows(run_dir)
    out = {}
    for qid, scores, _ in rows:
        if scores["useful"] == 0:
            continue
        m = {}
        for k in (1, 3, 5, 10, 20, 50):
            at = scores["at"][str(k)]
            if at is not None:
                m[f"Hit@{k}"] = at["hit"]
        if scores["at"]["10"] is not None:
            m["nDCG@10"] = scores["at"]["10"]["ndcg"]
        if scores["selected_precision"] is not None:
            m["selected_prefix_precision"] = scores["selected_precision"]
        out[qid] = m
    return out


def pool_summary(run_dir: str | Path) -> dict:
    meta, found = _pool_rows(run_dir)
    rows = [scores for _, scores, _ in found]
    pools = [pool for _, _, pool in found]
    if not rows:
        raise ValueError(f"{run_dir}: no question with a recorded pool and a gold page or grades")
    out = graded_mod.summarize_graded(rows, pools)
    out["name"] = meta.get("name") or Path(run_dir).name
    out["reranker"] = ((meta.get("config") or {}).get("search") or {}).get("reranker", "none")
    out["depth"] = max(len(p) for p in pools)
    return out


def _cell(value) -> str:
    return "—" if value is None else f"{100 * value:.2f}%" if isinstance(value, float) else str(value)


def format_pools(summaries: list[dict], view: str = "answerable") -> str:
    """A Markdown table: one row per metric, one column per run, then the random reference."""
    head = [s["name"] for s in summaries] + ["random order"]
    n = [str(s[view]["questions"]) for s in summaries] + [str(summaries[0]["random"]["questions"])]
    lines = [f"{view} pools (recorded candidates, depth {summaries[0]['depth']})", "",
             "| metric | " + " | ".join(head) + " |", "|---|" + "---:|" * len(head),
             "| queries | " + " | ".join(n) + " |"]
    for row in ROWS:
        cells = [s[view].get(row) for s in summaries]
        key = "P@1" if row == "selected_prefix_precision" else row        # random precision is R/N at any k
        ref = summaries[0]["random"].get(key) if view == "answerable" else None
        if row == "nDCG@10":
            text = [("—" if c is None else f"{c:.4f}") for c in cells] + ["—" if ref is None else f"{ref:.4f}"]
        else:
            text = [_cell(c) for c in cells] + [_cell(ref)]
        label = "Selected-prefix precision" if row == "selected_prefix_precision" else row
        lines.append(f"| {label} | " + " | ".join(text) + " |")
    return "\n".join(lines)
