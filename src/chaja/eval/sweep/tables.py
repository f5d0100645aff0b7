"""What a sweep reports: the metrics of each row, and the result as a text table (shaped
like the production evaluation's "How search is set up") and as Markdown."""
from __future__ import annotations

from chaja.eval.sweep.settings import value_label

SWEEP_METRICS = ("nDCG@10", "R@1", "R@5", "MRR")
VERDICT_METRIC = "nDCG@10"


def pick(metrics: dict) -> dict:
    """The sweep's metrics of a run's summary."""
    return {m: metrics.get(m) for m in SWEEP_METRICS}


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
