"""Documents → chunks: one or more per section, each at most ``max_chars`` long.

A section (the text under one heading path) that fits becomes one chunk. A longer
one is cut at paragraph breaks, then at line or sentence ends, then hard, packing
pieces greedily up to ``max_chars``. Every chunk keeps its document id, the
document title and its heading path, so a hit can be shown and ranked in context.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from chaja.documents import Chunk, Document

_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|(?<=[다요죠음])\.\s*|\n")


def _pieces(text: str, max_chars: int) -> list[str]:
    """Split text into units no longer than max_chars, preferring natural breaks."""
    if len(text) <= max_chars:
        return [text]
    for splitter in (re.compile(r"\n\s*\n"), re.compile(r"\n"), _SENTENCE_END):
        parts = [p for p in splitter.split(text) if p and p.strip()]
        if len(parts) > 1:
            out: list[str] = []
            for p in parts:
                out.extend(_pieces(p.strip(), max_chars))
            return out
    return [text[i : i + max_chars] for i in range(0, len(text), max_chars)]


def split_text(text: str, max_chars: int) -> list[str]:
    """Greedy packing of natural pieces into chunks of at most ``max_chars``."""
    chunks: list[str] = []
    current = ""
    for piece in _pieces(text.strip(), max_chars):
        if not current:
            current = piece
        elif len(current) + 2 + len(piece) <= max_chars:
            current = f"{current}\n\n{piece}"
        else:
            chunks.append(current)
            current = piece
    if current:
        chunks.append(current)
    return chunks


def iter_chunks(doc: Document, max_chars: int = 1200) -> Iterator[Chunk]:
    """The chunks of one document, numbered from 0 in reading order, one section's
    worth in memory at a time (the ingest streams long documents through this)."""
    if max_chars < 50:
        raise ValueError("chunk size must be at least 50 characters")
    n = 0
    for section in doc.sections or []:
        for text in split_text(section.text, max_chars):
            yield Chunk(id=f"{doc.id}#{n}", doc_id=doc.id, ordinal=n, title=doc.title,
                        heading_path=section.heading_path, text=text, lang=doc.lang,
                        source=doc.source, doc_type=doc.doc_type, date=doc.date)
            n += 1
    if not n and doc.title:
        # A document with a title and no body is still findable by its title.
        yield Chunk(id=f"{doc.id}#0", doc_id=doc.id, ordinal=0, title=doc.title, heading_path=(),
                    text="", lang=doc.lang, source=doc.source, doc_type=doc.doc_type, date=doc.date)


def chunk_document(doc: Document, max_chars: int = 1200) -> list[Chunk]:
    """The chunks of one document, numbered from 0 in reading order."""
    return list(iter_chunks(doc, max_chars))
