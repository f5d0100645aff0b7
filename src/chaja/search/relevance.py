"""How likely a result is to be relevant, and where search stops returning results.

**Probability.** Calibrated fusion puts every candidate on one scale (background
z-scores plus keyword evidence, :mod:`chaja.search.calibrated`), so a fused score s
means about the same on any store. A result's probability of being relevant is a
logistic regression on its fused score and its distance below the search's best, s₁:

    p(s) = σ(a·s + c·(s − s₁) + b),

a = ``search.relevance_scale``, c = ``search.relevance_gap``, b = ``search.relevance_shift``,
fit on the React and Vue natural dev splits and the React unanswerable questions (each
document of a top ten relevant when it is the gold page; ``chaja eval calibrate --fused``
fits them on a user's own run). The gap matters: the same fused score is a likely answer
at the top of a search and an unlikely one far below it (log loss on the test splits
0.31 → 0.21 on React, 0.22 → 0.16 on Vue against the score alone). Only hybrid search
with calibrated fusion has this scale; other results carry no probability.

**Cut-off.** ``search.min_probability`` (``chaja search --min-score``) drops the results
below it; the mapping is monotone in the fused score, so what is left is the top of the
ranking. When nothing is left, the search abstains and says why.

**No evidence.** A query with no term to match (``?!.,;:``) can only be answered by its
vector, and the best of N background z-scores is large by chance alone: the maximum of
N standard normal draws is about √(2 ln N). Such a query abstains unless its best
candidate's vector evidence V = Σ_f w_f z_f (:func:`chaja.search.calibrated.vector_evidence`)
exceeds Σ_f w_f · √(2 ln N), N the store's chunks (as its background sample counts them).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from chaja.config import SearchConfig
from chaja.documents import Hit
from chaja.search.calibrated import logistic
from chaja.search.calibrated_search import FIELD_OF_LIST
from chaja.search.context import QueryContext

if TYPE_CHECKING:
    from chaja.search.searcher import Searcher


def probability(score: float, top: float, cfg: SearchConfig) -> float:
    """p(s) = σ(a·s + c·(s − s₁) + b), ``top`` = s₁ (the formula above)."""
    return logistic(cfg.relevance_scale * score + cfg.relevance_gap * (score - top) + cfg.relevance_shift)


def chance_evidence(weights: Mapping[str, float], n: int) -> float:
    """Σ_f w_f · √(2 ln n): the vector evidence the best of n unrelated chunks reaches by chance."""
    return sum(w for w in weights.values() if w > 0) * math.sqrt(2.0 * math.log(max(n, 2)))


def cut(order: list[str], scores: Mapping[str, float], cfg: SearchConfig) -> list[str]:
    """``order`` without the results whose probability is below ``search.min_probability``."""
    if cfg.min_probability <= 0 or not order:
        return order
    top = scores[order[0]]
    return [c for c in order if c in scores and probability(scores[c], top, cfg) >= cfg.min_probability]


def has_probability(cfg: SearchConfig) -> bool:
    """Whether results carry a probability: hybrid search with calibrated fusion, whose fused
    scores the mapping was fit on."""
    return cfg.fusion == "calibrated" and cfg.mode == "hybrid"


def cuts(cfg: SearchConfig) -> bool:
    """Whether ``search.min_probability`` drops results: only where they carry a probability."""
    return has_probability(cfg) and cfg.min_probability > 0


def kept(s: Searcher, ctx: QueryContext, lists: dict[str, list[Hit]], order: list[str],
         scores: Mapping[str, float]) -> tuple[list[str], str | None]:
    """The fused ``order`` without what falls below ``search.min_probability``, and why the
    search abstains (None: it does not): a query with no term whose best candidate's vector
    evidence stays below chance, or no result left above the cut-off."""
    cfg = s.cfg
    if cfg.fusion == "calibrated" and cfg.mode != "keyword" and not ctx.terms and order:
        weights = {m: w for m, w in cfg.calibrated_weights.items() if m in FIELD_OF_LIST and lists.get(m)}
        if scores[order[0]] < chance_evidence(weights, s.background.get("chunk", {}).get("n", 2)):
            return [], ("the query has no words to match, and no passage is closer to it than the best of "
                        "the store's passages would be by chance")
    if cuts(cfg):
        order = cut(order, scores, cfg)
        if not order:
            return [], f"no result reaches search.min_probability ({cfg.min_probability:g})"
    return order, None


def mapping(cfg: SearchConfig, top: float) -> Callable[[float], float] | None:
    """fused score → probability of being relevant for a search whose best fused score is
    ``top`` (None where results carry no probability)."""
    return (lambda score: probability(score, top, cfg)) if has_probability(cfg) else None
