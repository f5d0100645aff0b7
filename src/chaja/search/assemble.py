"""A search's result, built in one place: each returned chunk with its fused score,
its rank and raw score in every list that holds it, whether a reserved slot placed
it and what the reranker made of it; the chunks grouped into documents; the selected
prefix (:mod:`chaja.rerank.selection`)."""
from __future__ import annotations

from collections.abc import Callable

from chaja.config import RerankConfig
from chaja.documents import Chunk, Hit
from chaja.rerank import Reranker
from chaja.rerank.selection import mapped, prefix_length
from chaja.search.context import QueryContext
from chaja.search.fusion import ranks
from chaja.search.grouping import group_by_document
from chaja.search.lists import Gathered
from chaja.search.results import ChunkResult, SearchResult


def _chunk_results(top: list[str], chunks: dict[str, Chunk], scores: dict[str, float], taken: set[str],
                   lists: dict[str, list[Hit]], got: Gathered) -> list[ChunkResult]:
    heading = got.vectors.get("heading", [])
    kr, vr, tr, hr = ranks(got.keyword), ranks(got.vector), ranks(got.title), ranks(heading)
    list_ranks = {m: ranks(h) for m, h in lists.items()}
    list_scores = {m: {h.chunk_id: h.score for h in reversed(hits)} for m, hits in lists.items()}
    ks = {h.chunk_id: h.score for h in got.keyword}
    vs = {h.chunk_id: h.score for h in got.vector}
    hs = {h.chunk_id: h.score for h in heading}
    return [
        ChunkResult(chunk=chunks[cid], score=scores.get(cid, 0.0), keyword_rank=kr.get(cid),
                    vector_rank=vr.get(cid), title_rank=tr.get(cid) if got.title else None,
                    keyword_score=ks.get(cid), vector_score=vs.get(cid), heading_rank=hr.get(cid),
                    heading_score=hs.get(cid), reserved=cid in taken,
                    ranks={m: r[cid] for m, r in list_ranks.items() if cid in r},
                    scores={m: sc[cid] for m, sc in list_scores.items() if cid in sc})
        for cid in top
    ]


def search_result(ctx: QueryContext, got: Gathered, lists: dict[str, list[Hit]], signals: dict[str, float],
                  top: list[str], chunks: dict[str, Chunk], scores: dict[str, float], taken: set[str],
                  reranked: dict[str, tuple[float, int]], rerank_cfg: RerankConfig,
                  relevance: Callable[[float], float] | None = None) -> SearchResult:
    """The :class:`SearchResult` of the top chunks ``top`` (read into ``chunks``); with
    ``relevance`` (fused score → probability), each chunk's probability of being relevant."""
    results = _chunk_results(top, chunks, scores, taken, lists, got)
    if relevance is not None:
        for r in results:
            r.probability = relevance(r.score)
    documents = group_by_document(results)
    reranker: Reranker | None = ctx.reranker
    selected = None
    if reranker is not None:
        for r in results:
            if r.chunk.id in reranked:
                r.rerank_score, r.fused_rank = reranked[r.chunk.id]
                r.rerank_probability = mapped(r.rerank_score, rerank_cfg.scale, rerank_cfg.shift)
        selected = prefix_length([d.best.rerank_probability or 0.0 for d in documents], rerank_cfg)
    return SearchResult(query=ctx.text, terms=ctx.terms, keyword_used=got.keyword_used,
                        chunks=results, documents=documents, signals=signals,
                        lists=[name for name, hits in lists.items() if hits],
                        reranker=reranker.name if reranker is not None else None, selected=selected)


def abstained(ctx: QueryContext, got: Gathered, signals: dict[str, float], reason: str) -> SearchResult:
    """The result of a search that judged nothing relevant, and why (:mod:`chaja.search.abstain`,
    :mod:`chaja.search.relevance`)."""
    return SearchResult(query=ctx.text, terms=ctx.terms, keyword_used=got.keyword_used, chunks=[], documents=[],
                        abstained=True, reason=reason, signals=signals)
