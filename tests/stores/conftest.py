"""Builders for the store tests: documents, chunk records and unit vectors (the
PostgreSQL server they run against is started by the top-level conftest)."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.analysis import bigram_terms
from chaja.documents import Chunk, ChunkRecord, Document, Section

DIM = 8


# ---- builders ---------------------------------------------------------------

def unit(seed: int | str, dim: int = DIM) -> np.ndarray:
    """A reproducible random unit vector."""
    if isinstance(seed, str):
        seed = int.from_bytes(seed.encode("utf-8")[:8].ljust(8, b"\0"), "little") % (2**32)
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def make_doc(doc_id: str, title: str, bodies: list[str], *, headings: list[tuple[str, ...]] | None = None,
             lang: str = "ko", source: str = "test", doc_type: str = "note", date: str | None = "2024-05-01",
             vectors: list[np.ndarray] | None = None,
             locations: list | None = None) -> tuple[Document, list[ChunkRecord]]:
    """One document whose chunks are ``bodies``, with bigram terms and unit vectors
    (and ``locations``, one :class:`Location` or None a chunk)."""
    headings = headings or [()] * len(bodies)
    doc = Document(id=doc_id, title=title, lang=lang, source=source, doc_type=doc_type, date=date,
                   sections=[Section(h, b) for h, b in zip(headings, bodies)], path=f"{doc_id}.txt")
    records = []
    for i, (h, body) in enumerate(zip(headings, bodies)):
        chunk = Chunk(id=f"{doc_id}#{i}", doc_id=doc_id, ordinal=i, title=title, heading_path=tuple(h),
                      text=body, lang=lang, source=source, doc_type=doc_type, date=date,
                      location=locations[i] if locations is not None else None)
        vec = vectors[i] if vectors is not None else unit(f"{doc_id}#{i}")
        records.append(ChunkRecord(chunk=chunk, title_terms=bigram_terms(title),
                                   heading_terms=bigram_terms(" ".join(h)),
                                   body_terms=bigram_terms(body), vector=vec))
    return doc, records


@pytest.fixture
def build():
    """The builders above, for test modules (conftest is not imported by name)."""
    import types

    return types.SimpleNamespace(DIM=DIM, unit=unit, make_doc=make_doc)
