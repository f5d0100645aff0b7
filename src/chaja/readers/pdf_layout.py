"""A PDF page's characters in reading order: characters → line segments (split where
a gap is wider than a word space) → blocks (consecutive segments one under the other:
a paragraph, a table cell) → reading order, by cutting the page into horizontal bands
and, where blocks stand in wide columns with a clear gutter between them, into
columns, each read to its end before the next; narrow columns (a table's) are read
row by row. PDFium gives characters in the order the file draws them, which need
not be the order a person reads them (the Federal Register draws a page's footnotes
first)."""
from __future__ import annotations

import bisect
import functools
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from statistics import median

import pypdfium2.raw as pdfium_c


#: a gap wider than this many line heights ends a line segment (a gutter, a table cell);
#: where the file typed a space there, justified text may stretch it up to SPACED_GAP
SEGMENT_GAP = 1.0
SPACED_GAP = 2.5
#: running headers, footers and page numbers are looked for in this share of the
#: page's height at its top and at its bottom
EDGE = 0.12
#: a column must be at least this many line heights wide to be read as a column
COLUMN_WIDTH = 7.0

_SPACES = frozenset((0x09, 0x20, 0xA0, 0x1680, 0x202F, 0x205F, 0x3000, *range(0x2000, 0x200B)))
_LINE_BREAKS = frozenset((0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029))
_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})


# ------------------------------------------------------------------ characters → segments

@dataclass
class _Seg:
    """Characters on one line with no wide gap between them, in reading coordinates
    (x grows along the text, y downward)."""

    x0: float
    y0: float
    x1: float
    y1: float
    chars: list[str] = field(default_factory=list)
    heights: list[float] = field(default_factory=list)
    last: tuple = ()                 # (code, x0, y0, x1, y1) of the last character added

    @functools.cached_property
    def h(self) -> float:
        """The line's height: its characters' median (asked once the segment is complete)."""
        return median(self.heights) if self.heights else max(self.y1 - self.y0, 1.0)

    @functools.cached_property
    def text(self) -> str:
        return "".join(self.chars).strip()


def _reading_box(box: tuple[float, float, float, float], quadrant: int) -> tuple[float, float, float, float]:
    """A PDF-space box (left, bottom, right, top) in the reading coordinates of text
    turned by ``quadrant`` quarter turns: x along the text, y down the lines."""
    left, bottom, right, top = box
    if quadrant == 0:
        return left, -top, right, -bottom
    if quadrant == 1:
        return bottom, left, top, right
    if quadrant == 2:
        return -right, bottom, -left, top
    return -top, -right, -bottom, -left


def char_code(code: int) -> str | None:
    """The text a character contributes; None for what is no text (NUL, BOM,
    U+FFFE/U+FFFF, replacement and private-use characters, controls, soft hyphens
    inside a line, zero-width marks other than joiners)."""
    if code < 0x20 or 0x7F <= code < 0xA0 or code in (0xAD, 0xFEFF, 0xFFFD, 0xFFFE, 0xFFFF, 0x200B):
        return None
    if 0xE000 <= code <= 0xF8FF or 0xF0000 <= code:
        return None
    return chr(code)                      # a surrogate half is joined to its pair later


