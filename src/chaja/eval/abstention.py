"""Choosing the abstention threshold from a run's records (no model, no store).

Search abstains ("nothing relevant") when both of its signals are weak
(:mod:`chaja.search.abstain`):

    abstain(q) ⇔ top_cosine(q) < τ  ∧  keyword_coverage(q) < c        (τ ≤ 0: never)

A run records both signals for every question, so the effect of any (τ, c) can
be replayed on the records. The question set mixes *answerable* questions (a
gold document, or useful graded documents) and *unanswerable* ones (kind
``unanswerable``, ``"gold": []``). Let A be the answerable questions, H ⊆ A those
whose gold document is among the run's top ten documents, U the unanswerable
questions. For each threshold:

    kept(τ)       = |{q ∈ H : not abstain(q)}| / |A|    answerable recall@10 kept
    kept_share(τ) = kept(τ) / kept(0)                   share of the correct answers kept
    rejected(τ)   = |{q ∈ U : abstain(q)}| / |U|        unanswerable questions rejected
    youden(τ)     = rejected(τ) + kept_share(τ) − 1

Abstaining on an answerable question that search misses anyway costs nothing,
so ``kept`` counts only the correct answers lost. ``youden`` is Youden's J of
"abstain" as a detector of unanswerable questions against the questions search
answers correctly: 0 with abstention off, 1 for a perfect separation.

Candidate thresholds: 0 (off), the midpoint between each pair of neighbouring
distinct ``top_cosine`` values, rounded to the fewest decimals that keep it
strictly between them (every way of splitting the recorded questions, each with
a margin on both sides), and 1 (abstain whenever coverage is below c). Choice rules:

* ``youden`` (default): the largest J; ties go to the threshold that abstains on
  the fewest questions, then the smaller τ;
* ``keep``: the largest τ whose ``kept_share`` is at least ``keep`` (0.95: the
  threshold keeps at least 95% of answerable R@10). Needs no unanswerable
  questions, but then says nothing about what it rejects.

With several coverages c, each gets its own curve and the rule picks across all
points (``keep``: the highest rejected share, then the first coverage given).
A question the run itself abstained on has no ranking and counts as a miss at
every threshold: record runs with abstention off (``search.abstain_below=0``).
"""
from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from html import escape
from pathlib import Path
from typing import Iterable, Sequence

from chaja.eval.questions import UNANSWERABLE
from chaja.eval.report import read_records
from chaja.eval.single import CHUNK_DEPTH, gold_rank

ABSTENTION_JSON = "abstention.json"
ABSTENTION_SVG = "abstention.svg"
RULES = ("youden", "keep")
KEEP = 0.95


@dataclass(frozen=True)
class Signals:
    id: str
    answerable: bool          # False: an unanswerable question
    hit: bool                 # gold document in the top ten (answerable only)
    top_cosine: float
    keyword_coverage: float


@dataclass
class Point:
    tau: float
    coverage: float
    kept: float               # share of answerable questions answered correctly and not abstained
    kept_share: float         # kept / kept with abstention off
    rejected: float | None    # share of unanswerable questions abstained on (None: no such questions)
    youden: float | None      # rejected + kept_share - 1
    abstained_answerable: int
    abstained_unanswerable: int

    @property
    def abstained(self) -> int:
        return self.abstained_answerable + self.abstained_unanswerable

    def to_dict(self) -> dict:
        return asdict(self)


def signals_from_records(records: Iterable[dict], depth: int = CHUNK_DEPTH) -> tuple[list[Signals], dict]:
    """Per-question signals and hit flags; the counts dict says what was left out and why."""
    out: list[Signals] = []
    counts = {"ignored": 0, "run_abstained": 0, "no_signals": 0}
    for rec in records:
        judgments = rec.get("judgments")
        gold = rec.get("gold")
        if gold is None and judgments is not None:
            gold = [d for d, g in judgments.items() if g != "abstain" and g >= 2]
        if rec.get("kind") == UNANSWERABLE and not gold:
            answerable = False
        elif gold:
            answerable = True
        else:                                   # a graded pool with no useful document: neither
            counts["ignored"] += 1
            continue
        sig = rec.get("signals")
        if not sig or "top_cosine" not in sig:
            counts["no_signals"] += 1
            continue
        if rec.get("abstained"):
            counts["run_abstained"] += 1
        ranked = [] if rec.get("abstained") else list(rec.get("ranked") or [])[:depth]
        hit = answerable and gold_rank(ranked, gold) is not None
        out.append(Signals(str(rec["id"]), answerable, hit, float(sig.get("top_cosine", 0.0)),
                           float(sig.get("keyword_coverage", 0.0))))
    return out, counts


