"""Ranked chunks → ranked documents: a document takes the rank of its first
(best) chunk, and keeps its chunks in order (as the production setup scores
"the top ten chunks grouped into documents in order")."""
from __future__ import annotations

from chaja.search.results import ChunkResult, DocumentResult


def group_by_document(chunks: list[ChunkResult]) -> list[DocumentResult]:
    docs: dict[str, DocumentResult] = {}
    for c in chunks:
        d = docs.get(c.chunk.doc_id)
        if d is None:
            d = docs[c.chunk.doc_id] = DocumentResult(
                doc_id=c.chunk.doc_id, rank=len(docs) + 1, title=c.chunk.title, score=c.score)
        d.chunks.append(c)
    return list(docs.values())


def cap_per_document(order: list[str], doc_of: dict[str, str], cap: int) -> list[str]:
    """Keep at most ``cap`` chunks of each document (0 = no cap), order preserved."""
    if cap <= 0:
        return order
    seen: dict[str, int] = {}
    out = []
    for cid in order:
        d = doc_of[cid]
        if seen.get(d, 0) < cap:
            seen[d] = seen.get(d, 0) + 1
            out.append(cid)
    return out