class PageChars:
    """One page's characters from PDFium's text page: their codes, boxes and angles."""

    def __init__(self, textpage) -> None:
        self.count = max(pdfium_c.FPDFText_CountChars(textpage), 0)
        self.codes: list[int] = []
        self.boxes: list[tuple[float, float, float, float] | None] = []
        self.quadrants: list[int] = []
        self.hyphens: set[int] = set()
        self.typed_spaces: set[int] = set()     # spaces in the file, not put in by PDFium
        self.unmapped = 0
        rect = pdfium_c.FS_RECTF()
        for i in range(self.count):
            code = pdfium_c.FPDFText_GetUnicode(textpage, i)
            self.codes.append(code)
            if code in _SPACES or code in _LINE_BREAKS or pdfium_c.FPDFText_IsGenerated(textpage, i) == 1:
                if code in _SPACES and pdfium_c.FPDFText_IsGenerated(textpage, i) != 1:
                    self.typed_spaces.add(i)
                self.boxes.append(None)
                self.quadrants.append(-1)
                continue
            if code == 0x02 or (code in (0x2D, 0xAD) and pdfium_c.FPDFText_IsHyphen(textpage, i) == 1):
                self.hyphens.add(i)
            if pdfium_c.FPDFText_HasUnicodeMapError(textpage, i) == 1:
                self.unmapped += 1
            if pdfium_c.FPDFText_GetLooseCharBox(textpage, i, rect):
                box = (rect.left, rect.bottom, rect.right, rect.top)
                if box[2] < box[0]:
                    box = (box[2], box[1], box[0], box[3])
                if box[3] < box[1]:
                    box = (box[0], box[3], box[2], box[1])
            else:
                box = None
            self.boxes.append(box)
            # PDFium measures the angle clockwise; quadrants here turn counter-clockwise
            angle = pdfium_c.FPDFText_GetCharAngle(textpage, i)
            self.quadrants.append(-round(angle / (math.pi / 2)) % 4 if angle >= 0 else 0)

    def visible(self) -> int:
        return sum(1 for q in self.quadrants if q >= 0)

    def main_quadrant(self) -> int:
        """The quarter turn most of the page's text runs at (0: left to right, upright)."""
        counts = Counter(q for q in self.quadrants if q >= 0)
        return counts.most_common(1)[0][0] if counts else 0


def _segments(chars: PageChars) -> tuple[list[_Seg], list[str]]:
    """The page's line segments in the order PDFium gives them, for the text running
    in the page's main direction; and the runs of text at other angles (a margin note
    set sideways), which are no part of the layout."""
    main = chars.main_quadrant()
    segs: list[_Seg] = []
    aside: list[str] = []
    aside_run: list[str] = []
    cur: _Seg | None = None
    space = typed = brk = False
    for i, code in enumerate(chars.codes):
        if code in _LINE_BREAKS:
            brk = True
            if aside_run:
                aside.append("".join(aside_run))
                aside_run = []
            continue
        if code in _SPACES or chars.quadrants[i] < 0:
            space = True
            typed = typed or i in chars.typed_spaces
            if aside_run and aside_run[-1] != " ":
                aside_run.append(" ")
            continue
        ch = "-" if i in chars.hyphens else char_code(code)     # PDFium's line-end hyphen
        if ch is None:
            continue
        if chars.quadrants[i] != main:
            aside_run.append(ch)
            continue
        box = chars.boxes[i]
        if box is None:                        # no geometry: it stays with its neighbour
            if cur is not None:
                cur.chars.append(" " + ch if space else ch)
            space = typed = brk = False
            continue
        x0, y0, x1, y1 = _reading_box(box, main)
        h = max(y1 - y0, 0.5)
        if cur is not None:
            lc, lx0, ly0, lx1, ly1 = cur.last
            lh = max(ly1 - ly0, 0.5)
            if lc == code and abs(x0 - lx0) < 0.3 * max(x1 - x0, 1.0) and abs(y0 - ly0) < 0.3 * h:
                continue                       # drawn twice over itself (fake bold): once
            overlap = min(y1, ly1) - max(y0, ly0)
            gap = x0 - lx1
            ref = max(h, lh)
            # boxes may be wider than their glyphs and overlap: progress is judged by left
            # edges; a space the file typed may be stretched wide (justified text)
            widest = (SPACED_GAP if typed else SEGMENT_GAP) * ref
            same_line = overlap >= 0.5 * min(h, lh) and x0 >= lx0 - 0.2 * ref and gap <= widest
            if brk and x0 < lx1 - 0.1 * ref:   # PDFium ended the line and the text went back
                same_line = False
            if same_line:
                cur.chars.append(" " + ch if (space or brk) and cur.chars else ch)
                cur.heights.append(h)
                cur.x0, cur.y0 = min(cur.x0, x0), min(cur.y0, y0)
                cur.x1, cur.y1 = max(cur.x1, x1), max(cur.y1, y1)
                cur.last = (code, x0, y0, x1, y1)
                space = typed = brk = False
                continue
        cur = _Seg(x0, y0, x1, y1, [ch], [h], (code, x0, y0, x1, y1))
        segs.append(cur)
        space = typed = brk = False
    if aside_run:
        aside.append("".join(aside_run))
    return [s for s in segs if s.text], [t.strip() for t in aside if t.strip()]


