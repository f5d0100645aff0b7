"""Summaries of an evaluation run, recomputed from its records alone.

``records.jsonl`` holds one line describing the run (``{"run": {...}}``: name,
model, store fingerprint, config) and then one line per question (see
:mod:`chaja.eval.runner`). :func:`report` rebuilds ``summary.json`` from those
lines with no model, store or network, and :func:`summarize` is the one place
the summary is assembled, so both paths print the same JSON.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Iterable, Sequence

from chaja.eval import graded as graded_mod
from chaja.eval.jsonl import read_jsonl
from chaja.eval.single import METRICS, all_gold_scores, gold_rank, mean_scores, single_scores

RECORDS = "records.jsonl"
SUMMARY = "summary.json"
RUN_TREC = "run.trec"


class RecordsError(ValueError):
    pass


def read_records(out_dir: str | Path) -> tuple[dict, list[dict]]:
    """(run description, question records) from ``out_dir/records.jsonl``."""
    path = Path(out_dir) / RECORDS
    meta: dict | None = None
    records: list[dict] = []
    for lineno, obj in read_jsonl(path, RecordsError):
        if "run" in obj and meta is None and not records:
            meta = obj["run"]
            continue
        if "id" not in obj or "ranked" not in obj:
            raise RecordsError(f"{path}:{lineno}: a question record needs 'id' and 'ranked'")
        records.append(obj)
    if meta is None:
        raise RecordsError(f"{path}: the first line must describe the run ({{\"run\": ...}})")
    return meta, records


def record_gold(rec: dict) -> list[str] | None:
    """A record's gold pages: its ``gold``, else its useful (grade ≥ 2) judged documents."""
    gold = rec.get("gold")
    if gold is None and rec.get("judgments") is not None:
        gold = [d for d, g in rec["judgments"].items() if g != "abstain" and g >= 2]
    return gold


def question_row(rec: dict) -> dict:
    """Per-question scores from one record: ranks are recomputed from ``ranked``."""
    ranked = [] if rec.get("abstained") else list(rec["ranked"])
    judgments = rec.get("judgments")
    gold = record_gold(rec)
    row: dict[str, Any] = {"id": rec["id"], "kind": rec.get("kind", ""), "lang": rec.get("lang", ""),
                           "keyword_used": rec.get("keyword_used"), "abstained": bool(rec.get("abstained")),
                           "ms": rec.get("ms"), "scores": None, "all_gold": None, "graded": None,
                           "judgments": judgments,
                           "same_language": same_language_share(rec.get("documents") or [], rec.get("lang", ""),
                                                                bool(rec.get("abstained")))}
    if gold:
        row["scores"] = single_scores(gold_rank(ranked, gold))
        row["all_gold"] = all_gold_scores(ranked, gold)
    if judgments is not None:
        row["graded"] = graded_mod.question_scores(ranked, judgments, selected=rec.get("selected"))
    return row


#: the results a question's same-language share is taken over
SAME_LANGUAGE_DEPTH = 10


def same_language_share(documents: Sequence[dict], lang: str, abstained: bool = False) -> float | None:
    """The share of a search's first :data:`SAME_LANGUAGE_DEPTH` documents in the question's
    language ``lang``: how far results stay in the language asked in (hybrid against each
    list alone); None for a search that abstained or found nothing, a question without a
    language, or records written before documents carried theirs."""
    top = list(documents)[:SAME_LANGUAGE_DEPTH]
    if abstained or not lang or not top or any("lang" not in d for d in top):
        return None
    return sum(1 for d in top if d["lang"] == lang) / len(top)


def _mean_share(rows: Sequence[dict]) -> float | None:
    shares = [r["same_language"] for r in rows if r.get("same_language") is not None]
    return math.fsum(shares) / len(shares) if shares else None


