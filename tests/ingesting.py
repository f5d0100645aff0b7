"""Helpers for the ingest tests of both stores: an encoder that counts (and can fail),
and a long document that a small batch size stages in several batches."""
from __future__ import annotations

from chaja.documents import Document, Section


class CountingEncoder:
    """The real encoder, counting passages (to prove unchanged documents are not re-encoded);
    with ``fail_after`` it raises as a crash would once that many passages are encoded."""

    def __init__(self, inner, fail_after=None):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.passages = 0
        self.fail_after = fail_after

    def encode_queries(self, texts):
        return self.inner.encode_queries(texts)

    def encode_passages(self, texts):
        if self.fail_after is not None and self.passages + len(texts) > self.fail_after:
            raise KeyboardInterrupt("simulated crash")
        self.passages += len(texts)
        return self.inner.encode_passages(texts)


def long_document(n: int = 24, doc_id: str = "long") -> Document:
    """One section of ``n`` paragraphs, each its own chunk at a chunk size of 100."""
    rows = [f"{i}번째 문단: 배수 펌프 필터를 {i}회 청소한 기록입니다. Filter cleaning log entry {i}." for i in range(n)]
    return Document(id=doc_id, title="긴 점검 기록", sections=[Section((), "\n\n".join(rows))], lang="ko")


def small_batches(idx):
    """Batches of 8 chunks of at most 100 characters: a long document has several."""
    idx.config.encoder.batch_size = 2
    idx.config.index.chunk_chars = 100
    return idx
