"""Running a sweep, step by step: encode the questions once, run the base, skip the
settings that cannot act on the store, run each cell and compare it with the base, and
write ``sweep.json`` and ``sweep.md``."""
from __future__ import annotations

import copy
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, TextIO

from chaja.config import Config
from chaja.eval.noise import RESAMPLES, SEED, compare_runs
from chaja.eval.questions import Question
from chaja.eval.report import question_metrics
from chaja.eval.runner import evaluate
from chaja.eval.sweep.memo import QueryMemo
from chaja.eval.sweep.plan import Cell, Row, freshness, plan_rows
from chaja.eval.sweep.settings import DEFAULT_SETTINGS, Setting
from chaja.eval.sweep.tables import SWEEP_METRICS, VERDICT_METRIC, markdown_table, pick
from chaja.eval.sweep.watch import _Watched, applicability

BASE_DIR = "base"


@dataclass
class _Sweep:
    """What the steps of one sweep share."""
    index: Any                                  # the base store's index
    questions: Sequence[Question]
    out: Path
    base_cfg: Config
    stream: TextIO | None
    memo: QueryMemo | None                      # the base store's query memo (None: no vectors)
    memos: dict[str, QueryMemo | None]          # by encoder name, the variants' stores' too

    def log(self, msg: str) -> None:
        if self.stream is not None:
            print(msg, file=self.stream, flush=True)


def sweep(index: Any, questions: Sequence[Question], out_dir: str | Path, *,
          settings: Sequence[Setting] | None = None, grid: bool = False,
          variants: Sequence[tuple[str, str, Any]] = (), resamples: int = RESAMPLES, seed: int = SEED,
          stream: TextIO | None = sys.stderr) -> dict:
    """Run the sweep; write ``sweep.json`` and ``sweep.md`` into ``out_dir`` and return the result.

    ``index`` is an open :class:`chaja.index.Index` whose config is the base;
    ``variants`` are ``(setting, value, index)`` triples of other stores.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    settings = list(DEFAULT_SETTINGS if settings is None else settings)
    run = _start(index, questions, out, stream)
    watched, base_summary = _run_base(run)
    live, skipped = _applicable(run, settings, watched)
    newest = max((d for ds in watched.dates.values() for d in ds), default=None)
    rows = plan_rows(live, run.base_cfg, grid, variants)
    results = _run_cells(run, rows, newest, resamples, seed)
    result = {
        "mode": "grid" if grid else "one-at-a-time",
        "store": base_summary["store"], "model": base_summary["model"],
        "questions": base_summary["questions"], "scored": base_summary["scored"],
        "base": {"dir": BASE_DIR, "config": run.base_cfg.to_dict(), "metrics": pick(base_summary["metrics"])},
        "metrics": list(SWEEP_METRICS), "verdict_metric": VERDICT_METRIC,
        "resamples": resamples, "seed": seed,
        "rows": _table_rows(rows, results, base_summary), "skipped": skipped,
        "encoded_queries": sum(m.misses for m in run.memos.values() if m is not None),
    }
    (out / "sweep.json").write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / "sweep.md").write_text(markdown_table(result), encoding="utf-8")
    return result


def _start(index: Any, questions: Sequence[Question], out: Path, stream: TextIO | None) -> _Sweep:
    """The base config, and the base store's query memo with every question encoded."""
    base_cfg = index.config.copy()
    has_vectors = index.store.get_meta("encoder") is not None
    memo = QueryMemo(index.encoder) if has_vectors else None
    run = _Sweep(index, questions, out, base_cfg, stream, memo, {index.encoder_name if has_vectors else "": memo})
    if memo is not None:
        memo.warm([q.text for q in questions], stream)
    return run


def _run_base(run: _Sweep) -> tuple[_Watched, dict]:
    """The base run, into ``out/base/``, watched for what it retrieves; and its summary."""
    t0 = time.perf_counter()
    watched = _Watched(_cell_index(run.index, run.base_cfg, run.memo))
    base_summary = evaluate(watched, run.questions, run.out / BASE_DIR, name=BASE_DIR, progress_every=0, stream=None)
    run.log(f"sweep: base: nDCG@10 {base_summary['metrics']['nDCG@10']:.3f} "
            f"({base_summary['scored']} scored questions, {time.perf_counter() - t0:.1f}s)")
    return watched, base_summary