def _percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile."""
    idx = max(0, math.ceil(p / 100 * len(sorted_values)) - 1)
    return sorted_values[idx]


def _group(rows: Sequence[dict], key: str) -> dict[str, dict]:
    groups: dict[str, list[dict]] = {}
    for r in rows:
        if r["scores"] is not None:
            groups.setdefault(r[key] or "", []).append(r)
    return {k: {"questions": len(v), "metrics": mean_scores([r["scores"] for r in v]),
                "same_language": _mean_share(v)} for k, v in sorted(groups.items())}


def summarize(meta: dict, rows: Sequence[dict]) -> dict:
    scored = [r for r in rows if r["scores"] is not None]
    summary: dict[str, Any] = {
        "questions": len(rows),
        "metrics": mean_scores([r["scores"] for r in scored]),
        "by_kind": _group(rows, "kind"),
        "by_lang": _group(rows, "lang"),
        "config": meta.get("config"),
        "model": meta.get("model"),
        "store": meta.get("store"),
        "name": meta.get("name"),
        "scored": len(scored),
        "all_gold": mean_scores([r["all_gold"] for r in scored], ("nDCG@10", "recall@10")),
        "same_language": _mean_share(scored),
    }
    graded_rows = [r for r in rows if r["graded"] is not None]
    if graded_rows:
        summary["graded"] = graded_mod.summarize_graded([r["graded"] for r in graded_rows],
                                                        [r["judgments"] for r in graded_rows])
    used = [r["keyword_used"] for r in rows if r["keyword_used"] is not None]
    summary["keyword_used"] = math.fsum(1.0 for u in used if u) / len(used) if used else None
    summary["abstained"] = sum(1 for r in rows if r["abstained"])
    times = sorted(float(r["ms"]) for r in rows if r["ms"] is not None)
    summary["timing_ms"] = {
        "mean": math.fsum(times) / len(times), "p50": _percentile(times, 50), "p95": _percentile(times, 95),
        "max": times[-1]} if times else None
    return summary


def dumps_summary(summary: dict) -> str:
    return json.dumps(summary, ensure_ascii=False, indent=2) + "\n"


def report(out_dir: str | Path, write: bool = False) -> dict:
    """Recompute the summary from ``records.jsonl``; write ``summary.json`` when asked."""
    meta, records = read_records(out_dir)
    summary = summarize(meta, [question_row(r) for r in records])
    if write:
        (Path(out_dir) / SUMMARY).write_text(dumps_summary(summary), encoding="utf-8")
    return summary


def question_metrics(out_dir: str | Path) -> dict[str, dict[str, float]]:
    """Question id → single-gold metric → value, for the noise test and figures."""
    _, records = read_records(out_dir)
    out = {}
    for rec in records:
        row = question_row(rec)
        if row["scores"] is not None:
            out[rec["id"]] = row["scores"]
    return out


# ---- tables ------------------------------------------------------------------

def _fmt(v: Any) -> str:
    return "-" if v is None else f"{v:.3f}"


def results_table(runs: Iterable[tuple[str, dict]]) -> str:
    """The production evaluation's Results table (plus MRR): Set, Questions, nDCG@10, R@1, R@3, R@5, MRR."""
    lines = [f"{'Set':<24}{'Questions':>10}" + "".join(f"{m:>9}" for m in METRICS)]
    for name, s in runs:
        lines.append(f"{name[:23]:<24}{s.get('scored', s['questions']):>10}"
                     + "".join(f"{_fmt(s['metrics'][m]):>9}" for m in METRICS))
    return "\n".join(lines)


def breakdown_table(summary: dict, key: str = "by_kind") -> str:
    label = "Kind" if key == "by_kind" else "Language"
    lines = [f"{label:<24}{'Questions':>10}" + "".join(f"{m:>9}" for m in METRICS)]
    for name, g in summary[key].items():
        shown = name.replace("-", " → ") if key == "by_kind" and name.count("-") == 1 else name
        lines.append(f"{shown[:23] or '(none)':<24}{g['questions']:>10}"
                     + "".join(f"{_fmt(g['metrics'][m]):>9}" for m in METRICS))
    return "\n".join(lines)


def graded_table(graded: dict) -> str:
    cut = graded["cutoffs"]
    lines = [f"graded pools: {graded['questions']} questions, {graded['answerable_questions']} answerable",
             f"{'view':<12}{'metric':<10}" + "".join(f"{'@' + str(k):>8}" for k in cut)]
    for view in ("answerable", "all", "random"):
        block = graded[view]
        for metric in ("Hit", "P", "Recall", "nDCG"):
            if f"{metric}@{cut[0]}" in block:
                lines.append(f"{view:<12}{metric:<10}" + "".join(f"{_fmt(block[f'{metric}@{k}']):>8}" for k in cut))
    sp = graded["answerable"]["selected_prefix_precision"]
    lines.append(f"selected-prefix precision (answerable): {_fmt(sp)}")
    return "\n".join(lines)


def print_summary(summary: dict, name: str | None = None) -> str:
    parts = [results_table([(name or summary.get("name") or "run", summary)]), "", breakdown_table(summary)]
    if len(summary["by_lang"]) > 1:
        parts += ["", breakdown_table(summary, "by_lang")]
    if "graded" in summary:
        parts += ["", graded_table(summary["graded"])]
    return "\n".join(parts)
