"""``chaja tune``: search settings chosen on a user's own questions, kept only where they
hold up on questions the choice never saw.

1. **Split.** Within each kind, the questions are ordered by
   ``sha256("chaja-tune:" + id)``; the first half (rounded up) is dev, the rest test.
   The split depends on the ids alone, so a rerun, or a question added later, leaves
   every other question where it was.
2. **Sweep dev** one setting at a time against the current settings
   (:mod:`chaja.eval.sweep`; the settings that cannot matter for the store are skipped).
3. **Candidates**: the cells whose nDCG@10 on dev is better beyond noise (the paired
   bootstrap's 95% interval excludes 0 and the randomization test's p < 0.05).
4. **Test**: each candidate against the current settings on test; kept when it is not
   worse beyond noise there and its mean difference is not below 0.
5. **Together**: the kept changes are run together on dev and on test; they stay
   together when that is better on dev and not worse on test, else only the change
   with the largest dev gain stays.

With ``write`` the winning settings are set in a config file
(:func:`chaja.config_files.write_settings`), where every later command finds them.
Thirty questions are few: only a large gain is beyond noise on fifteen, so with a
handful of questions tuning mostly reports that nothing beat the defaults, which is
the right answer.
"""
from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from chaja.eval.noise import compare_runs
from chaja.eval.questions import Question
from chaja.eval.report import question_metrics
from chaja.eval.runner import evaluate
from chaja.eval.sweep import sweep
from chaja.eval.sweep.settings import DEFAULT_SETTINGS, Setting

METRIC = "nDCG@10"
#: settings a tune does not sweep: the fusion method and the weights by source and age
#: change what the rest of the settings mean, or need metadata the questions do not judge
NOT_TUNED = {"search.fusion", "search.source_weights", "search.half_life_days", "search.multipart"}


def split_key(qid: str) -> str:
    return hashlib.sha256(f"chaja-tune:{qid}".encode()).hexdigest()


def split(questions: Sequence[Question]) -> tuple[list[Question], list[Question]]:
    """(dev, test): within each kind, the first half of the questions in hash order is dev."""
    dev: list[Question] = []
    test: list[Question] = []
    for kind in sorted({q.kind or "" for q in questions}):
        ordered = sorted((q for q in questions if (q.kind or "") == kind), key=lambda q: split_key(q.id))
        half = (len(ordered) + 1) // 2
        dev += ordered[:half]
        test += ordered[half:]
    return dev, test


def tuned_settings(only: Sequence[str] | None = None) -> list[Setting]:
    settings = [s for s in DEFAULT_SETTINGS if s.key not in NOT_TUNED]
    if only:
        wanted = {k if k.startswith("search.") else f"search.{k}" for k in only}
        settings = [s for s in DEFAULT_SETTINGS if s.key in wanted]
        missing = wanted - {s.key for s in settings}
        if missing:
            raise ValueError(f"chaja tune cannot sweep {', '.join(sorted(missing))}")
    return settings


def _run(index: Any, questions: Sequence[Question], out: Path, changes: dict[str, Any]) -> Path:
    """Evaluate ``questions`` with ``changes`` set on the index's search settings (restored after)."""
    search = index.config.search
    before = {k: getattr(search, k.removeprefix("search.")) for k in changes}
    try:
        for k, v in changes.items():
            setattr(search, k.removeprefix("search."), v)
        evaluate(index, questions, out, name=out.name, stream=None)
    finally:
        for k, v in before.items():
            setattr(search, k.removeprefix("search."), v)
    return out


def _compared(base: Path, cell: Path) -> dict:
    (row,) = compare_runs(question_metrics(base), question_metrics(cell), [METRIC])
    return row.to_dict()


def tune(index: Any, questions: Sequence[Question], out_dir: str | Path, *, only: Sequence[str] | None = None,
         stream: TextIO | None = sys.stderr) -> dict:
    """The steps above; returns every candidate with its dev and test comparisons, and the
    changes kept (``{"search.key": value}``, empty when nothing held up)."""
    out = Path(out_dir)
    dev, test = split(questions)
    if not dev or not test:
        raise ValueError("chaja tune needs at least two questions of a kind (one for dev, one for test)")
    if stream is not None:
        print(f"tune: {len(dev)} dev and {len(test)} test questions", file=stream, flush=True)
    swept = sweep(index, dev, out / "dev-sweep", settings=tuned_settings(only), stream=stream)
    candidates = [r for r in swept["rows"] if not r["base"] and r["verdict"] == "better" and r["changes"]]
    base_test = _run(index, test, out / "test" / "base", {})
    rows = []
    for r in sorted(candidates, key=lambda r: -r["comparisons"][METRIC]["diff"]):
        cell_test = _run(index, test, out / "test" / r["dir"], r["changes"])
        on_test = _compared(base_test, cell_test)
        rows.append({"setting": r["setting"], "value": r["value"], "changes": r["changes"],
                     "dev": r["comparisons"][METRIC], "test": on_test,
                     "kept": on_test["verdict"] != "worse" and on_test["diff"] >= 0})
    kept = [r for r in rows if r["kept"]]
    chosen: dict[str, Any] = {}
    together = None
    if len(kept) > 1:
        changes = {k: v for r in kept for k, v in r["changes"].items()}
        together = {"changes": changes,
                    "dev": _compared(out / "dev-sweep" / "base", _run(index, dev, out / "dev-together", changes)),
                    "test": _compared(base_test, _run(index, test, out / "test-together", changes))}
        if together["dev"]["verdict"] == "better" and together["test"]["verdict"] != "worse" \
                and together["test"]["diff"] >= 0:
            chosen = changes
    if not chosen and kept:
        chosen = dict(kept[0]["changes"])
    return {"dev_questions": len(dev), "test_questions": len(test), "base": swept["base"]["metrics"],
            "candidates": rows, "together": together, "chosen": chosen,
            "swept": [r["setting"] for r in swept["rows"] if r["base"]]}


def format_result(result: dict) -> str:
    """The tune as a table: each setting that won on dev, with its test result."""
    lines = [f"{result['dev_questions']} dev / {result['test_questions']} test questions; "
             f"settings swept on dev: {', '.join(result['swept']) or 'none'}"]
    if not result["candidates"]:
        lines.append("no setting beat the current ones beyond noise on dev: nothing to change")
        return "\n".join(lines)
    lines.append(f"{'setting':28s} {'value':>10s}  {'dev Δ nDCG@10':>14s}  {'test Δ':>8s}  test verdict  kept")
    for r in result["candidates"]:
        lines.append(f"{r['setting']:28s} {r['value']:>10s}  {r['dev']['diff']:+14.3f}  {r['test']['diff']:+8.3f}  "
                     f"{r['test']['verdict']:12s}  {'yes' if r['kept'] else 'no'}")
    if result["together"]:
        t = result["together"]
        lines.append(f"together: dev {t['dev']['diff']:+.3f} ({t['dev']['verdict']}), "
                     f"test {t['test']['diff']:+.3f} ({t['test']['verdict']})")
    if result["chosen"]:
        lines.append("chosen: " + ", ".join(f"{k}={v}" for k, v in result["chosen"].items()))
    else:
        lines.append("nothing held up on test: nothing to change")
    return "\n".join(lines)
