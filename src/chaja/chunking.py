"""Documents → chunks: one or more per section, each at most ``max_chars`` long.

A section (the text under one heading path) that fits becomes one chunk. A longer
one is cut at paragraph breaks, then at line or sentence ends, then hard, packing
pieces greedily up to ``max_chars``. Every chunk keeps its document id, the
document title and its heading path, so a hit can be shown and ranked in context,
and the location its text came from (the pages, slides, rows or paragraphs its
span of the section touches: :func:`chaja.documents.locate`).

A chunk's language is its document's unless the document's language was detected
(not given) and the chunk's own letters say otherwise decisively: a Korean paragraph
on an English page is Korean (:func:`chunk_language`).
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from chaja.documents import Chunk, Document, locate
from chaja.language import hangul_share

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


#: a chunk this long ends at a page or slide boundary rather than run on into the next one
PAGE_CHUNK_MIN_CHARS = 120


def split_spans(text: str, max_chars: int, breaks: list[int] | None = None) -> list[tuple[str, int, int]]:
    """Greedy packing of natural pieces into chunks of at most ``max_chars``: each
    chunk's text and the ``[start, end)`` span of ``text`` it was cut from. A chunk of
    at least :data:`PAGE_CHUNK_MIN_CHARS` also ends where a piece starts past one of
    ``breaks`` (the offsets where pages begin), so a chunk cites one page where it can."""
    chunks: list[tuple[str, int, int]] = []
    current, start, end, cursor = "", 0, 0, 0
    bounds = [0, *sorted(b for b in set(breaks or []) if 0 < b < len(text)), len(text)]
    for seg_start, seg_end in zip(bounds, bounds[1:]):
        for k, piece in enumerate(_pieces(text[seg_start:seg_end].strip(), max_chars)):
            at = text.find(piece, cursor)        # pieces are substrings, in order
            at = cursor if at < 0 else at
            cursor = at + len(piece)
            if not current:
                current, start = piece, at
            elif k == 0 and seg_start > 0 and len(current) >= PAGE_CHUNK_MIN_CHARS:
                chunks.append((current, start, end))     # a new page begins: a chunk long enough ends
                current, start = piece, at
            elif len(current) + 2 + len(piece) <= max_chars:
                current = f"{current}\n\n{piece}"
            else:
                chunks.append((current, start, end))
                current, start = piece, at
            end = cursor
    if current:
        chunks.append((current, start, end))
    return chunks


def split_text(text: str, max_chars: int) -> list[str]:
    """Greedy packing of natural pieces into chunks of at most ``max_chars``."""
    return [chunk for chunk, _, _ in split_spans(text, max_chars)]


#: a chunk with fewer letters than this keeps its document's language
MIN_LETTERS = 40


def chunk_language(doc: Document, text: str) -> str:
    """The chunk's language: its document's, unless the document's was detected rather
    than given, it is English, and the chunk has at least :data:`MIN_LETTERS` letters,
    half of them Hangul or more (a Korean paragraph on an English page).

    The other way (English chunks of Korean pages) is not taken: on the React docs it
    took 685 of 8,273 chunks, mostly code and untranslated changelogs in Korean pages,
    to English, and the natural test split fell 0.791 -> 0.782 (ko->en 0.715 -> 0.698)."""
    if not doc.lang_detected or doc.lang != "en":
        return doc.lang
    letters = sum(1 for ch in text if ch.isalpha())
    if letters >= MIN_LETTERS and hangul_share(text) >= 0.5:
        return "ko"
    return doc.lang


def iter_chunks(doc: Document, max_chars: int = 1200) -> Iterator[Chunk]:
    """The chunks of one document, numbered from 0 in reading order, one section's
    worth in memory at a time (the ingest streams long documents through this)."""
    if max_chars < 50:
        raise ValueError("chunk size must be at least 50 characters")
    n = 0
    for section in doc.sections or []:
        breaks = [at for at, loc in section.marks if at > 0 and loc.unit in ("page", "slide")]
        for text, start, end in split_spans(section.text, max_chars, breaks):
            yield Chunk(id=f"{doc.id}#{n}", doc_id=doc.id, ordinal=n, title=doc.title,
                        heading_path=section.heading_path, text=text, lang=chunk_language(doc, text),
                        source=doc.source, doc_type=doc.doc_type, date=doc.date,
                        location=locate(section.marks, start, end) if section.marks else None)
            n += 1
    if not n and doc.title:
        # A document with a title and no body is still findable by its title.
        yield Chunk(id=f"{doc.id}#0", doc_id=doc.id, ordinal=0, title=doc.title, heading_path=(),
                    text="", lang=doc.lang, source=doc.source, doc_type=doc.doc_type, date=doc.date)


def chunk_document(doc: Document, max_chars: int = 1200) -> list[Chunk]:
    """The chunks of one document, numbered from 0 in reading order."""
    return list(iter_chunks(doc, max_chars))