def abstains(s: Signals, tau: float, coverage: float) -> bool:
    """The search's rule (:func:`chaja.search.abstain.should_abstain`) replayed on recorded signals."""
    return tau > 0 and s.top_cosine < tau and s.keyword_coverage < coverage


def point(rows: Sequence[Signals], tau: float, coverage: float) -> Point:
    answerable = [r for r in rows if r.answerable]
    unanswerable = [r for r in rows if not r.answerable]
    if not answerable:
        raise ValueError("no answerable question with recorded signals: the curve needs some")
    hits = [r for r in answerable if r.hit]
    if not hits:
        raise ValueError("search answered no answerable question correctly: there is nothing to keep")
    kept_n = sum(1 for r in hits if not abstains(r, tau, coverage))
    rej_n = sum(1 for r in unanswerable if abstains(r, tau, coverage))
    kept_share = kept_n / len(hits)
    rejected = rej_n / len(unanswerable) if unanswerable else None
    return Point(tau=tau, coverage=coverage, kept=kept_n / len(answerable), kept_share=kept_share,
                 rejected=rejected, youden=None if rejected is None else rejected + kept_share - 1.0,
                 abstained_answerable=sum(1 for r in answerable if abstains(r, tau, coverage)),
                 abstained_unanswerable=rej_n)


def thresholds(rows: Sequence[Signals]) -> list[float]:
    """0 (off), midpoints between neighbouring distinct positive cosines, and one above the largest."""
    values = sorted({r.top_cosine for r in rows if r.top_cosine > 0})
    if not values:
        return [0.0]
    mids = [_inside(a, b) for a, b in zip(values, values[1:])]
    top = values[-1]
    above = 1.0 if top < 1.0 else math.nextafter(top, math.inf)
    return [0.0, *mids, above]


def _inside(lo: float, hi: float) -> float:
    """The midpoint of (lo, hi) at the fewest decimals that keep it strictly inside."""
    mid = (lo + hi) / 2
    for digits in range(1, 12):
        c = round(mid, digits)
        if lo < c < hi:
            return c
    return mid


def curve(rows: Sequence[Signals], coverage: float) -> list[Point]:
    return [point(rows, t, coverage) for t in thresholds(rows)]


