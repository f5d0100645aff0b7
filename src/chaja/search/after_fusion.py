"""The stages after fusion, each a named step of the fused order:

1. :func:`weighted`: source and freshness multipliers scale fused scores
   (:mod:`chaja.search.weights`), a stable re-sort;
2. :func:`reserved_slots`: the chunks given places first: the best title hit when it
   holds ``gate_share`` of the query's terms (``title_slot``), and the first
   ``round(k × reserved_keyword_share)`` keyword hits (:mod:`chaja.search.slots`);
3. :func:`capped`: at most ``search.chunk_cap`` chunks a document (:mod:`chaja.search.grouping`);
4. :func:`reranked`: the first ``rerank.depth`` candidates in the reranker's order
   (:mod:`chaja.rerank`; ties keep the fused order);
5. :func:`~chaja.search.slots.reserve`: the reserved chunks first, then the order, to k.
"""
from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from chaja.rerank import Reranker, passage_text, rerank_order
from chaja.search.context import QueryContext
from chaja.search.gate import term_coverage
from chaja.search.grouping import cap_per_document
from chaja.search.lists import Gathered
from chaja.search.slots import keyword_slot_count
from chaja.search.weights import chunk_multiplier

if TYPE_CHECKING:
    from chaja.search.searcher import Searcher


def weighted(s: Searcher, fused: list[tuple[str, float]]) -> tuple[list[str], dict[str, float], dict]:
    """Apply source and freshness multipliers and re-sort (stable); also returns the
    chunks it had to read, so the caller does not read them again."""
    cfg = s.cfg
    scores = dict(fused)
    if not (cfg.source_weights or cfg.half_life_days):
        return [cid for cid, _ in fused], scores, {}
    now = date.fromisoformat(cfg.now) if cfg.now else date.today()
    chunks = s.store.chunks([cid for cid, _ in fused])
    for cid in scores:
        if cid in chunks:
            scores[cid] *= chunk_multiplier(chunks[cid], cfg.source_weights, cfg.half_life_days, now)
    order = sorted((cid for cid, _ in fused), key=lambda c: -scores[c])
    return order, scores, chunks


def reserved_slots(s: Searcher, ctx: QueryContext, got: Gathered) -> list[str]:
    """The chunks placed before fused order: the title slot's, then the keyword slots'."""
    cfg = s.cfg
    reserved: list[str] = []
    if cfg.title_slot and got.title:
        best = got.title[0].chunk_id
        if term_coverage(ctx.terms, ctx.terms_of([best]).get(best, set())) >= cfg.gate_share:
            reserved.append(best)
    if cfg.reserved_keyword_share > 0 and got.keyword_used:
        reserved += [h.chunk_id for h in got.keyword[: keyword_slot_count(ctx.k, cfg.reserved_keyword_share)]]
    return reserved


def capped(s: Searcher, order: list[str], reserved: list[str], fetched: dict,
           want: int) -> tuple[list[str], dict[str, str]]:
    """The fused order with at most ``search.chunk_cap`` chunks a document, and the
    document of each chunk read to know it (``store.doc_ids``, no text; ``fetched``:
    chunks already read): 4·``want`` candidates first, four times more while fewer than
    ``want`` documents remain and candidates are left (one long document can fill the
    first ones)."""
    limit = 4 * want + len(reserved)
    doc_of = {cid: c.doc_id for cid, c in fetched.items()}
    while True:
        doc_of.update(s.store.doc_ids([cid for cid in dict.fromkeys(order[:limit] + reserved) if cid not in doc_of]))
        kept = cap_per_document([c for c in order[:limit] if c in doc_of], doc_of, s.cfg.chunk_cap)
        if len(kept) >= want + len(reserved) or limit >= len(order):
            return kept, doc_of
        limit *= 4


def reranked(reranker: Reranker, text: str, order: list[str], chunks: dict,
             depth: int) -> tuple[list[str], dict[str, tuple[float, int]]]:
    """The first ``depth`` candidates in the reranker's order (ties keep the fused
    order), the rest after them as fused; and each reranked chunk's (score, fused rank)."""
    pool = order[:depth]
    scores = reranker.score(text, [passage_text(chunks[c]) for c in pool])
    new = rerank_order(scores)
    found = {pool[i]: (float(scores[i]), i + 1) for i in range(len(pool))}
    return [pool[i] for i in new] + order[depth:], found
