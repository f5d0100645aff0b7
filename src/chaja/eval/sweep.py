"""Every search setting, measured: a one-at-a-time sweep against the production default.

The base is the production config (``Config()``, with any ``--config``/``--set``
applied). Each cell changes one setting (:data:`DEFAULT_SETTINGS`), runs the
question set with :func:`chaja.eval.runner.evaluate` into ``DIR/<setting>=<value>/``
(records kept for every cell; the base in ``DIR/base/``), and is compared with
the base by the paired noise test of :mod:`chaja.eval.noise` on every metric.
The verdict of a row is that of nDCG@10: ``better`` / ``worse`` when the 95%
bootstrap CI of the difference excludes 0 and the randomization p < 0.05, else
``within noise``.

Default settings and values (the base value is always included and marked):

============================  ==============================================
rrf_k                         10, 20, 60
candidates                    20, 60, 100
gate                          on, off
title_weight                  1, 2, 5
heading_weight                1, 1.5, 3
reserved_keyword_share        0, 0.4
title_path, title_slot        off, on
chunk_cap                     0, 1, 2
heading_list                  on, off     (only when the store keeps heading
                                           vectors)
language_projection,          off, on     (only when the store holds two or
language_centering,                        more languages)
cross_language_keyword
source_weights                none, production (filings and statistics 1.15,
                              brokerage API 1.10, news 1.00; only when those
                              weights tell the store's sources apart)
half_life_days                none, production (news 14, filing 90, financials
                              180, macro 30 days; only when the store holds
                              those document types and the base run retrieved
                              dated chunks of them)
============================  ==============================================

Freshness is measured from ``search.now``; when that is unset the half-life cell
uses the newest date among the chunks the base run retrieved (recorded in the
cell's config), so the sweep gives the same numbers on another day.

With ``grid=True`` the cells are every combination of the selected settings'
values instead (at most :data:`MAX_GRID_CELLS`). Settings fixed at index time
(analyser, chunk size, encoder batch size) need another store: each *variant*
``(setting, value, index)`` is run with the base search settings and compared
like a cell; the question ids pair the runs, so both stores must use the same
document ids.

The encoder dominates search time, so one :class:`QueryMemo` encodes each
question once (alone, as the searcher would) before the base run and serves every
cell; the ``ms`` in a sweep's records therefore exclude query encoding.
"""
from __future__ import annotations

import copy
import itertools
import json
import math
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence, TextIO

import numpy as np

from chaja.config import Config
from chaja.eval.noise import RESAMPLES, SEED, compare_runs
from chaja.eval.questions import Question
from chaja.eval.report import question_metrics
from chaja.eval.runner import evaluate

SWEEP_METRICS = ("nDCG@10", "R@1", "R@5", "MRR")
VERDICT_METRIC = "nDCG@10"
MAX_GRID_CELLS = 256
BASE_DIR = "base"

#: the PostgreSQL write-up's source weights and freshness half-lives
PRODUCTION_SOURCE_WEIGHTS = {"DART": 1.15, "ECOS": 1.15, "KRX": 1.15, "KIS": 1.10, "news": 1.00}
PRODUCTION_HALF_LIFE_DAYS = {"news": 14.0, "filing": 90.0, "financials": 180.0, "macro": 30.0}


@dataclass(frozen=True)
class Setting:
    key: str                                  # "search.rrf_k"
    values: tuple[Any, ...]
    needs: str = ""                           # "languages" | "sources" | "dates" | "headings"
    names: tuple[tuple[str, Any], ...] = ()   # labels for non-scalar values

    @property
    def short(self) -> str:
        return self.key.split(".", 1)[1] if self.key.startswith("search.") else self.key

    def label(self, value: Any) -> str:
        for name, v in self.names:
            if v == value:
                return name
        return value_label(value)


def _s(key: str, *values: Any, needs: str = "", names: tuple = ()) -> Setting:
    return Setting(f"search.{key}", tuple(values), needs, names)


