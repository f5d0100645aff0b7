"""One-chunk documents with bigram terms, for the SQLite store tests."""
from __future__ import annotations

from chaja.analysis import bigram_terms
from chaja.documents import Chunk, ChunkRecord, Document, Section


def put(store, doc_id, title, body, vec):
    doc = Document(id=doc_id, title=title, sections=[Section((), body)], lang="ko")
    c = Chunk(id=f"{doc_id}#0", doc_id=doc_id, ordinal=0, title=title, heading_path=(), text=body, lang="ko")
    store.put_document(doc, [ChunkRecord(c, bigram_terms(title), [], bigram_terms(body), vec)])
