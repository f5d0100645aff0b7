"""Numbered headings of Korean official documents.

Korean government reports and notices number their headings in a fixed order (the
행정업무운영 편람's item numbering: ``1.`` → ``가.`` → ``1)`` → ``가)`` → ``(1)`` →
``(가)``, with ``Ⅰ.`` above them in reports and ``□`` for a report's top items;
statutes use ``제1장`` and ``제1조``). :func:`numbered_heading_level` tells such a
heading line from body text, for readers of formats that do not mark headings (plain
text, HWP/HWPX without outline paragraphs); :func:`block_sections` builds the
sections of a word-processor document from its paragraphs by those headings.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from chaja.documents import Location, Section
from chaja.readers.base import located_section
from chaja.readers.contents import is_contents_line

#: longest line taken for a numbered heading; longer lines are body text
MAX_HEADING_CHARS = 60
#: longest paragraph an outline (개요) paragraph shape makes a heading; longer ones are
#: body text numbered by the outline
MAX_OUTLINE_CHARS = 100
_MAX_WORDS = 10

_ROMAN = "ⅠⅡⅢⅣⅤⅥⅦⅧⅨⅩⅪⅫ"
_ORDER = "가나다라마바사아자차카타파하"       # the Hangul item letters, in order
# (numbering, level) in the order tried; the heading's words follow the numbering
_NUMBERINGS = (
    (re.compile(r"제\s*\d{1,3}\s*[편장]"), 1),
    (re.compile(rf"[{_ROMAN}]\s*[.．]?"), 1),
    (re.compile(r"(?:IX|IV|V?I{1,3}|VI{0,3}|X)\s*[.．]"), 1),
    (re.compile(r"제\s*\d{1,3}\s*[절조](?:\s*의\s*\d+)?"), 2),
    (re.compile(r"[□■]"), 2),
    (re.compile(r"\d{1,2}\s*[.．]"), 2),
    (re.compile(rf"[{_ORDER}]\s*[.．]"), 3),
    (re.compile(r"\d{1,2}\s*\)"), 4),
    (re.compile(rf"[{_ORDER}]\s*\)"), 5),
    (re.compile(r"[(（]\d{1,2}[)）]"), 6),
    (re.compile(rf"[(（][{_ORDER}][)）]"), 7),
)
# how a sentence ends: a heading names a topic, body text says something about it
_SENTENCE_END = re.compile(r"(?:다|[.。!?])\s*$")
_LETTER = re.compile(r"[^\W\d_]")
_DATE_PART = re.compile(r"\d{1,4}\s*[.．]")     # "3. 5. 공고", "1. 2024. 공고": a date, no heading


def numbered_heading_level(line: str) -> int | None:
    """The heading level of ``line`` when it opens with Korean official-document
    numbering and is short enough to be a heading: ``Ⅰ.`` and ``제1장`` 1; ``1.``,
    ``□``, ``제1조`` 2; ``가.`` 3; ``1)`` 4; ``가)`` 5; ``(1)`` 6; ``(가)`` 7.
    None for body text: a line over 60 characters or 10 words, a sentence (ending in
    ``다`` or ``.``), a bare number, or a number such as ``1.5%`` or ``2024. 3. 5.``."""
    line = line.strip()
    if not line or len(line) > MAX_HEADING_CHARS or len(line.split()) > _MAX_WORDS:
        return None
    if _SENTENCE_END.search(line):
        return None
    for numbering, level in _NUMBERINGS:
        found = numbering.match(line)
        if found is None:
            continue
        rest = line[found.end():]
        words = rest.lstrip()
        if (not words or not _LETTER.search(words) or _DATE_PART.match(words)
                or (rest[:1].isdigit() and not found.group().startswith("제"))   # "1.5%", "1)2"
                or (level == 2 and line[0] in "□■" and ("□" in words or "■" in words))):  # "□ 예 □ 아니오"
            return None
        return level
    return None


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
    found = re.match(rf"\W*(?:제\s*)?(\d+|[{_ORDER}]|[{_ROMAN}])", line)
    if found is None:
        return None
    mark = found.group(1)
    if mark.isdigit():
        return int(mark)
    return (_ORDER.index(mark) if mark in _ORDER else _ROMAN.index(mark)) + 1


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
    sections: list[Section] = []
    headings: list[str] = []
    path: list[tuple[int, str]] = []
    pieces: list[tuple[Location, str]] = []
    numbered = levels if levels is not None else [None] * len(blocks) if marked else numbered_levels(blocks)
    bare: Location | None = None              # where the heading on top is, while nothing is under it

    def keep_bare() -> None:
        """The heading on top, with nothing under it, as text under its parent."""
        if bare is not None and path:
            sections.append(Section(tuple(h for _, h in path[:-1]), path[-1][1], ((0, bare),)))

    def close() -> None:
        section = located_section(tuple(h for _, h in path), pieces)
        if section is not None:
            sections.append(section)
        pieces.clear()

    n = 0
    for block, number_level in zip(blocks, numbered):
        text = block.text.strip()
        if not text:
            continue
        if not (block.note and n):
            n += 1
        if is_contents_line(text):        # a table-of-contents entry (it keeps its number)
            continue
        level, heading = None, ""
        if marked:
            if block.outline is not None and not block.row and len(text) <= MAX_OUTLINE_CHARS:
                level, heading, text = block.outline, " ".join(text.split()), ""
        elif number_level is not None:
            first, _, rest = text.partition("\n")
            level, heading, text = number_level, " ".join(first.split()), rest.strip()
        where = block.location or Location("paragraph", n, n)
        if level is not None:
            close()
            if path and path[-1][0] >= level:
                keep_bare()
            while path and path[-1][0] >= level:
                path.pop()
            path.append((level, heading))
            headings.append(heading)
            bare = where
        if text:
            pieces.append((where, text))
            bare = None
    close()
    keep_bare()
    return sections, headings


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
        if (block.row and " | " in line) or len(line) > 80 or not _LETTER.search(line):
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
    return f"{line} {nxt}" if nxt and len(line) + len(nxt) <= 120 and not _SENTENCE_END.search(nxt) else line
