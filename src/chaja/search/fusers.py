"""Fusion methods by name (``search.fusion``): each turns a query's named lists into
one ranked list of ``(chunk id, score)``.

- ``calibrated`` (the default): every candidate judged by every list on one scale
  (:mod:`chaja.search.calibrated`, :mod:`chaja.search.calibrated_search`); records
  g(q) in the search's signals as ``keyword_share``;
- ``convex``: weighted min-max normalised scores (:func:`chaja.search.fusion.convex`);
- ``rrf``: Reciprocal Rank Fusion, ``Σ_m w_m / (k + r_m(d))`` (:func:`chaja.search.fusion.rrf`).

A new method is one function ``(searcher, context, lists, gathered, signals) → fused``
and one entry in :data:`FUSIONS`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from chaja.documents import Hit
from chaja.search.calibrated_search import calibrated_fusion, translated_values
from chaja.search.context import QueryContext
from chaja.search.fusion import convex, rrf
from chaja.search.gate import term_coverage
from chaja.search.lists import Gathered
from chaja.search.query import script_groups

if TYPE_CHECKING:
    from chaja.search.searcher import Searcher

Fused = list[tuple[str, float]]


def _rrf(s: Searcher, ctx: QueryContext, lists: dict[str, list[Hit]], got: Gathered, signals: dict) -> Fused:
    return rrf(lists, k=s.cfg.rrf_k, weights=s.cfg.list_weights or None)


def _convex(s: Searcher, ctx: QueryContext, lists: dict[str, list[Hit]], got: Gathered, signals: dict) -> Fused:
    return convex(lists, weights=s.cfg.list_weights or None, normalization=s.cfg.normalization)


def _calibrated(s: Searcher, ctx: QueryContext, lists: dict[str, list[Hit]], got: Gathered, signals: dict) -> Fused:
    held = ctx.terms_of([h.chunk_id for m in ("keyword", "title") for h in lists.get(m, [])])
    shares = {cid: term_coverage(ctx.terms, t) for cid, t in held.items()}
    queries = {"chunk": ctx.qv, "heading": ctx.qv, "aligned": ctx.qa, "aligned_heading": ctx.qa}
    # a Korean question that names Latin-script terms (APIs, commands): its keyword list's best Korean hit
    # holds g(q) up, since those words pull its vector toward English pages (chaja.search.calibrated.held_share)
    mixed_korean = ctx.qlang == "ko" and len(script_groups(ctx.terms)) == 2
    fused, signals["keyword_share"] = calibrated_fusion(s, lists, queries, shares, ctx.qlang,
                                                        translated_values(s, got.translated), mixed_korean,
                                                        scored_only=got.scored_only)
    return fused


FUSIONS: dict[str, Callable[..., Fused]] = {"calibrated": _calibrated, "convex": _convex, "rrf": _rrf}


def fuse(s: Searcher, ctx: QueryContext, lists: dict[str, list[Hit]], got: Gathered, signals: dict) -> Fused:
    """The lists fused by the method ``search.fusion`` names."""
    method = FUSIONS.get(s.cfg.fusion)
    if method is None:
        raise ValueError(f"search.fusion must be calibrated, convex or rrf, not {s.cfg.fusion!r}")
    return method(s, ctx, lists, got, signals)
