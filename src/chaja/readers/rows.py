"""Rows of a table (a sheet, a CSV file) → lines of text, and lines → sections.

A table's header is the first row of mostly short text labels (not numbers) among
its first rows; each row below it is rendered ``column: value, column: value``
(``품목: 전기요금, 단가: 120``), its empty cells left out, so a line found alone
still says what its numbers mean. A header whose labels leave gaps over the row
below (``PRSI Liability`` over ``Existing``, ``Proposed``) is a group header: the
two rows combine (``PRSI Liability Existing``). Rows above the header, the header
itself and every row of a table without one are rendered as their cells joined
`` | ``. Lines are grouped into sections of about :data:`SECTION_CHARS`, each line
marked with its row number so a chunk cites the rows it holds.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from chaja.documents import Location, Section
from chaja.readers.base import located_section

SECTION_CHARS = 1000   # a section stops growing before it would pass this many characters
HEADER_SCAN = 30       # the header is looked for among this many first non-empty rows
HEADER_CELL_CHARS = 60 # a label longer than this is a sentence, not a column name

# a number, an amount (with a currency, a percent or a Korean unit: 1,000원, 3억, 12명) or a date
_NUMBER = re.compile(r"[-+(]?[$€£₩¥]?\s?[-+]?[\d,]*\.?\d*\s?(?:[%)]|[천만억조]?원|[만억조]|[명개건회세])?\.?"
                     r"|\d{4}[-./]\d{1,2}[-./]\d{1,2}.*")


def clean(value: str) -> str:
    """A cell's text with every run of white space (line breaks included) one space."""
    return " ".join(value.split())


def _is_text(cell: str) -> bool:
    """A non-empty cell that is not a number, an amount, a date or a truth value."""
    return bool(cell) and cell not in ("TRUE", "FALSE") and not (
        any(ch.isdigit() for ch in cell) and _NUMBER.fullmatch(cell))


def _is_label(cell: str) -> bool:
    """Short text, as a column name is."""
    return len(cell) <= HEADER_CELL_CHARS and _is_text(cell)


def _span(cells: list[str]) -> tuple[int, int]:
    filled = [i for i, c in enumerate(cells) if c]
    return filled[0], filled[-1]


def _is_header(cells: list[str]) -> bool:
    """Two or more cells, mostly labels: at least 60% of the row's span and 80% of its cells."""
    filled = [c for c in cells if c]
    labels = sum(map(_is_label, filled))
    first, last = _span(cells)
    return labels >= 2 and labels >= 0.6 * (last - first + 1) and labels >= 0.8 * len(filled)


def _has_gaps(cells: list[str]) -> bool:
    first, last = _span(cells)
    return any(not c for c in cells[first:last + 1])


def _combined(upper: list[str], lower: list[str]) -> list[str]:
    """Column names from a group header over a header row: each upper label runs right
    over the blanks after it (within its span) where the lower row has a label."""
    width = max(len(upper), len(lower))
    _, last = _span(upper)
    names, group = [], ""
    for i in range(width):
        top = upper[i] if i < len(upper) else ""
        low = lower[i] if i < len(lower) else ""
        if top:
            group = top
        elif i > last or not low:
            group = ""
        names.append(" ".join(p for p in ((top or group), low) if p))
    return names


def _named(cells: list[str], names: list[str]) -> str:
    filled = [c for c in cells if c]
    if len(filled) == 1 and len(names) > 2 and _is_text(filled[0]):
        return filled[0]        # a note or a caption under a wide table, not a value of one column
    parts = []
    for i, cell in enumerate(cells):
        if cell:
            name = names[i] if i < len(names) else ""
            parts.append(f"{name}: {cell}" if name and name != cell else cell)
    return ", ".join(parts)


def _plain(cells: list[str]) -> str:
    return " | ".join(c for c in cells if c)


def table_lines(rows: Iterable[tuple[int, list[str]]]) -> Iterator[tuple[int, str]]:
    """``(row number, cell texts)`` → ``(row number, line)`` for each non-empty row,
    streaming: only the first :data:`HEADER_SCAN` non-empty rows are held at once."""
    rows = iter(rows)
    head: list[tuple[int, list[str]]] = []
    for r, cells in rows:
        cells = [clean(c) for c in cells]
        if any(cells):
            head.append((r, cells))
            if len(head) >= HEADER_SCAN:
                break
    at = next((i for i, (_, cells) in enumerate(head) if _is_header(cells)), None)
    names: list[str] = []
    if at is not None:
        names = head[at][1]
        if at + 1 < len(head) and _has_gaps(names) and _is_header(head[at + 1][1]):
            at += 1
            names = _combined(names, head[at][1])
    for i, (r, cells) in enumerate(head):
        yield r, (_plain(cells) if at is None or i <= at else _named(cells, names))
    for r, cells in rows:
        cells = [clean(c) for c in cells]
        if any(cells):
            yield r, (_named(cells, names) if names and cells != names else _plain(cells))


def row_sections(lines: Iterable[tuple[int, str]], part: str = "",
                 limit: int = SECTION_CHARS) -> Iterator[Section]:
    """Consecutive lines in sections of at most ``limit`` characters (a longer line
    alone), each line marked ``Location("row", r, r, part)``."""
    pieces: list[tuple[Location, str]] = []
    size = 0
    for r, line in lines:
        if pieces and size + 1 + len(line) > limit:
            yield from _section(pieces)
            pieces, size = [], 0
        size += len(line) + (1 if pieces else 0)
        pieces.append((Location("row", r, r, part), line))
    yield from _section(pieces)


def _section(pieces: list[tuple[Location, str]]) -> Iterator[Section]:
    section = located_section((), pieces, "\n")
    if section is not None:
        yield section
