"""Comparison figure of several runs: one group of bars per metric, one bar per
run, with the run's 95% bootstrap interval of the mean (percentile method,
10,000 resamples, seed 0) as a whisker.

:func:`write_svg` writes the SVG itself (no dependencies); :func:`write_png`
draws the same figure with matplotlib, the optional ``chaja[figures]`` extra.
"""
from __future__ import annotations

from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import Sequence

import numpy as np

from chaja.eval.noise import bootstrap_ci
from chaja.eval.report import question_metrics, read_records
from chaja.eval.single import METRICS

PALETTE = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C")


@dataclass
class Series:
    name: str
    means: list[float]
    lows: list[float]
    highs: list[float]
    n: int
    question_ids: frozenset = frozenset()


def series_from_runs(dirs: Sequence[str | Path], metrics: Sequence[str] = METRICS,
                     resamples: int = 10_000, seed: int = 0) -> list[Series]:
    out = []
    for d in dirs:
        meta, _ = read_records(d)
        per_q = question_metrics(d)
        if not per_q:
            raise ValueError(f"{d}: no scored questions")
        means, lows, highs = [], [], []
        for m in metrics:
            values = np.array([row[m] for row in per_q.values()], dtype=np.float64)
            lo, hi = bootstrap_ci(values, resamples, seed)
            means.append(float(values.mean()))
            lows.append(lo)
            highs.append(hi)
        out.append(Series(meta.get("name") or Path(d).name, means, lows, highs, len(per_q), frozenset(per_q)))
    return out


def svg_figure(series: Sequence[Series], metrics: Sequence[str] = METRICS, title: str = "") -> str:
    """The figure as SVG text."""
    group_w = 40 + 34 * len(series)
    left, right = 56, 20
    plot_h = 260
    width = max(left + right + group_w * len(metrics), 260)
    cols = max(1, min(3, (width - left) // 200))           # legend entries a row, as many as fit
    top, bottom = 40 if title else 20, 70 + 18 * -(-len(series) // cols)
    height = top + plot_h + bottom

    def y(v: float) -> float:
        return top + plot_h * (1 - max(0.0, min(1.0, v)))

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
             f'<rect width="{width}" height="{height}" fill="white"/>']
    if title:
        parts.append(f'<text x="{width / 2:.1f}" y="22" text-anchor="middle" font-size="14">{escape(title)}</text>')
    for i in range(6):
        v = i / 5
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{width - right}" y2="{y(v):.1f}" '
                     f'stroke="#dddddd" stroke-width="1"/>')
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.1f}</text>')
    for mi, metric in enumerate(metrics):
        gx = left + mi * group_w + 20
        for si, s in enumerate(series):
            colour = PALETTE[si % len(PALETTE)]
            x = gx + si * 34
            parts.append(f'<rect x="{x}" y="{y(s.means[mi]):.1f}" width="28" '
                         f'height="{y(0) - y(s.means[mi]):.1f}" fill="{colour}">'
                         f'<title>{escape(s.name)} {escape(metric)} {s.means[mi]:.3f} '
                         f'[{s.lows[mi]:.3f}, {s.highs[mi]:.3f}]</title></rect>')
            cx = x + 14
            parts.append(f'<line x1="{cx}" y1="{y(s.lows[mi]):.1f}" x2="{cx}" y2="{y(s.highs[mi]):.1f}" '
                         f'stroke="black" stroke-width="1.2"/>')
            for v in (s.lows[mi], s.highs[mi]):
                parts.append(f'<line x1="{cx - 5}" y1="{y(v):.1f}" x2="{cx + 5}" y2="{y(v):.1f}" '
                             f'stroke="black" stroke-width="1.2"/>')
            parts.append(f'<text x="{cx}" y="{y(s.highs[mi]) - 4:.1f}" text-anchor="middle" '
                         f'font-size="9">{s.means[mi]:.2f}</text>')
        parts.append(f'<text x="{gx + 17 * len(series) - 3:.1f}" y="{top + plot_h + 18}" '
                     f'text-anchor="middle">{escape(metric)}</text>')
    parts.append(f'<line x1="{left}" y1="{y(0):.1f}" x2="{width - right}" y2="{y(0):.1f}" stroke="black"/>')
    ly = top + plot_h + 40
    for si, s in enumerate(series):
        lx = left + (si % cols) * 200
        row_y = ly + (si // cols) * 18
        parts.append(f'<rect x="{lx}" y="{row_y - 10}" width="12" height="12" fill="{PALETTE[si % len(PALETTE)]}"/>')
        parts.append(f'<text x="{lx + 18}" y="{row_y}">{escape(s.name)} (n={s.n})</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def write_svg(path: str | Path, series: Sequence[Series], metrics: Sequence[str] = METRICS, title: str = "") -> Path:
    path = Path(path)
    path.write_text(svg_figure(series, metrics, title), encoding="utf-8")
    return path


def write_png(path: str | Path, series: Sequence[Series], metrics: Sequence[str] = METRICS, title: str = "") -> Path:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("PNG figures need matplotlib, the figures extra: pip install 'chaja[figures]'") from exc
    x = np.arange(len(metrics))
    width = 0.8 / max(1, len(series))
    fig, ax = plt.subplots(figsize=(1.6 + len(metrics) * (0.6 + 0.25 * len(series)), 4.2))
    for si, s in enumerate(series):
        means = np.array(s.means)
        err = np.vstack([means - np.array(s.lows), np.array(s.highs) - means])
        ax.bar(x + (si - (len(series) - 1) / 2) * width, means, width, yerr=err, capsize=3,
               color=PALETTE[si % len(PALETTE)], label=f"{s.name} (n={s.n})")
    ax.set_xticks(x, list(metrics))
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("mean over questions (95% bootstrap CI)")
    ax.grid(axis="y", color="#dddddd")
    ax.set_axisbelow(True)
    if title:
        ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=min(3, len(series)), frameon=False)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=150)
    plt.close(fig)
    return path
