"""Is a difference between two runs more than noise? Paired tests over questions.

For one metric, d_q = metric_B(q) - metric_A(q) over the questions both runs
answered (n of them); the observed difference is mean(d).

* Paired bootstrap (percentile) 95% CI: draw n questions with replacement,
  ``resamples`` times, take mean(d) of each draw; the CI is the 2.5th and 97.5th
  percentiles of those means.
* Paired randomization (sign-flip) test, two-sided: under "no difference" each
  d_q is as likely to have the other sign. p = share of sign patterns s whose
  |mean(s * d)| >= |mean(d)|. All 2^n patterns are enumerated when
  2^n <= resamples (exact p); otherwise ``resamples`` random patterns are drawn
  and p = (1 + count) / (1 + resamples).
* Verdict: "better" (B over A) when the CI lies above 0 and p < 0.05, "worse"
  when it lies below 0 and p < 0.05, else "within noise".

Both use a fixed seed (default 0), so a comparison prints the same numbers every
time. numpy only.
"""
from __future__ import annotations

from dataclasses import dataclass, asdict
from typing import Mapping, Sequence

import numpy as np

RESAMPLES = 10_000
SEED = 0
ALPHA = 0.05
_BATCH_CELLS = 4_000_000  # index draws per vectorised batch


def bootstrap_means(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """Means of ``resamples`` bootstrap draws of ``values`` (each draw: n with replacement)."""
    x = np.asarray(values, dtype=np.float64)
    n = x.size
    if n == 0:
        raise ValueError("no values to resample")
    rng = np.random.default_rng([seed, 1])
    out = np.empty(resamples, dtype=np.float64)
    batch = max(1, _BATCH_CELLS // n)
    for start in range(0, resamples, batch):
        stop = min(resamples, start + batch)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = x[idx].mean(axis=1)
    return out


def bootstrap_ci(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED,
                 alpha: float = ALPHA) -> tuple[float, float]:
    means = bootstrap_means(values, resamples, seed)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def randomization_p(diffs: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED) -> float:
    d = np.asarray(diffs, dtype=np.float64)
    n = d.size
    if n == 0:
        raise ValueError("no differences to test")
    observed = abs(d.mean())
    tol = 1e-12 * max(1.0, float(np.abs(d).max()))
    if n < 63 and 2 ** n <= resamples:
        patterns = ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1) * 2 - 1
        stats = np.abs((patterns * d).mean(axis=1))
        return float(np.mean(stats >= observed - tol))
    rng = np.random.default_rng([seed, 2])
    count = 0
    batch = max(1, _BATCH_CELLS // n)
    for start in range(0, resamples, batch):
        rows = min(resamples, start + batch) - start
        signs = rng.integers(0, 2, size=(rows, n), dtype=np.int8) * 2 - 1
        stats = np.abs((signs * d).mean(axis=1))
        count += int(np.count_nonzero(stats >= observed - tol))
    return (1 + count) / (1 + resamples)


def verdict(ci_low: float, ci_high: float, p: float, alpha: float = ALPHA) -> str:
    if p < alpha and ci_low > 0:
        return "better"
    if p < alpha and ci_high < 0:
        return "worse"
    return "within noise"


@dataclass
class Comparison:
    metric: str
    n: int
    mean_a: float
    mean_b: float
    diff: float          # mean_b - mean_a
    ci_low: float
    ci_high: float
    p: float
    verdict: str

    def to_dict(self) -> dict:
        return asdict(self)


def compare_paired(a: Sequence[float], b: Sequence[float], metric: str = "",
                   resamples: int = RESAMPLES, seed: int = SEED, alpha: float = ALPHA) -> Comparison:
    xa = np.asarray(a, dtype=np.float64)
    xb = np.asarray(b, dtype=np.float64)
    if xa.shape != xb.shape or xa.ndim != 1:
        raise ValueError("paired runs need the same number of questions")
    d = xb - xa
    lo, hi = bootstrap_ci(d, resamples, seed, alpha)
    p = randomization_p(d, resamples, seed)
    return Comparison(metric, int(d.size), float(xa.mean()), float(xb.mean()), float(d.mean()),
                      lo, hi, p, verdict(lo, hi, p, alpha))


def compare_runs(a: Mapping[str, Mapping[str, float]], b: Mapping[str, Mapping[str, float]],
                 metrics: Sequence[str], resamples: int = RESAMPLES, seed: int = SEED,
                 alpha: float = ALPHA) -> list[Comparison]:
    """Per-question scores of two runs (question id → metric → value), paired on shared ids."""
    shared = [q for q in a if q in b]
    if not shared:
        raise ValueError("the two runs share no question ids")
    return [compare_paired([a[q][m] for q in shared], [b[q][m] for q in shared], m, resamples, seed, alpha)
            for m in metrics]


def compare_groups(a: Mapping[str, Mapping[str, float]], b: Mapping[str, Mapping[str, float]],
                   group_of: Mapping[str, str], metric: str, resamples: int = RESAMPLES,
                   seed: int = SEED, alpha: float = ALPHA) -> list[Comparison]:
    """One paired comparison of ``metric`` per group of questions (e.g. per language
    pair), each named by its group; questions without a group are left out."""
    groups: dict[str, list[str]] = {}
    for q in a:
        if q in b and q in group_of:
            groups.setdefault(group_of[q], []).append(q)
    return [compare_paired([a[q][metric] for q in ids], [b[q][metric] for q in ids], g, resamples, seed, alpha)
            for g, ids in sorted(groups.items())]


def format_comparison(rows: Sequence[Comparison], name_a: str = "A", name_b: str = "B",
                      label: str = "metric", count: bool = False) -> str:
    """A text table; ``count`` adds each row's number of questions (for groups)."""
    n_col = f"{'n':>6}" if count else ""
    lines = [f"{label:<10}{n_col}{name_a[:12]:>13}{name_b[:12]:>13}{'diff':>9}   {'95% CI':<19}{'p':>8}  verdict"]
    for r in rows:
        ci = f"[{r.ci_low:+.3f}, {r.ci_high:+.3f}]"
        n = f"{r.n:>6}" if count else ""
        lines.append(f"{r.metric:<10}{n}{r.mean_a:>13.3f}{r.mean_b:>13.3f}{r.diff:>+9.3f}   {ci:<19}{r.p:>8.4f}  {r.verdict}")
    if rows and not count:
        lines.append(f"({rows[0].n} paired questions)")
    return "\n".join(lines)