DEFAULT_SETTINGS: tuple[Setting, ...] = (
    _s("fusion", "calibrated", "convex", "rrf"),
    _s("query_terms", "content", "all"),
    _s("rrf_k", 10.0, 20.0, 60.0),
    _s("candidates", 20, 60, 100),
    _s("gate", True, False),
    _s("title_weight", 1.0, 2.0, 5.0),
    _s("heading_weight", 1.0, 1.5, 3.0),
    _s("reserved_keyword_share", 0.0, 0.4),
    _s("title_path", False, True),
    _s("title_slot", False, True),
    _s("chunk_cap", 0, 1, 2),
    _s("heading_list", True, False, needs="headings"),
    _s("aligned_list", True, False, needs="languages"),
    _s("aligned_heading_list", True, False, needs="languages"),
    _s("language_margin", -2.0, -1.0, 0.0, needs="languages"),
    _s("language_softness", 0.25, 1.0, needs="languages"),
    _s("keyword_neutral_depth", 0, 5, 10, needs="languages"),
    _s("keyword_neutral_best", 0.0, 0.5, 1.0, needs="languages"),
    _s("translated_keyword", 0.0, 2.0, 4.0, 8.0, needs="languages"),
    _s("translation_threshold", 0.6, 0.7, 0.8, needs="languages"),
    _s("feedback_weight", 0.0, 1.0, 2.0, needs="languages"),
    _s("feedback_depth", 1, 2, 5, needs="languages"),
    _s("language_projection", False, True, needs="languages"),
    _s("language_centering", False, True, needs="languages"),
    _s("cross_language_keyword", False, True, needs="languages"),
    _s("multipart", False, True),
    _s("source_weights", {}, PRODUCTION_SOURCE_WEIGHTS, needs="sources",
       names=(("none", {}), ("production", PRODUCTION_SOURCE_WEIGHTS))),
    _s("half_life_days", {}, PRODUCTION_HALF_LIFE_DAYS, needs="dates",
       names=(("none", {}), ("production", PRODUCTION_HALF_LIFE_DAYS))),
)


def value_label(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict) and not value:
        return "none"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return str(value)


def _dir_name(text: str) -> str:
    return re.sub(r"[^\w.=,+-]", "_", text)


def full_key(key: str) -> str:
    """``rrf_k`` or ``search.rrf_k`` → ``search.rrf_k``; only search settings can vary on one store."""
    key = key.strip()
    dotted = key if "." in key else f"search.{key}"
    section, _, name = dotted.partition(".")
    if section in ("index", "encoder"):
        raise ValueError(f"{dotted} is fixed when the store is built; index another store with it "
                         "and compare it with --variant SETTING=VALUE=STORE")
    if section != "search" or name not in Config().to_dict()["search"]:
        names = sorted(Config().to_dict()["search"])
        raise ValueError(f"unknown setting {key!r}; search settings are {', '.join(names)}")
    return dotted


def parse_values(spec: str) -> Setting:
    """``KEY=V1,V2,...`` (scalars) or ``KEY=[json, ...]`` → a :class:`Setting` with coerced values."""
    if "=" not in spec:
        raise ValueError(f"--values expects SETTING=V1,V2,..., got {spec!r}")
    key, _, raw = spec.partition("=")
    dotted = full_key(key)
    raw = raw.strip()
    if raw.startswith("["):
        try:
            items = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--values {key}: not a JSON list ({exc.msg})") from None
    else:
        items = [x.strip() for x in raw.split(",") if x.strip()]
    if not items:
        raise ValueError(f"--values {key}: no values")
    values = []
    for item in items:
        cfg = Config()
        cfg.set(dotted, item if isinstance(item, str) else json.dumps(item))
        values.append(_get(cfg, dotted))
    return Setting(dotted, tuple(_dedupe(values)))


def _freeze(v: Any) -> Any:
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v