def choose(points: Sequence[Point], rule: str = "youden", keep: float = KEEP) -> Point:
    """The chosen point of one or more curves (see the module docstring for the rules)."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}; use one of {RULES}")
    if not points:
        raise ValueError("no points to choose from")
    if rule == "youden":
        if points[0].youden is None:
            raise ValueError("the Youden rule needs unanswerable questions (kind \"unanswerable\", "
                             "\"gold\": []); add some, or use the keep rule")
        return min(points, key=lambda p: (-p.youden, p.abstained, p.tau))
    if not 0 < keep <= 1:
        raise ValueError(f"keep must be in (0, 1], got {keep}")
    best_per_cov: list[Point] = []
    for cov in dict.fromkeys(p.coverage for p in points):
        ok = [p for p in points if p.coverage == cov and p.kept_share >= keep - 1e-12]
        best_per_cov.append(max(ok, key=lambda p: p.tau))      # τ = 0 always keeps everything
    return max(best_per_cov, key=lambda p: -1.0 if p.rejected is None else p.rejected)


def analyse(records: Sequence[dict], coverages: Sequence[float], rule: str = "youden",
            keep: float = KEEP) -> dict:
    """Curves for each coverage, the point each rule picks and the chosen one, as a JSON-ready dict."""
    rows, counts = signals_from_records(records)
    if counts["no_signals"] and not rows:
        raise ValueError("the records hold no abstention signals; rerun the question set with this "
                         "version of chaja (records now keep each search's signals)")
    curves = {float(c): curve(rows, float(c)) for c in coverages}
    points = [p for ps in curves.values() for p in ps]
    notes = []
    if counts["no_signals"]:
        notes.append(f"{counts['no_signals']} questions have no recorded signals and were left out")
    if counts["run_abstained"]:
        notes.append(f"the run itself abstained on {counts['run_abstained']} questions; they count as misses "
                     "at every threshold (record with search.abstain_below=0 to see them)")
    if counts["ignored"]:
        notes.append(f"{counts['ignored']} graded questions without a useful document are neither "
                     "answerable nor unanswerable and were left out")
    n_ans = sum(1 for r in rows if r.answerable)
    n_un = len(rows) - n_ans
    if not n_un:
        notes.append("no unanswerable questions: the rejected share is unknown")
    by_rule = {}
    for r in RULES:
        try:
            by_rule[r] = choose(points, r, keep).to_dict()
        except ValueError as exc:
            by_rule[r] = {"error": str(exc)}
    chosen = choose(points, rule, keep)
    return {
        "answerable": n_ans, "unanswerable": n_un, "hits": sum(1 for r in rows if r.hit),
        "recall_at_10": sum(1 for r in rows if r.hit) / n_ans if n_ans else None,
        "rule": rule, "keep": keep, "coverages": [float(c) for c in coverages],
        "chosen": chosen.to_dict(),
        "setting": [f"search.abstain_below={chosen.tau!r}", f"search.abstain_coverage={chosen.coverage!r}"],
        "by_rule": by_rule,
        "curves": {repr(c): [p.to_dict() for p in ps] for c, ps in curves.items()},
        "notes": notes,
        "questions": [asdict(r) for r in rows],
    }


def abstention_report(out_dir: str | Path, coverages: Sequence[float] | None = None, rule: str = "youden",
                      keep: float = KEEP, write: bool = True) -> dict:
    """:func:`analyse` on ``out_dir/records.jsonl``; writes ``abstention.json`` and ``abstention.svg``.

    Without ``coverages`` the run's own ``search.abstain_coverage`` (default 1.0) is used."""
    meta, records = read_records(out_dir)
    if not coverages:
        cfg = (meta.get("config") or {}).get("search") or {}
        coverages = [float(cfg.get("abstain_coverage", 1.0))]
    result = analyse(records, coverages, rule, keep)
    result = {"name": meta.get("name") or Path(out_dir).name, "model": meta.get("model"),
              "store": meta.get("store"), **result}
    if write:
        out = Path(out_dir)
        (out / ABSTENTION_JSON).write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        (out / ABSTENTION_SVG).write_text(svg_curve(result), encoding="utf-8")
    return result


# ---- output ------------------------------------------------------------------------

def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def table_points(result: dict, step: float = 0.01) -> list[dict]:
    """Curve points for printing, replayed on the result's per-question signals: 0 (off), τ on a
    grid of ``step`` over the recorded cosines, and the chosen τ, at the chosen coverage."""
    ch = result["chosen"]
    rows = [Signals(**q) for q in result["questions"]]
    taus = [r.top_cosine for r in rows if r.top_cosine > 0]
    wanted = {0.0, ch["tau"]}
    if taus and step > 0:
        lo = math.floor(min(taus) / step)
        hi = math.ceil(max(taus) / step)
        wanted.update(round(i * step, 10) for i in range(lo, hi + 1))
    return [point(rows, t, ch["coverage"]).to_dict() for t in sorted(wanted)]


def format_report(result: dict, step: float = 0.01) -> str:
    ch = result["chosen"]
    lines = [f"{result['answerable']} answerable questions (R@10 {_pct(result['recall_at_10'])}), "
             f"{result['unanswerable']} unanswerable; abstain ⇔ top_cosine < τ ∧ keyword_coverage < "
             f"{ch['coverage']:g}",
             "",
             f"{'τ':>8}{'kept R@10':>12}{'kept share':>12}{'rejected':>10}{'Youden':>9}{'abstained':>11}"]
    for p in table_points(result, step):
        mark = "  ← chosen" if p["tau"] == ch["tau"] else ("  (off)" if p["tau"] == 0 else "")
        j = "-" if p["youden"] is None else f"{p['youden']:+.3f}"
        lines.append(f"{p['tau']:>8g}{_pct(p['kept']):>12}{_pct(p['kept_share']):>12}"
                     f"{_pct(p['rejected']):>10}{j:>9}"
                     f"{p['abstained_answerable'] + p['abstained_unanswerable']:>11}{mark}")
    lines.append("")
    for rule, p in result["by_rule"].items():
        label = "Youden (max rejected + kept share − 1)" if rule == "youden" else \
            f"keep (largest τ keeping ≥ {100 * result['keep']:.0f}% of answerable R@10)"
        if "error" in p:
            lines.append(f"{label}: {p['error']}")
        else:
            tau = "0 (off)" if p["tau"] <= 0 else f"{p['tau']:g}"
            lines.append(f"{label}: τ = {tau}, c = {p['coverage']:g}: keeps {_pct(p['kept_share'])} "
                         f"of correct answers, rejects {_pct(p['rejected'])} of unanswerable")
    lines.append(f"chosen ({result['rule']}): --set {' --set '.join(result['setting'])}")
    lines += [f"note: {n}" for n in result["notes"]]
    return "\n".join(lines)


