"""One search, as named stages:

    context → lists gathered → gate → abstain? → named lists → fusion
            → weights → reserved slots → per-document cap → rerank → top k → result

1. :func:`~chaja.search.context.build_context`: the query checked, analysed and
   encoded once;
2. :func:`~chaja.search.lists.gather`: the keyword and vector lists (side by side)
   and the keyword gate's verdict (:mod:`chaja.search.gate`);
3. abstention when both signals are weak (:mod:`chaja.search.abstain`);
4. :func:`~chaja.search.lists.candidate_lists`: every list the settings call for, by name;
5. :func:`~chaja.search.fusers.fuse`: the method ``search.fusion`` names; with calibrated
   fusion, a query with no term and no vector evidence above chance abstains, and the
   results below ``search.min_probability`` are dropped (:mod:`chaja.search.relevance`);
6. the steps after fusion (:mod:`chaja.search.after_fusion`);
7. :func:`~chaja.search.assemble.search_result`: the result, built in one place.

:func:`search` adds the multipart stage: with ``search.multipart`` a question of two
parts (:func:`chaja.search.multipart.split_question`) is searched whole and part by
part, and the three rankings are fused.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from chaja.filters import Filters
from chaja.rerank.selection import prefix_length
from chaja.search import multipart, relevance
from chaja.search.abstain import should_abstain
from chaja.search.after_fusion import capped, reranked, reserved_slots, weighted
from chaja.search.assemble import abstained, search_result
from chaja.search.context import build_context, check_top_k
from chaja.search.fusers import fuse
from chaja.search.lists import candidate_lists, gather
from chaja.search.results import SearchResult
from chaja.search.slots import reserve
from chaja.search.stage_costs import timed

if TYPE_CHECKING:
    from chaja.search.searcher import Searcher


def search_once(s: Searcher, text: str, top_k: int | None = None, filters: Filters | None = None) -> SearchResult:
    """The stages above, for one query."""
    ctx = timed("context", build_context, s, text, top_k, filters)
    got = timed("lists gathered", gather, s, ctx)
    signals = {"top_cosine": got.vector[0].score if got.vector else 0.0, "keyword_coverage": got.coverage}
    if should_abstain(signals, s.cfg):
        return abstained(ctx, got, signals, f"the best cosine is below search.abstain_below ({s.cfg.abstain_below}) "
                                            "and no keyword result holds the query's terms")
    lists = timed("named lists", candidate_lists, s, ctx, got)
    order, scores, fetched = timed("weights", weighted, s, timed("fusion", fuse, s, ctx, lists, got, signals))
    best = scores[order[0]] if order else 0.0          # the search's best fused score, before any cut
    order, reason = timed("relevance", relevance.kept, s, ctx, lists, order, scores)
    if reason:
        return abstained(ctx, got, signals, reason)
    reserved = timed("reserved slots", reserved_slots, s, ctx, got)
    if relevance.cuts(s.cfg):           # a reserved slot does not bring back a result the cut-off dropped
        kept = set(order)
        reserved = [c for c in reserved if c in kept]
    depth = s.rerank_cfg.depth if ctx.reranker is not None else 0
    order, doc_of = timed("per-document cap", capped, s, order, reserved, fetched, max(ctx.k, depth))
    chunks = dict(fetched)   # whole chunks: only those reranked or returned are read (one view)

    def read(ids: list[str]) -> None:
        chunks.update(timed("chunks read", s.store.chunks, [c for c in ids if c not in chunks]))
    moved: dict[str, tuple[float, int]] = {}
    if ctx.reranker is not None:
        read(order[:depth])
        order, moved = timed("rerank", reranked, ctx.reranker, ctx.text, order, chunks, depth)
    top, taken = reserve(order, [r for r in reserved if r in doc_of], ctx.k)
    read(top)
    return timed("result", search_result, ctx, got, lists, signals, top, chunks, scores, taken, moved, s.rerank_cfg,
                 relevance.mapping(s.cfg, best))


def search(s: Searcher, text: str, top_k: int | None = None, filters: Filters | None = None) -> SearchResult:
    """:func:`search_once`, and with ``search.multipart`` each part of a two-part
    question too, the rankings fused (:func:`chaja.search.multipart.fuse`)."""
    whole = search_once(s, text, top_k, filters)
    parts = multipart.split_question(whole.query) if s.cfg.multipart and not whole.abstained else []
    if not parts:
        return whole
    k = check_top_k(top_k) or s.cfg.top_k
    fused = multipart.fuse(whole, [search_once(s, p, top_k, filters) for p in parts], parts, k)
    if whole.reranker is not None:   # each search was reranked: the prefix is chosen over the fused order
        fused.reranker = whole.reranker
        fused.selected = prefix_length([d.best.rerank_probability or 0.0 for d in fused.documents], s.rerank_cfg)
    return fused