def _applicable(run: _Sweep, settings: Sequence[Setting], watched: _Watched) -> tuple[list[Setting], list[dict]]:
    """The settings that can act on the store, and the others, each with the reason it is skipped."""
    stats = run.index.store.stats()
    skipped: list[dict] = []
    live: list[Setting] = []
    for s in settings:
        reason = applicability(s, stats, watched, run.base_cfg)
        if reason:
            skipped.append({"setting": s.short, "reason": reason})
            run.log(f"sweep: skipping {s.short}: {reason}")
        else:
            live.append(s)
    return live, skipped


def _run_cells(run: _Sweep, rows: Sequence[Row], newest: str | None, resamples: int, seed: int) -> dict[str, dict]:
    """Each cell's run (into ``out/<cell>/``), its summary and its comparisons with the base, by cell name."""
    todo = [c for _, _, _, c in rows if c is not None]
    results: dict[str, dict] = {}
    for i, cell in enumerate(todo, 1):
        started = time.perf_counter()
        cell.extra = freshness(cell.changes, run.base_cfg, newest)
        summary = evaluate(_cell_search_index(run, cell), run.questions, run.out / cell.name, name=cell.name,
                           progress_every=0, stream=None)
        comparisons = _compare(run.out / BASE_DIR, run.out / cell.name, resamples, seed)
        results[cell.name] = {"summary": summary, "comparisons": comparisons}
        c = comparisons[VERDICT_METRIC]
        run.log(f"sweep {i}/{len(todo)} {cell.name}: nDCG@10 {summary['metrics']['nDCG@10']:.3f} "
                f"({c['diff']:+.3f} vs base, {c['verdict']}), {time.perf_counter() - started:.1f}s")
    return results


def _cell_search_index(run: _Sweep, cell: Cell) -> Any:
    """What a cell searches: the base store under the cell's settings, or a variant's store
    under the base settings; each behind its encoder's query memo."""
    if cell.index is not None:
        return _cell_index(cell.index, run.base_cfg, _variant_memo(run, cell.index))
    cfg = run.base_cfg.copy()
    for k, v in [*cell.changes, *cell.extra.items()]:
        section, _, name = k.partition(".")
        setattr(getattr(cfg, section), name, copy.deepcopy(v))
    return _cell_index(run.index, cfg, run.memo)


def _variant_memo(run: _Sweep, index: Any) -> QueryMemo | None:
    """The query memo of a variant store's encoder: shared by stores with the same one,
    made (and every question encoded) the first time it is needed."""
    enc_name = index.encoder_name if index.store.get_meta("encoder") else ""
    if enc_name not in run.memos:
        run.memos[enc_name] = QueryMemo(index.encoder) if index.store.get_meta("encoder") else None
        if run.memos[enc_name] is not None:
            run.memos[enc_name].warm([q.text for q in run.questions], run.stream)
    return run.memos[enc_name]


def _table_rows(rows: Sequence[Row], results: dict[str, dict], base_summary: dict) -> list[dict]:
    """The rows of ``sweep.json``: each with its metrics, comparisons, verdict and changes."""
    out = []
    for setting, value, is_base, cell in rows:
        if cell is None:
            out.append({"setting": setting, "value": value, "base": True, "dir": BASE_DIR,
                        "metrics": pick(base_summary["metrics"]), "comparisons": None, "verdict": "base",
                        "changes": {}})
            continue
        r = results[cell.name]
        out.append({"setting": setting, "value": value, "base": False, "dir": cell.name,
                    "metrics": pick(r["summary"]["metrics"]), "comparisons": r["comparisons"],
                    "verdict": r["comparisons"][VERDICT_METRIC]["verdict"],
                    "changes": {k: v for k, v in [*cell.changes, *cell.extra.items()]},
                    **({"store": r["summary"]["store"], "variant": True} if cell.index is not None else {})})
    return out


def _compare(base_dir: Path, cell_dir: Path, resamples: int, seed: int) -> dict[str, dict]:
    a, b = question_metrics(base_dir), question_metrics(cell_dir)
    return {c.metric: c.to_dict() for c in compare_runs(a, b, SWEEP_METRICS, resamples=resamples, seed=seed)}


def _cell_index(index: Any, cfg: Config, encoder: Any) -> Any:
    from chaja.index import Index
    return Index(index.store, cfg, encoder=encoder)
