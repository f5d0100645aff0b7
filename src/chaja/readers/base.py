"""What every reader shares: the context it reads a file in, the error that refuses
a file, and the helper that turns located pieces of text into a section.

A reader is a function ``read(ctx: ReadContext) -> Iterable[Document]``: one file's
documents (a workbook gives one a sheet), each section carrying the marks that say
which page, slide, row or paragraph its text came from (:class:`chaja.documents.Location`).
It raises :class:`ReadError` with a sentence a person can act on when it cannot
read the file; what it noticed but read anyway goes in ``ctx.notes``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from chaja.documents import Location, Section


class ReadError(Exception):
    """A file chaja refuses or cannot read; the message says why (without the path)."""


class MissingExtra(ReadError):
    """The reader's library is not installed; the message names the extra."""

    def __init__(self, what: str, extra: str, module: str):
        super().__init__(f"reading {what} needs {module}, which is not installed: pip install 'chaja[{extra}]'")
        self.extra = extra


@dataclass
class ReadContext:
    """One file being read. ``doc_id`` is the id its first (or only) document takes;
    ``notes`` collect what the reader noticed (a page with no text layer, the encoding
    it guessed), each a sentence without the path; ``progress(done, total)`` is told
    how many units (pages, slides, sheets) are read; ``ocr`` is ``"auto"`` (OCR pages
    without text when Tesseract is installed), ``"always"`` or ``"never"``."""

    path: Path
    doc_id: str
    notes: list[str] = field(default_factory=list)
    progress: Callable[[int, int], None] | None = None
    ocr: str = "auto"
    partial: bool = False     # set by a reader that skipped part of the file (a bad line, a broken sheet)
    encoding: str = ""        # a text file's encoding, as detected (chaja.readers.encoding)

    def tell(self, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(done, total)


Reader = Callable[[ReadContext], Iterable["object"]]


def located_section(heading_path: tuple[str, ...], pieces: Iterable[tuple[Location, str]],
                    joiner: str = "\n\n") -> Section | None:
    """One section from ``(location, text)`` pieces in reading order, joined by ``joiner``,
    each piece's location marked where its text starts; None when every piece is blank."""
    parts: list[str] = []
    marks: list[tuple[int, Location]] = []
    at = 0
    for loc, text in pieces:
        text = text.strip()
        if not text:
            continue
        if parts:
            at += len(joiner)
        if not marks or marks[-1][1] != loc:
            marks.append((at, loc))
        parts.append(text)
        at += len(text)
    if not parts:
        return None
    return Section(tuple(heading_path), joiner.join(parts), tuple(marks))
