"""Plain data that flows through chaja: documents, chunks and search hits.

A :class:`Document` is what a loader produces; :func:`chaja.chunking.chunk_document`
turns it into :class:`Chunk` objects, the unit that is indexed and retrieved.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class Section:
    """A run of body text under one heading path (empty path = before any heading)."""

    heading_path: tuple[str, ...]
    text: str


@dataclass
class Document:
    """One source document.

    ``date`` is an ISO date (``YYYY-MM-DD``) or ``None``; ``lang`` is ``"ko"``,
    ``"en"`` or another code, detected from the text when the loader is not told.
    """

    id: str
    title: str
    sections: list[Section]
    lang: str = ""
    source: str = ""
    doc_type: str = ""
    date: str | None = None
    path: str = ""

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.sections)

    def fingerprint(self) -> str:
        """Content hash: re-indexing skips a document whose fingerprint is unchanged."""
        h = hashlib.sha256()
        for part in (self.title, self.lang, self.source, self.doc_type, self.date or ""):
            h.update(part.encode("utf-8"))
            h.update(b"\x00")
        for s in self.sections:
            h.update("\x1f".join(s.heading_path).encode("utf-8"))
            h.update(b"\x00")
            h.update(s.text.encode("utf-8"))
            h.update(b"\x00")
        return h.hexdigest()


@dataclass
class Chunk:
    """A bounded piece of one document, with the context needed to show and rank it."""

    id: str
    doc_id: str
    ordinal: int
    title: str
    heading_path: tuple[str, ...]
    text: str
    lang: str = ""
    source: str = ""
    doc_type: str = ""
    date: str | None = None

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)

    @property
    def section_name(self) -> str:
        """Title and heading path, ``useState > Parameters``."""
        return " > ".join(p for p in (self.title, *self.heading_path) if p)

    def passage_text(self) -> str:
        """What the encoder sees: the section name and the body, one per line."""
        head = self.section_name
        return f"{head}\n{self.text}" if head else self.text

    def heading_passage(self) -> str | None:
        """What the heading vector encodes: the section name alone; None for a chunk
        before the first heading, which gets no heading vector (a title alone is the
        same for every such chunk)."""
        return self.section_name if any(h.strip() for h in self.heading_path) else None

    def aligned_name(self) -> str | None:
        """What the aligned section-name vector encodes: the section name, which is the
        title alone for a chunk before any heading; None when there is neither."""
        return self.section_name.strip() or None


@dataclass
class ChunkRecord:
    """A chunk ready to store: its analysed terms per field, its vector and, when
    it has a heading and the index keeps heading vectors, its heading's vector; with
    an aligned encoder (:mod:`chaja.encoders.aligned`), that encoder's vectors of the
    passage and of its section name."""

    chunk: Chunk
    title_terms: list[str]
    heading_terms: list[str]
    body_terms: list[str]
    vector: "np.ndarray"
    heading_vector: "np.ndarray | None" = None
    aligned_vector: "np.ndarray | None" = None          # the aligned encoder's vector of the passage
    aligned_heading_vector: "np.ndarray | None" = None  # ... and of the section name (or title)


@dataclass(frozen=True)
class Hit:
    """One candidate from one retrieval path: a chunk id and the path's raw score."""

    chunk_id: str
    score: float


@dataclass(frozen=True)
class DocumentInfo:
    """What a store keeps of one document besides its chunks."""

    id: str
    title: str
    lang: str
    source: str
    doc_type: str
    date: str | None
    path: str
    fingerprint: str
    chunks: int

    @property
    def chunk_ids(self) -> list[str]:
        return [f"{self.id}#{i}" for i in range(self.chunks)]


@dataclass
class StoreStats:
    documents: int
    chunks: int
    by_lang: dict[str, int] = field(default_factory=dict)
    by_source: dict[str, int] = field(default_factory=dict)
    by_doc_type: dict[str, int] = field(default_factory=dict)
    size_bytes: int = 0
