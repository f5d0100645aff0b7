"""How far judges agree on graded pairs.

**Cohen's kappa** (Cohen 1960, "A coefficient of agreement for nominal scales"), two
judges over the pairs both graded:

    κ = (p_o − p_e) / (1 − p_e),   p_o = share of pairs with equal grades,
    p_e = Σ_g p_A(g) · p_B(g)      (each judge's own share of grade g)

With ``weights="quadratic"`` disagreements count by (g_A − g_B)² / (G − 1)² over the
G = 4 grades (Cohen 1968, weighted kappa): κ_w = 1 − Σ w·o / Σ w·e.

**Krippendorff's alpha** (Krippendorff, *Content Analysis*, 2004, ch. 11; Hayes &
Krippendorff 2007), any number of judges, missing grades allowed (an abstention is a
missing grade):

    α = 1 − D_o / D_e
    D_o = (1/n) Σ_u Σ_{c≠k in u} δ(c, k) / (m_u − 1)
    D_e = (1/(n(n − 1))) Σ_{c≠k over all pairable values} δ(c, k)

over units u with m_u ≥ 2 grades, n the number of pairable values; δ is 0/1 for the
nominal metric, (c − k)² for the interval metric, and for the ordinal metric the
squared count of values between c and k (both halved), as Krippendorff defines it.
Both are 1 for perfect agreement and 0 for agreement at chance; None when undefined
(fewer than two pairable grades, or every grade the same: no expected disagreement).
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

GRADES = (0, 1, 2, 3)


def cohen_kappa(a: Sequence[int], b: Sequence[int], weights: str | None = None) -> float | None:
    """κ of two equally long grade lists (only pairs both judges graded)."""
    if len(a) != len(b):
        raise ValueError("the two judges' grade lists differ in length")
    n = len(a)
    if n == 0:
        return None
    if weights not in (None, "quadratic"):
        raise ValueError(f"weights must be None or 'quadratic', not {weights!r}")
    span = (max(GRADES) - min(GRADES)) ** 2

    def w(x: int, y: int) -> float:
        return float(x != y) if weights is None else (x - y) ** 2 / span

    pa, pb = Counter(a), Counter(b)
    observed = math.fsum(w(x, y) for x, y in zip(a, b)) / n
    expected = math.fsum(pa[x] * pb[y] * w(x, y) for x in pa for y in pb) / (n * n)
    if expected == 0:
        return None
    return 1.0 - observed / expected


def _ordinal_delta(counts: Mapping[int, int]):
    values = sorted(counts)

    def delta(c: int, k: int) -> float:
        lo, hi = min(c, k), max(c, k)
        if lo == hi:
            return 0.0
        between = math.fsum(counts[g] for g in values if lo <= g <= hi) - (counts[lo] + counts[hi]) / 2
        return between ** 2

    return delta


def krippendorff_alpha(units: Sequence[Sequence[int]], metric: str = "ordinal") -> float | None:
    """α over ``units`` (each the grades one pair received; missing grades left out)."""
    pairable = [list(u) for u in units if len(u) >= 2]
    counts = Counter(v for u in pairable for v in u)
    n = sum(counts.values())
    if n < 2:
        return None
    if metric == "nominal":
        def delta(c, k):
            return float(c != k)
    elif metric == "interval":
        def delta(c, k):
            return float((c - k) ** 2)
    elif metric == "ordinal":
        delta = _ordinal_delta(counts)
    else:
        raise ValueError(f"metric must be nominal, ordinal or interval, not {metric!r}")
    observed = 0.0
    for u in pairable:
        m = len(u)
        observed += math.fsum(delta(u[i], u[j]) for i in range(m) for j in range(m) if i != j) / (m - 1)
    observed /= n
    expected = math.fsum(counts[c] * counts[k] * delta(c, k) for c in counts for k in counts if c != k)
    expected /= n * (n - 1)
    if expected == 0:
        return None
    return 1.0 - observed / expected