def _dedupe(values: Sequence[Any]) -> list[Any]:
    seen, out = set(), []
    for v in values:
        k = _freeze(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


def _get(cfg: Config, dotted: str) -> Any:
    section, _, name = dotted.partition(".")
    return getattr(getattr(cfg, section), name)


def select_settings(only: Sequence[str] | None = None, values: Sequence[str] | None = None,
                    defaults: Sequence[Setting] = DEFAULT_SETTINGS) -> list[Setting]:
    """The default list, with ``values`` replacing (or adding) settings, restricted to ``only``."""
    settings = {s.key: s for s in defaults}
    for spec in values or []:
        s = parse_values(spec)
        old = settings.get(s.key)
        settings[s.key] = Setting(s.key, s.values, old.needs if old else "", old.names if old else ())
    if only:
        keys = [full_key(k) for k in only]
        missing = [k for k in keys if k not in settings]
        if missing:
            raise ValueError(f"no values for {', '.join(missing)}: give them with --values KEY=V1,V2")
        return [settings[k] for k in dict.fromkeys(keys)]
    return list(settings.values())


# ---- the query memo ------------------------------------------------------------------

class QueryMemo:
    """An encoder whose :meth:`encode_queries` computes each distinct text once.

    Each missing text is encoded alone (``[text]``), exactly as the searcher asks
    for it, so a cached vector equals the one an uncached search would get; a copy
    is returned every time. Everything else is delegated to the wrapped encoder.
    """

    def __init__(self, encoder: Any):
        self.encoder = encoder
        self.cache: dict[str, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def __getattr__(self, name: str) -> Any:
        if name == "encoder":                  # not set yet (e.g. during unpickling)
            raise AttributeError(name)
        return getattr(self.encoder, name)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        rows = []
        for t in texts:
            v = self.cache.get(t)
            if v is None:
                v = np.array(self.encoder.encode_queries([t])[0], dtype=np.float32)
                self.cache[t] = v
                self.misses += 1
            else:
                self.hits += 1
            rows.append(v)
        if not rows:
            return self.encoder.encode_queries([])
        return np.stack(rows)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode_passages(texts)

    def warm(self, texts: Sequence[str], stream: TextIO | None = None, every: int = 100) -> int:
        """Encode ``texts`` ahead (the searcher's cleaned form); returns how many were new."""
        from chaja.search.searcher import QueryError, check_query

        new = 0
        start = time.perf_counter()
        for i, text in enumerate(texts, 1):
            try:
                key = check_query(text)
            except QueryError:
                continue
            if key not in self.cache:
                self.encode_queries([key])
                new += 1
            if stream is not None and every > 0 and (i % every == 0 or i == len(texts)):
                print(f"sweep: encoded {i}/{len(texts)} questions ({time.perf_counter() - start:.0f}s)",
                      file=stream, flush=True)
        return new


# ---- watching the base run -------------------------------------------------------------

class _Watched:
    """Passes searches through and notes the source, type and date of every retrieved
    chunk, and whether any came with a heading-list rank."""

    def __init__(self, index: Any):
        self._index = index
        self.dates: dict[str, list[str]] = {}   # doc_type → dates seen
        self.sources: set[str] = set()
        self.headings = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def search(self, text: str, *args: Any, **kwargs: Any) -> Any:
        result = self._index.search(text, *args, **kwargs)
        for c in getattr(result, "chunks", None) or []:
            self.sources.add(c.chunk.source)
            self.headings = self.headings or getattr(c, "heading_rank", None) is not None
            if c.chunk.date:
                self.dates.setdefault(c.chunk.doc_type, []).append(c.chunk.date[:10])
        return result


def applicability(setting: Setting, stats: Any, watched: _Watched, base: Config) -> str | None:
    """None when the setting can act on this store, else the reason to skip it."""
    if setting.needs == "languages":
        langs = [k for k, v in (stats.by_lang or {}).items() if k and v]
        if len(langs) < 2:
            return f"the store holds one language ({', '.join(langs) or 'none recorded'}); nothing to align"
    if setting.needs == "sources":
        sources = [k for k, v in (stats.by_source or {}).items() if v]
        for value in setting.values:
            if isinstance(value, dict) and value:
                weights = {float(value.get(s, 1.0)) for s in sources}
                if len(weights) > 1:
                    return None
        shown = ", ".join(repr(s) for s in sources) or "none"
        return f"the store's sources ({shown}) all get the same weight, so weights cannot reorder results"
    if setting.needs == "dates":
        types = {k for k, v in (stats.by_doc_type or {}).items() if v}
        keys = set().union(*[set(v) for v in setting.values if isinstance(v, dict)])
        if not types & keys:
            shown = ", ".join(repr(t) for t in sorted(types)) or "none"
            return f"no stored document type has a half-life (store types: {shown})"
        if not any(watched.dates.get(t) for t in keys):
            return "no chunk of a type with a half-life carried a date among the base run's results"
    if setting.needs == "headings" and not watched.headings:
        return "the store keeps no heading vectors (no result of the base run came from the heading list)"
    return None


# ---- the sweep -------------------------------------------------------------------------

@dataclass
class Cell:
    name: str                                   # directory name under the sweep folder
    changes: list[tuple[str, Any]]              # (dotted key, value); empty for the base
    labels: list[tuple[str, str]]               # (short key, value label)
    index: Any = None                           # a variant's own index, else None
    extra: dict = field(default_factory=dict)   # further config changes (e.g. the freshness date)


def one_at_a_time(settings: Sequence[Setting], base: Config) -> list[tuple[Setting, list[Any]]]:
    """Each setting with its values, the base value first when the list lacks it."""
    out = []
    for s in settings:
        values = list(s.values)
        current = _get(base, s.key)
        if _freeze(current) not in {_freeze(v) for v in values}:
            values.insert(0, current)
        out.append((s, values))
    return out


def grid_cells(settings: Sequence[Setting], base: Config) -> list[Cell]:
    lists = [[(s, v) for v in s.values] for s in settings]
    total = math.prod(len(x) for x in lists)
    if total > MAX_GRID_CELLS:
        raise ValueError(f"a grid over {len(settings)} settings has {total} cells (limit {MAX_GRID_CELLS}); "
                         "narrow it with --only")
    cells = []
    for combo in itertools.product(*lists):
        changes = [(s.key, v) for s, v in combo if _freeze(v) != _freeze(_get(base, s.key))]
        labels = [(s.short, s.label(v)) for s, v in combo]
        name = ",".join(f"{k}={v}" for k, v in labels)
        cells.append(Cell(_dir_name(name), changes, labels))
    return cells


def _compare(base_dir: Path, cell_dir: Path, resamples: int, seed: int) -> dict[str, dict]:
    a, b = question_metrics(base_dir), question_metrics(cell_dir)
    return {c.metric: c.to_dict() for c in compare_runs(a, b, SWEEP_METRICS, resamples=resamples, seed=seed)}


def _cell_index(index: Any, cfg: Config, encoder: Any) -> Any:
    from chaja.index import Index
    return Index(index.store, cfg, encoder=encoder)


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
    base_cfg = index.config.copy()
    has_vectors = index.store.get_meta("encoder") is not None
    memo = QueryMemo(index.encoder) if has_vectors else None
    memos = {index.encoder_name if has_vectors else "": memo}
    texts = [q.text for q in questions]
    if memo is not None:
        memo.warm(texts, stream)

    def log(msg: str) -> None:
        if stream is not None:
            print(msg, file=stream, flush=True)

    t0 = time.perf_counter()
    watched = _Watched(_cell_index(index, base_cfg, memo))
    base_summary = evaluate(watched, questions, out / BASE_DIR, name=BASE_DIR, progress_every=0, stream=None)
    log(f"sweep: base: nDCG@10 {base_summary['metrics']['nDCG@10']:.3f} "
        f"({base_summary['scored']} scored questions, {time.perf_counter() - t0:.1f}s)")

    stats = index.store.stats()
    skipped: list[dict] = []
    live: list[Setting] = []
    for s in settings:
        reason = applicability(s, stats, watched, base_cfg)
        if reason:
            skipped.append({"setting": s.short, "reason": reason})
            log(f"sweep: skipping {s.short}: {reason}")
        else:
            live.append(s)

    newest = max((d for ds in watched.dates.values() for d in ds), default=None)

    def extra_for(changes: list[tuple[str, Any]]) -> dict:
        if any(k == "search.half_life_days" and v for k, v in changes) and base_cfg.search.now is None and newest:
            return {"search.now": newest}
        return {}

    # rows: (setting label, value label, is_base, cell or None)
    plan: list[tuple[str, str, bool, Cell | None]] = []
    if grid:
        cells = grid_cells(live, base_cfg)
        if all(c.changes for c in cells):          # the base is not a combination of the listed values
            plan.append(("base", "", True, None))
        for cell in cells:
            plan.append((",".join(k for k, _ in cell.labels), ",".join(v for _, v in cell.labels),
                         not cell.changes, None if not cell.changes else cell))
    else:
        for s, values in one_at_a_time(live, base_cfg):
            current = _freeze(_get(base_cfg, s.key))
            for v in values:
                is_base = _freeze(v) == current
                cell = None if is_base else Cell(_dir_name(f"{s.short}={s.label(v)}"), [(s.key, v)],
                                                 [(s.short, s.label(v))])
                plan.append((s.short, s.label(v), is_base, cell))
    for setting, value, idx in variants:
        plan.append((setting, value, False, Cell(_dir_name(f"{setting}={value}"), [], [(setting, value)], index=idx)))

    todo = [c for _, _, _, c in plan if c is not None]
    results: dict[str, dict] = {}
    for i, cell in enumerate(todo, 1):
        started = time.perf_counter()
        cfg = base_cfg.copy()
        cell.extra = extra_for(cell.changes)
        for k, v in [*cell.changes, *cell.extra.items()]:
            section, _, name = k.partition(".")
            setattr(getattr(cfg, section), name, copy.deepcopy(v))
        if cell.index is not None:
            enc_name = cell.index.encoder_name if cell.index.store.get_meta("encoder") else ""
            if enc_name not in memos:
                memos[enc_name] = QueryMemo(cell.index.encoder) if cell.index.store.get_meta("encoder") else None
                if memos[enc_name] is not None:
                    memos[enc_name].warm(texts, stream)
            run_index = _cell_index(cell.index, base_cfg, memos[enc_name])
        else:
            run_index = _cell_index(index, cfg, memo)
        summary = evaluate(run_index, questions, out / cell.name, name=cell.name, progress_every=0, stream=None)
        comparisons = _compare(out / BASE_DIR, out / cell.name, resamples, seed)
        results[cell.name] = {"summary": summary, "comparisons": comparisons}
        c = comparisons[VERDICT_METRIC]
        log(f"sweep {i}/{len(todo)} {cell.name}: nDCG@10 {summary['metrics']['nDCG@10']:.3f} "
            f"({c['diff']:+.3f} vs base, {c['verdict']}), {time.perf_counter() - started:.1f}s")

    rows = []
    for setting, value, is_base, cell in plan:
        if cell is None:
            rows.append({"setting": setting, "value": value, "base": True, "dir": BASE_DIR,
                         "metrics": _pick(base_summary["metrics"]), "comparisons": None, "verdict": "base",
                         "changes": {}})
            continue
        r = results[cell.name]
        rows.append({"setting": setting, "value": value, "base": False, "dir": cell.name,
                     "metrics": _pick(r["summary"]["metrics"]), "comparisons": r["comparisons"],
                     "verdict": r["comparisons"][VERDICT_METRIC]["verdict"],
                     "changes": {k: v for k, v in [*cell.changes, *cell.extra.items()]},
                     **({"store": r["summary"]["store"], "variant": True} if cell.index is not None else {})})
    result = {
        "mode": "grid" if grid else "one-at-a-time",
        "store": base_summary["store"], "model": base_summary["model"],
        "questions": base_summary["questions"], "scored": base_summary["scored"],
        "base": {"dir": BASE_DIR, "config": base_cfg.to_dict(), "metrics": _pick(base_summary["metrics"])},
        "metrics": list(SWEEP_METRICS), "verdict_metric": VERDICT_METRIC,
        "resamples": resamples, "seed": seed,
        "rows": rows, "skipped": skipped,
        "encoded_queries": sum(m.misses for m in memos.values() if m is not None),
    }
    (out / "sweep.json").write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    (out / "sweep.md").write_text(markdown_table(result), encoding="utf-8")
    return result


def _pick(metrics: dict) -> dict:
    return {m: metrics.get(m) for m in SWEEP_METRICS}


# ---- tables ----------------------------------------------------------------------------

def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _delta(row: dict) -> str:
    if row["comparisons"] is None:
        return ""
    c = row["comparisons"][VERDICT_METRIC]
    return f"{c['diff']:+.3f} [{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]"


def _value(row: dict) -> str:
    return f"{row['value']} (base)" if row["base"] else row["value"]


def format_table(result: dict) -> str:
    """The sweep as text, shaped like the production evaluation's "How search is set up"."""
    sw = max([7] + [len(r["setting"]) for r in result["rows"]]) + 2
    vw = max([5] + [len(_value(r)) for r in result["rows"]]) + 2
    head = (f"{'Setting':<{sw}}{'Value':<{vw}}{'nDCG@10':>8}  {'Δ vs base [95% CI]':<26}"
            + "".join(f"{m:>8}" for m in SWEEP_METRICS[1:]) + "  Verdict")
    lines = [head]
    prev = None
    for r in result["rows"]:
        shown = r["setting"] if r["setting"] != prev else ""
        prev = r["setting"]
        lines.append(f"{shown:<{sw}}{_value(r):<{vw}}{_f(r['metrics']['nDCG@10']):>8}  {_delta(r):<26}"
                     + "".join(f"{_f(r['metrics'][m]):>8}" for m in SWEEP_METRICS[1:])
                     + f"  {'' if r['base'] else r['verdict']}")
    for s in result["skipped"]:
        lines.append(f"{s['setting']:<{sw}}skipped: {s['reason']}")
    lines.append(f"({result['scored']} scored questions of {result['questions']}; Δ = setting − base, "
                 f"paired bootstrap 95% CI, {result['resamples']} resamples, seed {result['seed']}; "
                 "verdict from nDCG@10 with the sign-flip randomization test)")
    return "\n".join(lines)


def markdown_table(result: dict) -> str:
    base = result["base"]["config"]["search"]
    lines = [
        "# Settings sweep",
        "",
        f"Store `{result['store']}`, model `{result['model']}`, {result['scored']} scored questions "
        f"of {result['questions']}; {result['mode']} against the base "
        f"({base.get('fusion', 'rrf')} fusion" + (f", RRF k = {value_label(base['rrf_k'])}" if base.get('fusion', 'rrf') == 'rrf' else "")
        + f", {base['candidates']} candidates per path, "
        f"keyword gate {'on' if base['gate'] else 'off'}).",
        "",
        "| Setting | Value | nDCG@10 | Δ nDCG@10 vs base [95% CI] | " + " | ".join(SWEEP_METRICS[1:]) + " | Verdict |",
        "|---|---|---|---|" + "---|" * (len(SWEEP_METRICS) - 1) + "---|",
    ]
    prev = None
    for r in result["rows"]:
        shown = r["setting"] if r["setting"] != prev else ""
        prev = r["setting"]
        value = f"**{r['value']}** (base)" if r["base"] else r["value"]
        lines.append(f"| {shown} | {value} | {_f(r['metrics']['nDCG@10'])} | {_delta(r)} | "
                     + " | ".join(_f(r["metrics"][m]) for m in SWEEP_METRICS[1:])
                     + f" | {'' if r['base'] else r['verdict']} |")
    if result["skipped"]:
        lines += ["", "Not measured on this store:", ""]
        lines += [f"- {s['setting']}: {s['reason']}" for s in result["skipped"]]
    lines += ["", f"Δ = setting − base over paired questions; 95% CI by paired bootstrap "
                  f"({result['resamples']} resamples, seed {result['seed']}). A row is better or worse when "
                  "the CI excludes 0 and the sign-flip randomization test gives p < 0.05, otherwise within noise. "
                  "Each row's records are in its folder (`base/` for the base).", ""]
    return "\n".join(lines)
