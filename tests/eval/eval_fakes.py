"""A stand-in index for testing the runner's bookkeeping (not its metrics).

It answers ``search(text)`` from a fixed table (question text → ranked chunks)
using the real result classes, so the records, run file and summary can be
checked against hand-computed values.
"""
from __future__ import annotations

import json
from pathlib import Path

from chaja.config import Config
from chaja.documents import Chunk
from chaja.search.results import ChunkResult, DocumentResult, SearchResult


def make_result(text: str, chunk_docs: list[str], keyword_used: bool = True, abstained: bool = False,
                signals: dict | None = None) -> SearchResult:
    chunks = []
    for i, doc in enumerate(chunk_docs):
        chunk = Chunk(id=f"{doc}:{i}", doc_id=doc, ordinal=i, title=f"title of {doc}", heading_path=(), text="...")
        chunks.append(ChunkResult(chunk=chunk, score=1.0 / (20 + i + 1), keyword_rank=i + 1 if i % 2 == 0 else None,
                                  vector_rank=i + 2))
    docs: dict[str, DocumentResult] = {}
    for c in chunks:
        if c.chunk.doc_id not in docs:
            docs[c.chunk.doc_id] = DocumentResult(c.chunk.doc_id, len(docs) + 1, c.chunk.title, c.score, [])
        docs[c.chunk.doc_id].chunks.append(c)
    return SearchResult(query=text, terms=text.split(), keyword_used=keyword_used, chunks=chunks,
                        documents=list(docs.values()), abstained=abstained, signals=dict(signals or {}))


class FakeIndex:
    """``table``: text → {"chunks": [doc ids of ranked chunks], "keyword_used": bool, "abstained": bool,
    "signals": {...}}."""

    def __init__(self, table: dict, config: Config | None = None):
        self.table = table
        self.config = config or Config()
        self.encoder_name = "fake-encoder"
        self.searched: list[str] = []
        self.closed = False

    @classmethod
    def from_file(cls, path: str | Path, config: Config | None = None) -> "FakeIndex":
        return cls(json.loads(Path(path).read_text(encoding="utf-8")), config)

    def search(self, text: str) -> SearchResult:
        self.searched.append(text)
        row = self.table.get(text, {"chunks": []})
        return make_result(text, row["chunks"], row.get("keyword_used", True), row.get("abstained", False),
                           row.get("signals"))

    def fingerprint(self) -> str:
        return "fake-store-0001"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.closed = True
