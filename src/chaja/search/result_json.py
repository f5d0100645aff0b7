"""A search result as JSON (schema ``chaja.search/1``: ``chaja search --json`` and the
hub's ``POST /v1/search``) and as the one-line "why" each result carries."""
from __future__ import annotations

from chaja.search.results import DocumentResult, SearchResult
from chaja.snippets import highlights, snippet

SEARCH_SCHEMA = "chaja.search/1"


def result_json(res: SearchResult, top_k: int) -> dict:
    return {
        "schema": SEARCH_SCHEMA,
        "query": res.query,
        "terms": res.terms,
        "keyword_used": res.keyword_used,
        "lists": res.lists,
        "parts": res.parts,
        "reranker": res.reranker,
        "selected": res.selected,
        "signals": res.signals,
        "abstained": res.abstained,
        "reason": res.reason,
        "top_k": top_k,
        "results": [
            {
                "rank": d.rank, "doc_id": d.doc_id, "title": d.title, "score": d.score,
                "probability": d.best.probability,
                "chunk_id": d.best.chunk.id, "heading": list(d.best.chunk.heading_path),
                "location": d.best.chunk.location and d.best.chunk.location.as_dict(),
                "snippet": (snip := snippet(d.best.chunk.text, res.terms)),
                "highlights": highlights(snip, res.terms), "text": d.best.chunk.text,
                "keyword_rank": d.best.keyword_rank, "vector_rank": d.best.vector_rank,
                "keyword_score": d.best.keyword_score, "vector_score": d.best.vector_score,
                "heading_rank": d.best.heading_rank, "heading_score": d.best.heading_score,
                "ranks": d.best.ranks, "list_scores": d.best.scores,
                "lang": d.best.chunk.lang, "source": d.best.chunk.source,
                "doc_type": d.best.chunk.doc_type, "date": d.best.chunk.date,
                "chunks": len(d.chunks),
                "rerank_score": d.best.rerank_score, "rerank_probability": d.best.rerank_probability,
                "fused_rank": d.best.fused_rank,
                "in_selected": None if res.selected is None else d.rank <= res.selected,
            }
            for d in res.documents
        ],
    }


def _fmt_rank(r: int | None) -> str:
    return "-" if r is None else str(r)


#: the lists the why line names first, in its own words; every other list follows by name
SHOWN_FIRST = ("keyword", "vector", "heading")


def why_line(d: DocumentResult, keyword_used: bool) -> str:
    """Why a document ranked where it did: its best chunk's place in the keyword and
    vector lists, then in every other list that holds it (heading, then by name: aligned,
    aligned heading, title, translated:<lang>, ...)."""
    b = d.best
    kw = f"keyword #{_fmt_rank(b.keyword_rank)}" + ("" if keyword_used or b.keyword_rank is None else " (not fused)")
    return (f"{kw}, vector #{_fmt_rank(b.vector_rank)}"
            + (f" (cos {b.vector_score:.3f})" if b.vector_score is not None else "")
            + (f", heading #{b.heading_rank}" if b.heading_rank is not None else "")
            + "".join(f", {name.replace('_', ' ')} #{rank}" for name, rank in sorted(b.ranks.items())
                      if name not in SHOWN_FIRST)
            + f", fused {b.score:.4f}" + (f" (p {b.probability:.2f})" if b.probability is not None else "")
            + (", reserved slot" if b.reserved else "")
            + (f", reranked from #{b.fused_rank} (score {b.rerank_score:.3f}, p {b.rerank_probability:.2f})"
               if b.rerank_score is not None else "")
            + (f", {len(d.chunks)} chunks" if len(d.chunks) > 1 else ""))
