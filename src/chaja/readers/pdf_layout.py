"""A PDF page's characters in reading order, as lines of text: characters → line
segments (:mod:`chaja.readers.pdf_segments`: split where a gap is wider than a word
space) → blocks → reading order (:mod:`chaja.readers.pdf_reading_order`: horizontal
bands, wide columns each read to its end, a table's rows across) → lines, each placed
between the page's top and bottom and flagged where running headers, footers and page
numbers sit. PDFium gives characters in the order the file draws them, which need not
be the order a person reads them (the Federal Register draws a page's footnotes
first)."""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from chaja.readers.pdf_reading_order import TextBlock, line_height, reading_order, text_blocks
from chaja.readers.pdf_segments import PageChars, line_segments, reading_box

#: running headers, footers and page numbers are looked for in this share of the
#: page's height at its top and at its bottom
EDGE = 0.12

_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})


# ------------------------------------------------------------------ rows → lines of text

@dataclass
class Line:
    """A line of a page's text in reading order: where it sits (0 at the top of the
    page, 1 at the bottom), whether a paragraph starts at it, and whether it is at the
    page's top or bottom edge, where running headers and page numbers are."""

    text: str
    top: float
    bottom: float
    para: bool = False
    edge: bool = False


def fix_text(text: str) -> str:
    """NFC, ligatures spelled out, surrogate halves joined or dropped, spaces single."""
    if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "ignore")
    text = unicodedata.normalize("NFC", text.translate(_LIGATURES))
    return re.sub(r"[ \t]{2,}", " ", text).strip()


def _lines(rows: list[list[TextBlock]], top: float, height: float) -> list[Line]:
    """The page's lines: a row of one block gives its segments' lines, a row of
    several (a table row) one line of its cells. A paragraph starts after a gap
    higher than half a line, or where the text goes back up (a new column)."""
    lines: list[Line] = []
    prev_y1 = prev_y0 = None
    for row in rows:
        if len(row) == 1:
            parts = [(s.text, s.y0, s.y1, s.h) for s in row[0].segs]
        else:
            text = " ".join(" ".join(s.text for s in b.segs) for b in row)
            parts = [(text, min(b.y0 for b in row), max(b.y1 for b in row), min(s.h for b in row for s in b.segs))]
        for i, (text, y0, y1, h) in enumerate(parts):
            text = fix_text(text)
            if not text:
                continue
            para = prev_y1 is not None and i == 0 and (y0 - prev_y1 > 0.5 * h or y0 < prev_y0)
            lines.append(Line(text, (y0 - top) / height, (y1 - top) / height, para))
            prev_y0, prev_y1 = y0, y1
    return lines


def _mark_edges(lines: list[Line], aside: list[str]) -> list[Line]:
    """Flag the lines where running headers and footers sit: the three topmost and
    three bottommost, when in the page's outer eighth (a running head sits within
    3 cm of the edge); text set sideways (a margin note) always."""
    by_top = sorted(range(len(lines)), key=lambda i: lines[i].top)
    for i in by_top[:3]:
        if lines[i].top < EDGE:
            lines[i].edge = True
    for i in by_top[-3:]:
        if lines[i].bottom > 1 - EDGE:
            lines[i].edge = True
    for text in aside:
        text = fix_text(text)
        if text:
            lines.append(Line(text, 1.0, 1.0, True, True))
    return lines


def page_lines(textpage, bbox: tuple[float, float, float, float]) -> tuple[list[Line], PageChars]:
    """One page's text lines in reading order, from its PDFium text page; ``bbox`` is
    the page's (left, bottom, right, top), to place each line between top and bottom."""
    chars = PageChars(textpage)
    segs, aside = line_segments(chars)
    if not segs:
        return _mark_edges([], aside), chars
    blocks = text_blocks(segs)
    h = line_height(blocks)
    rows = reading_order(blocks, gutter=max(0.5 * h, 2.0))
    _, top, _, bottom = reading_box(bbox, chars.main_quadrant())
    return _mark_edges(_lines(rows, top, max(bottom - top, 1.0)), aside), chars


def ocr_lines(text: str) -> list[Line]:
    """OCR'd text as page lines: positions by line number, the first and last two at the edges."""
    raw_lines = text.splitlines()
    n = max(len(raw_lines), 1)
    lines: list[Line] = []
    blank = False
    for i, line in enumerate(raw_lines):
        line = fix_text(line)
        if not line:
            blank = True
            continue
        lines.append(Line(line, i / n, (i + 1) / n, blank and bool(lines)))
        blank = False
    for line in lines[:2] + lines[-2:]:
        line.edge = True
    return lines