# ------------------------------------------------------------------ segments → blocks → order

@dataclass
class _Block:
    """Consecutive segments one under the other: a paragraph, a table cell."""

    segs: list[_Seg]
    x0: float
    y0: float
    x1: float
    y1: float

    @classmethod
    def of(cls, seg: _Seg) -> "_Block":
        return cls([seg], seg.x0, seg.y0, seg.x1, seg.y1)

    def takes(self, seg: _Seg) -> bool:
        """Whether ``seg`` is this block's next line: just below its last one, starting
        where it starts (give or take an indent) or centred under it. A table cell
        under a paragraph starts elsewhere and stays apart."""
        last = self.segs[-1]
        h = min(last.h, seg.h)
        gap = seg.y0 - last.y1
        if not -0.3 * h <= gap <= 0.8 * h:
            return False
        return (abs(seg.x0 - last.x0) <= 2 * h
                or abs((seg.x0 + seg.x1) - (last.x0 + last.x1)) <= 2 * h)

    def add(self, seg: _Seg) -> None:
        self.segs.append(seg)
        self.x0, self.y0 = min(self.x0, seg.x0), min(self.y0, seg.y0)
        self.x1, self.y1 = max(self.x1, seg.x1), max(self.y1, seg.y1)


def _blocks(segs: list[_Seg]) -> list[_Block]:
    blocks: list[_Block] = []
    for seg in segs:
        if blocks and blocks[-1].takes(seg):
            blocks[-1].add(seg)
        else:
            blocks.append(_Block.of(seg))
    return blocks


def _line_height(blocks: list[_Block]) -> float:
    return median(s.h for b in blocks for s in b.segs)


def _bands(blocks: list[_Block]) -> list[list[_Block]]:
    """``blocks`` cut into horizontal bands: runs that no blank strip across the page separates."""
    bands: list[list[_Block]] = []
    bottom = -math.inf
    for b in sorted(blocks, key=lambda b: (b.y0, b.x0)):
        if bands and b.y0 < bottom:
            bands[-1].append(b)
            bottom = max(bottom, b.y1)
        else:
            bands.append([b])
            bottom = b.y1
    return bands


def _free(blocks: list[_Block], lo: float, hi: float, gutter: float) -> list[tuple[float, float]]:
    """The x-intervals of ``[lo, hi]`` no block covers, at least ``gutter`` wide."""
    free, at = [], lo
    for b in sorted(blocks, key=lambda b: b.x0):
        if b.x0 - at >= gutter:
            free.append((at, b.x0))
        at = max(at, b.x1)
    if hi - at >= gutter:
        free.append((at, hi))
    return free


def _intersect(a: list[tuple[float, float]], b: list[tuple[float, float]], gutter: float) -> list[tuple[float, float]]:
    out = []
    for a0, a1 in a:
        for b0, b1 in b:
            lo, hi = max(a0, b0), min(a1, b1)
            if hi - lo >= gutter:
                out.append((lo, hi))
    return out


def _groups(blocks: list[_Block], gutter: float) -> list[list[_Block]]:
    """Consecutive bands that share a vertical gutter go together (the lines of a
    three-column stretch, the rows of a table); a band across the page (a heading over
    the columns) stands alone, and so does a band far below the one before it (under
    a figure, a new stretch of columns begins)."""
    lo, hi = min(b.x0 for b in blocks), max(b.x1 for b in blocks)
    most_gap = 2.0 * _line_height(blocks)
    groups: list[list[_Block]] = []
    common: list[tuple[float, float]] = []
    bottom = -math.inf
    for band in _bands(blocks):
        free = _free(band, lo, hi, gutter)
        shared = _intersect(common, free, gutter) if groups else []
        # the band keeps every gutter of the group open (a table's row under the
        # columns may leave one open and bridge the other)
        kept = all(any(c0 <= a and b <= c1 for a, b in shared) for c0, c1 in common if c0 > lo and c1 < hi)
        inner = [(a, b) for a, b in shared if a > lo and b < hi]
        near = min(b.y0 for b in band) - bottom <= most_gap    # no figure or wide space between
        if groups and inner and kept and near:
            groups[-1].extend(band)
            common = shared
        else:
            groups.append(list(band))
            common = free
        bottom = max(b.y1 for b in band)
    return groups