def svg_curve(result: dict, width: int = 560, height: int = 340) -> str:
    """Kept share and rejected share against τ (chosen coverage), the chosen τ dashed. No dependencies."""
    from chaja.eval.figures import PALETTE

    ch = result["chosen"]
    pts = result["curves"][repr(ch["coverage"])]
    # the curve changes value at each recorded cosine: pts[0] holds up to the first, pts[k] after the k-th
    breaks = sorted({q["top_cosine"] for q in result["questions"] if q["top_cosine"] > 0})
    x0, x1 = (breaks[0], breaks[-1]) if breaks else (0.0, 1.0)
    pad = (x1 - x0) * 0.05 or 0.01
    x0, x1 = x0 - pad, x1 + pad
    left, right, top, bottom = 56, 20, 34, 56
    pw, ph = width - left - right, height - top - bottom

    def X(t: float) -> float:
        return left + pw * (min(max(t, x0), x1) - x0) / (x1 - x0)

    def Y(v: float) -> float:
        return top + ph * (1 - v)

    def steps(key: str) -> str:
        if any(p[key] is None for p in pts) or len(pts) != len(breaks) + 1:
            return ""
        coords = [f"{X(x0):.1f},{Y(pts[0][key]):.1f}"]
        for k, b in enumerate(breaks):
            coords.append(f"{X(b):.1f},{Y(pts[k][key]):.1f}")
            coords.append(f"{X(b):.1f},{Y(pts[k + 1][key]):.1f}")
        coords.append(f"{X(x1):.1f},{Y(pts[-1][key]):.1f}")
        return " ".join(coords)

    title = f"{result.get('name', '')}: abstention, c = {ch['coverage']:g}"
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2:.1f}" y="20" text-anchor="middle" font-size="14">{escape(title)}</text>']
    for i in range(6):
        v = i / 5
        parts.append(f'<line x1="{left}" y1="{Y(v):.1f}" x2="{width - right}" y2="{Y(v):.1f}" stroke="#dddddd"/>')
        parts.append(f'<text x="{left - 6}" y="{Y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    for i in range(6):
        t = x0 + (x1 - x0) * i / 5
        parts.append(f'<text x="{X(t):.1f}" y="{top + ph + 16}" text-anchor="middle">{t:.3f}</text>')
    parts.append(f'<text x="{left + pw / 2:.1f}" y="{height - 22}" text-anchor="middle">'
                 f'τ (abstain when top cosine &lt; τ)</text>')
    series = [("kept_share", "answerable correct answers kept", PALETTE[0]),
              ("rejected", "unanswerable rejected", PALETTE[1])]
    for i, (key, label, colour) in enumerate(series):
        line = steps(key)
        if line:
            parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{line}"/>')
        lx = left + i * 250
        parts.append(f'<rect x="{lx}" y="{height - 12}" width="12" height="4" fill="{colour}"/>')
        parts.append(f'<text x="{lx + 18}" y="{height - 6}">{escape(label)}</text>')
    cx = X(ch["tau"])
    parts.append(f'<line x1="{cx:.1f}" y1="{top}" x2="{cx:.1f}" y2="{top + ph}" stroke="black" '
                 f'stroke-dasharray="4 3"><title>chosen τ = {ch["tau"]:.4f}</title></line>')
    parts.append(f'<line x1="{left}" y1="{Y(0):.1f}" x2="{width - right}" y2="{Y(0):.1f}" stroke="black"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
