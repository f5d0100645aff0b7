"""Sections of a word-processor document from its paragraphs, by the headings the file
marks (an HWP outline paragraph) or the Korean official-document numbering of its lines
(:func:`~chaja.readers.numbering.numbered_heading_level`), for readers of formats that
do not mark headings (plain text, HWP/HWPX without outline paragraphs, PDF).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from chaja.documents import Location, Section
from chaja.readers.base import located_section
from chaja.readers.contents import is_contents_line
from chaja.readers.numbering import LETTER, ORDER, ROMAN, SENTENCE_END, numbered_heading_level

#: longest paragraph an outline (개요) paragraph shape makes a heading; longer ones are
#: body text numbered by the outline
MAX_OUTLINE_CHARS = 100


@dataclass
class Block:
    """One paragraph-like piece of a word-processor document in reading order: a
    paragraph, a table row, a note. ``outline`` is the heading level the file itself
    marks (an HWP 개요 paragraph), ``note`` a block that belongs to the one before it
    (a footnote: it takes that paragraph's number), ``row`` a table row (never a
    heading); ``location`` where the block is, for a format that counts pages rather
    than paragraphs (a PDF's), else the block is marked with its paragraph number."""

    text: str
    outline: int | None = None
    note: bool = False
    row: bool = False
    location: Location | None = None


def numbered_levels(blocks: list[Block]) -> list[int | None]:
    """Each block's numbered-heading level, None for body text. Paragraphs numbered in
    sequence one after the other ("1." then "2.", "□" then "□") are a list (a table of
    contents, the items of a clause), not headings: a heading has text or a subheading
    under it. A number that starts again ("3." then "1.") ends the list."""
    firsts = [b.text.strip().split("\n", 1)[0] for b in blocks]
    levels = [None if b.row or b.note else numbered_heading_level(first) for b, first in zip(blocks, firsts)]
    shown = [i for i, b in enumerate(blocks) if b.text.strip()]
    listed = set()
    for a, b in zip(shown, shown[1:]):
        if (levels[a] is not None and levels[a] == levels[b] and "\n" not in blocks[a].text.strip()
                and _ordinal(firsts[b]) == _next(_ordinal(firsts[a]))):
            listed.update((a, b))
    return [None if i in listed else level for i, level in enumerate(levels)]


def _ordinal(line: str) -> int | None:
    """The number a numbered line counts: 3 for "3.", "(3)", "다." and "Ⅲ."; None for "□"."""
    found = re.match(rf"\W*(?:제\s*)?(\d+|[{ORDER}]|[{ROMAN}])", line)
    if found is None:
        return None
    mark = found.group(1)
    if mark.isdigit():
        return int(mark)
    return (ORDER.index(mark) if mark in ORDER else ROMAN.index(mark)) + 1


def _next(ordinal: int | None) -> int | None:
    return None if ordinal is None else ordinal + 1


def block_sections(blocks: list[Block], marked: bool,
                   levels: list[int | None] | None = None) -> tuple[list[Section], list[str]]:
    """Sections of ``blocks`` by their headings, and the headings in order.

    With ``marked`` the file's own outline levels make the headings (of paragraphs up
    to :data:`MAX_OUTLINE_CHARS` long), else the numbered headings
    :func:`numbered_heading_level` finds at the start of a paragraph (its first line;
    the rest stays body text), except runs of numbered paragraphs in sequence, which
    are lists. The blocks are numbered 1.. as paragraphs, a note taking its paragraph's
    number; blank blocks take none; each is marked with its own ``location`` or that
    number. ``levels`` (a reader's own heading levels, each block's first line the
    heading) replaces the numbered headings. A heading's text goes into the heading path,
    not the body; a heading with nothing under it stays as text under its parent."""
    numbered = levels if levels is not None else [None] * len(blocks) if marked else numbered_levels(blocks)
    built = _Sections()
    n = 0
    for block, number_level in zip(blocks, numbered):
        text = block.text.strip()
        if not text:
            continue
        if not (block.note and n):
            n += 1
        if is_contents_line(text):        # a table-of-contents entry (it keeps its number)
            continue
        level, heading, text = _heading_of(block, text, marked, number_level)
        where = block.location or Location("paragraph", n, n)
        if level is not None:
            built.open(level, heading, where)
        if text:
            built.add(where, text)
    return built.finish()


def _heading_of(block: Block, text: str, marked: bool, number_level: int | None) -> tuple[int | None, str, str]:
    """(level, heading, the text left under it) for a block that is a heading, else
    ``(None, "", text)``: an outline paragraph short enough is all heading; a numbered
    one gives its first line to the heading and keeps the rest as text."""
    if marked:
        if block.outline is not None and not block.row and len(text) <= MAX_OUTLINE_CHARS:
            return block.outline, " ".join(text.split()), ""
    elif number_level is not None:
        first, _, rest = text.partition("\n")
        return number_level, " ".join(first.split()), rest.strip()
    return None, "", text


class _Sections:
    """Sections as the headings open them: the heading path, the pieces of text under
    it, and where the heading on top is while nothing is under it (``bare``)."""

    def __init__(self) -> None:
        self.sections: list[Section] = []
        self.headings: list[str] = []
        self.path: list[tuple[int, str]] = []
        self.pieces: list[tuple[Location, str]] = []
        self.bare: Location | None = None

    def open(self, level: int, heading: str, where: Location) -> None:
        """A heading at ``level``: it ends the section before and takes its place in the path."""
        self._close()
        if self.path and self.path[-1][0] >= level:
            self._keep_bare()
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        self.path.append((level, heading))
        self.headings.append(heading)
        self.bare = where

    def add(self, where: Location, text: str) -> None:
        self.pieces.append((where, text))
        self.bare = None

    def finish(self) -> tuple[list[Section], list[str]]:
        self._close()
        self._keep_bare()
        return self.sections, self.headings

    def _keep_bare(self) -> None:
        """The heading on top, with nothing under it, as text under its parent."""
        if self.bare is not None and self.path:
            self.sections.append(Section(tuple(h for _, h in self.path[:-1]), self.path[-1][1], ((0, self.bare),)))

    def _close(self) -> None:
        section = located_section(tuple(h for _, h in self.path), self.pieces)
        if section is not None:
            self.sections.append(section)
        self.pieces.clear()


_NOT_TITLE = re.compile(r"(?:.*제\s*[\d-]+\s*호|[\d\s.년월일()-]+|[<〈(\[【]?\s*목\s*차\s*[>〉)\]】]?)$")
_TITLE_LABEL = re.compile(r"[<〈(\[【]?\s*제\s*목\s*[>〉)\]】:]?\s*$")


def document_title(meta_title: str, blocks: list[Block], headings: list[str], fallback: str) -> str:
    """A document's title: the file's own (its metadata) when the text bears it out (a
    template's stale title does not appear in it); else the first short paragraph (or
    one-cell table row) before the first heading, passing over a document number
    ("공고 제2024-8호"), a date and "목차", taking the paragraph after a "제목" label and
    joining a title set on two lines; else the first heading; else ``fallback``."""
    squeezed = "".join("".join(b.text.split()) for b in blocks)
    meta = " ".join(meta_title.split())
    if meta and len(meta) <= 200 and "".join(meta.split()) in squeezed:
        return meta
    first_heading = headings[0] if headings else None
    label = False
    for i, block in enumerate(blocks):
        line = " ".join(block.text.strip().split("\n", 1)[0].split())
        if not line:
            continue
        if line == first_heading:
            break
        if (block.row and " | " in line) or len(line) > 80 or not LETTER.search(line):
            label = False
            continue
        if _TITLE_LABEL.match(line):
            label = True
            continue
        if label or not _NOT_TITLE.match(line):
            return _continued(line, blocks[i + 1:])
    return first_heading or fallback


def _continued(line: str, following: list[Block]) -> str:
    """A title set on two lines ("… 의료기기 및" / "보고 방법 일부개정고시(안)") joined."""
    if not line.endswith(("및", ",")):
        return line
    nxt = next((" ".join(b.text.split()) for b in following if b.text.strip()), "")
    return f"{line} {nxt}" if nxt and len(line) + len(nxt) <= 120 and not SENTENCE_END.search(nxt) else line