def _columns(blocks: list[_Block], gutter: float) -> list[list[_Block]] | None:
    """``blocks`` split at the vertical gutters between them, when every piece is a
    column of text: wide, more than one line, its blocks not level with the other
    pieces' blocks. None otherwise (a table: narrow columns, or cells in rows; one
    line of cells), so that the rows are read across."""
    pieces: list[list[_Block]] = []
    right = -math.inf
    for b in sorted(blocks, key=lambda b: b.x0):
        if pieces and b.x0 - right < gutter:
            pieces[-1].append(b)
            right = max(right, b.x1)
        else:
            pieces.append([b])
            right = b.x1
    if len(pieces) < 2:
        return None
    h = _line_height(blocks)
    for piece in pieces:
        width = max(b.x1 for b in piece) - min(b.x0 for b in piece)
        if width < COLUMN_WIDTH * h or sum(len(b.segs) for b in piece) < 2:
            return None
    if _row_aligned(pieces, h) >= 0.5:
        return None
    return pieces


def _row_aligned(pieces: list[list[_Block]], h: float) -> float:
    """The share of lines in small blocks (up to four lines: a table cell) level with
    a block of another piece (same top or same middle): most lines in a table's rows,
    few in columns of running text, whose long blocks only start level."""
    def near(values: list[tuple[float, int]], value: float, within: float, piece: int) -> bool:
        at = bisect.bisect_left(values, (value - within, -1))
        while at < len(values) and values[at][0] <= value + within:
            if values[at][1] != piece:
                return True
            at += 1
        return False

    tops = sorted((b.y0, i) for i, p in enumerate(pieces) for b in p)
    middles = sorted(((b.y0 + b.y1) / 2, i) for i, p in enumerate(pieces) for b in p)
    level = sum(len(b.segs) for i, p in enumerate(pieces) for b in p
                if len(b.segs) <= 4 and (near(tops, b.y0, 0.5 * h, i) or near(middles, (b.y0 + b.y1) / 2, 0.5 * h, i)))
    return level / sum(len(b.segs) for p in pieces for b in p)


def _rows(blocks: list[_Block]) -> list[list[_Block]]:
    """Blocks side by side in rows (a table's cells), top to bottom, each row left to right."""
    rows: list[list[_Block]] = []
    top = bottom = 0.0
    for b in sorted(blocks, key=lambda b: (b.y0, b.x0)):
        if rows:
            overlap = min(bottom, b.y1) - max(top, b.y0)
            if overlap >= 0.5 * min(bottom - top, b.y1 - b.y0):
                rows[-1].append(b)
                top, bottom = min(top, b.y0), max(bottom, b.y1)
                continue
        rows.append([b])
        top, bottom = b.y0, b.y1
    return [sorted(row, key=lambda b: b.x0) for row in rows]


def _order(blocks: list[_Block], gutter: float, depth: int = 0) -> list[list[_Block]]:
    """The rows of ``blocks`` in reading order: bands top to bottom, a stretch of
    columns column by column, what is neither row by row."""
    if len(blocks) <= 1 or depth > 50:
        return _rows(blocks)
    groups = _groups(blocks, gutter)
    if len(groups) > 1:
        return [row for g in groups for row in _order(g, gutter, depth + 1)]
    columns = _columns(blocks, gutter)
    if columns is not None:
        return [row for c in columns for row in _order(c, gutter, depth + 1)]
    return _rows(blocks)


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


def _lines(rows: list[list[_Block]], top: float, height: float) -> list[Line]:
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
    segs, aside = _segments(chars)
    if not segs:
        return _mark_edges([], aside), chars
    blocks = _blocks(segs)
    h = _line_height(blocks)
    rows = _order(blocks, gutter=max(0.5 * h, 2.0))
    _, top, _, bottom = _reading_box(bbox, chars.main_quadrant())
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
