"""A PDF page's line segments → blocks → reading order. Consecutive segments one under
the other make a block (a paragraph, a table cell); the blocks are read by cutting the
page into horizontal bands and, where blocks stand in wide columns with a clear gutter
between them, into columns, each read to its end before the next; narrow columns (a
table's) are read row by row."""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from statistics import median

from chaja.readers.pdf_segments import Segment

#: a column must be at least this many line heights wide to be read as a column
COLUMN_WIDTH = 7.0


@dataclass
class TextBlock:
    """Consecutive segments one under the other: a paragraph, a table cell."""

    segs: list[Segment]
    x0: float
    y0: float
    x1: float
    y1: float

    @classmethod
    def of(cls, seg: Segment) -> "TextBlock":
        return cls([seg], seg.x0, seg.y0, seg.x1, seg.y1)

    def takes(self, seg: Segment) -> bool:
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

    def add(self, seg: Segment) -> None:
        self.segs.append(seg)
        self.x0, self.y0 = min(self.x0, seg.x0), min(self.y0, seg.y0)
        self.x1, self.y1 = max(self.x1, seg.x1), max(self.y1, seg.y1)


def text_blocks(segs: list[Segment]) -> list[TextBlock]:
    """Segments, in the order the file gives them, gathered into blocks."""
    blocks: list[TextBlock] = []
    for seg in segs:
        if blocks and blocks[-1].takes(seg):
            blocks[-1].add(seg)
        else:
            blocks.append(TextBlock.of(seg))
    return blocks


def line_height(blocks: list[TextBlock]) -> float:
    """The blocks' usual line height: their segments' median."""
    return median(s.h for b in blocks for s in b.segs)


def _bands(blocks: list[TextBlock]) -> list[list[TextBlock]]:
    """``blocks`` cut into horizontal bands: runs that no blank strip across the page separates."""
    bands: list[list[TextBlock]] = []
    bottom = -math.inf
    for b in sorted(blocks, key=lambda b: (b.y0, b.x0)):
        if bands and b.y0 < bottom:
            bands[-1].append(b)
            bottom = max(bottom, b.y1)
        else:
            bands.append([b])
            bottom = b.y1
    return bands


def _free(blocks: list[TextBlock], lo: float, hi: float, gutter: float) -> list[tuple[float, float]]:
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


def _groups(blocks: list[TextBlock], gutter: float) -> list[list[TextBlock]]:
    """Consecutive bands that share a vertical gutter go together (the lines of a
    three-column stretch, the rows of a table); a band across the page (a heading over
    the columns) stands alone, and so does a band far below the one before it (under
    a figure, a new stretch of columns begins)."""
    lo, hi = min(b.x0 for b in blocks), max(b.x1 for b in blocks)
    most_gap = 2.0 * line_height(blocks)
    groups: list[list[TextBlock]] = []
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


def _columns(blocks: list[TextBlock], gutter: float) -> list[list[TextBlock]] | None:
    """``blocks`` split at the vertical gutters between them, when every piece is a
    column of text: wide, more than one line, its blocks not level with the other
    pieces' blocks. None otherwise (a table: narrow columns, or cells in rows; one
    line of cells), so that the rows are read across."""
    pieces: list[list[TextBlock]] = []
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
    h = line_height(blocks)
    for piece in pieces:
        width = max(b.x1 for b in piece) - min(b.x0 for b in piece)
        if width < COLUMN_WIDTH * h or sum(len(b.segs) for b in piece) < 2:
            return None
    if _row_aligned(pieces, h) >= 0.5:
        return None
    return pieces


def _row_aligned(pieces: list[list[TextBlock]], h: float) -> float:
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


def _rows(blocks: list[TextBlock]) -> list[list[TextBlock]]:
    """Blocks side by side in rows (a table's cells), top to bottom, each row left to right."""
    rows: list[list[TextBlock]] = []
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


def reading_order(blocks: list[TextBlock], gutter: float, depth: int = 0) -> list[list[TextBlock]]:
    """The rows of ``blocks`` in reading order: bands top to bottom, a stretch of
    columns column by column, what is neither row by row."""
    if len(blocks) <= 1 or depth > 50:
        return _rows(blocks)
    groups = _groups(blocks, gutter)
    if len(groups) > 1:
        return [row for g in groups for row in reading_order(g, gutter, depth + 1)]
    columns = _columns(blocks, gutter)
    if columns is not None:
        return [row for c in columns for row in reading_order(c, gutter, depth + 1)]
    return _rows(blocks)
