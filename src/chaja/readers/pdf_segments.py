"""A PDF page's characters → line segments: the characters PDFium gives, in the order the
file draws them, joined along each line until a gap wider than a word space (a gutter,
a table cell) ends the segment; text set at another angle than most of the page's (a
margin note set sideways) is kept apart."""
from __future__ import annotations

import functools
import math
from collections import Counter
from dataclasses import dataclass, field
from statistics import median

import pypdfium2.raw as pdfium_c


#: a gap wider than this many line heights ends a line segment (a gutter, a table cell);
#: where the file typed a space there, justified text may stretch it up to SPACED_GAP
SEGMENT_GAP = 1.0
SPACED_GAP = 2.5

_SPACES = frozenset((0x09, 0x20, 0xA0, 0x1680, 0x202F, 0x205F, 0x3000, *range(0x2000, 0x200B)))
_LINE_BREAKS = frozenset((0x0A, 0x0B, 0x0C, 0x0D, 0x85, 0x2028, 0x2029))


@dataclass
class Segment:
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


def reading_box(box: tuple[float, float, float, float], quadrant: int) -> tuple[float, float, float, float]:
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
            self.boxes.append(self._box(textpage, i, rect))
            # PDFium measures the angle clockwise; quadrants here turn counter-clockwise
            angle = pdfium_c.FPDFText_GetCharAngle(textpage, i)
            self.quadrants.append(-round(angle / (math.pi / 2)) % 4 if angle >= 0 else 0)

    @staticmethod
    def _box(textpage, i: int, rect) -> tuple[float, float, float, float] | None:
        """Character ``i``'s loose box (left, bottom, right, top), or None without one."""
        if not pdfium_c.FPDFText_GetLooseCharBox(textpage, i, rect):
            return None
        box = (rect.left, rect.bottom, rect.right, rect.top)
        if box[2] < box[0]:
            box = (box[2], box[1], box[0], box[3])
        if box[3] < box[1]:
            box = (box[0], box[3], box[2], box[1])
        return box

    def visible(self) -> int:
        return sum(1 for q in self.quadrants if q >= 0)

    def main_quadrant(self) -> int:
        """The quarter turn most of the page's text runs at (0: left to right, upright)."""
        counts = Counter(q for q in self.quadrants if q >= 0)
        return counts.most_common(1)[0][0] if counts else 0


def line_segments(chars: PageChars) -> tuple[list[Segment], list[str]]:
    """The page's line segments in the order PDFium gives them, for the text running
    in the page's main direction; and the runs of text at other angles (a margin note
    set sideways), which are no part of the layout."""
    return _Segmenter(chars).run()


class _Segmenter:
    """One pass over a page's characters: the segment being built, the run of text at
    another angle, and what came between the last character and the next (a space, a
    space the file typed, a line break PDFium put in)."""

    def __init__(self, chars: PageChars) -> None:
        self.chars = chars
        self.main = chars.main_quadrant()
        self.segs: list[Segment] = []
        self.aside: list[str] = []
        self.aside_run: list[str] = []
        self.cur: Segment | None = None
        self.space = self.typed = self.brk = False

    def run(self) -> tuple[list[Segment], list[str]]:
        chars = self.chars
        for i, code in enumerate(chars.codes):
            if code in _LINE_BREAKS:
                self.brk = True
                self._end_aside_run()
            elif code in _SPACES or chars.quadrants[i] < 0:
                self.space = True
                self.typed = self.typed or i in chars.typed_spaces
                if self.aside_run and self.aside_run[-1] != " ":
                    self.aside_run.append(" ")
            else:
                self._char(i, code)
        self._end_aside_run()
        return [s for s in self.segs if s.text], [t.strip() for t in self.aside if t.strip()]

    def _end_aside_run(self) -> None:
        if self.aside_run:
            self.aside.append("".join(self.aside_run))
            self.aside_run = []

    def _between_cleared(self) -> None:
        self.space = self.typed = self.brk = False

    def _char(self, i: int, code: int) -> None:
        ch = "-" if i in self.chars.hyphens else char_code(code)     # PDFium's line-end hyphen
        if ch is None:
            return
        if self.chars.quadrants[i] != self.main:
            self.aside_run.append(ch)
            return
        box = self.chars.boxes[i]
        if box is None:                        # no geometry: it stays with its neighbour
            if self.cur is not None:
                self.cur.chars.append(" " + ch if self.space else ch)
            self._between_cleared()
            return
        self._place(code, ch, *reading_box(box, self.main))

    def _place(self, code: int, ch: str, x0: float, y0: float, x1: float, y1: float) -> None:
        """Add a character with its box: to the current segment when it goes on along
        the line, else as the start of a new one."""
        h = max(y1 - y0, 0.5)
        cur = self.cur
        if cur is not None:
            lc, lx0, ly0, _, _ = cur.last
            if lc == code and abs(x0 - lx0) < 0.3 * max(x1 - x0, 1.0) and abs(y0 - ly0) < 0.3 * h:
                return                         # drawn twice over itself (fake bold): once
            if self._goes_on(cur, x0, y0, y1, h):
                cur.chars.append(" " + ch if (self.space or self.brk) and cur.chars else ch)
                cur.heights.append(h)
                cur.x0, cur.y0 = min(cur.x0, x0), min(cur.y0, y0)
                cur.x1, cur.y1 = max(cur.x1, x1), max(cur.y1, y1)
                cur.last = (code, x0, y0, x1, y1)
                self._between_cleared()
                return
        self.cur = Segment(x0, y0, x1, y1, [ch], [h], (code, x0, y0, x1, y1))
        self.segs.append(self.cur)
        self._between_cleared()

    def _goes_on(self, cur: Segment, x0: float, y0: float, y1: float, h: float) -> bool:
        """Whether a character at ``x0`` between ``y0`` and ``y1`` continues ``cur``'s line.
        Boxes may be wider than their glyphs and overlap: progress is judged by left
        edges; a space the file typed may be stretched wide (justified text)."""
        _, lx0, ly0, lx1, ly1 = cur.last
        lh = max(ly1 - ly0, 0.5)
        overlap = min(y1, ly1) - max(y0, ly0)
        gap = x0 - lx1
        ref = max(h, lh)
        widest = (SPACED_GAP if self.typed else SEGMENT_GAP) * ref
        same_line = overlap >= 0.5 * min(h, lh) and x0 >= lx0 - 0.2 * ref and gap <= widest
        if self.brk and x0 < lx1 - 0.1 * ref:   # PDFium ended the line and the text went back
            same_line = False
        return same_line
