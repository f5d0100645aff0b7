"""Excel workbooks (.xlsx, .xlsm) → one document a non-empty sheet.

Rows stream from openpyxl's read-only mode (cached values, not formulas), so a large
sheet is never held as a tree of cells; each row becomes one line
(:mod:`chaja.readers.rows`) marked with the sheet's own row number, and a chunk
cites ``sheet 'Prices', rows 2–41``. A number is rounded to the decimals its cell
format shows, without float noise or trailing zeros (``120``, not ``120.0``), a
percentage reads ``12.5%`` and a date ``2024-03-01``.
"""
from __future__ import annotations

import math
import re
import zipfile
import zlib
from collections.abc import Iterator
from datetime import date, datetime, time, timedelta
from functools import lru_cache

from chaja.documents import Document
from chaja.readers.base import ReadContext, ReadError
from chaja.readers.fields import meaningful_title
from chaja.readers.office import open_package
from chaja.readers.rows import row_sections, table_lines

_ERRORS = {"#NULL!", "#DIV/0!", "#VALUE!", "#REF!", "#NAME?", "#NUM!", "#N/A", "#GETTING_DATA", "#SPILL!", "#CALC!"}
_PLACEHOLDER_TITLE = re.compile(r"(book|sheet|통합\s*문서|workbook)\s*\d*", re.I)
_DECIMALS = re.compile(r"\.(0+)")


def _open(path):
    import openpyxl

    return open_package("Excel workbook", lambda: openpyxl.load_workbook(path, read_only=True, data_only=True))


@lru_cache(maxsize=256)
def _format(fmt: str) -> tuple[int | None, bool]:
    """(decimal places to round to or None, whether a percentage) of a number format."""
    fmt = re.sub(r'"[^"]*"|\[[^\]]*\]|\\.', "", (fmt or "General").split(";")[0])
    places = _DECIMALS.search(fmt)
    digits = len(places.group(1)) if places else (0 if "0" in fmt else None)
    return (None if "E" in fmt.upper() else digits), "%" in fmt     # scientific notation keeps all


def _number(value: float | int, fmt: str) -> str:
    """A number as its cell format shows it (percent, decimals), without float noise."""
    if isinstance(value, float) and not math.isfinite(value):
        return ""
    digits, percent = _format(fmt)
    if percent:
        value *= 100
    if digits is not None:
        value = round(value, digits)
    text = str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.12g}"
    return text + "%" if percent else text


def cell_text(value, fmt: str = "General") -> str:
    """One cached cell value as text: ``""`` for empty cells and error values."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return _number(value, fmt)
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0) else value.isoformat(" ", "minutes")
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    text = str(value)
    return "" if text.strip() in _ERRORS else text


def _rows(sheet) -> Iterator[tuple[int, list[str]]]:
    sheet.reset_dimensions()        # a wrong <dimension> must not cut rows or columns off
    for r, row in enumerate(sheet.iter_rows(), 1):      # openpyxl fills in missing rows from 1
        yield r, [cell_text(c.value, getattr(c, "number_format", "General")) for c in row]


def _title(wb, stem: str) -> str:
    return meaningful_title(wb.properties.title, _PLACEHOLDER_TITLE) or stem


def read(ctx: ReadContext) -> Iterator[Document]:
    wb = _open(ctx.path)
    try:
        sheets = wb.worksheets
        title = _title(wb, ctx.path.stem)
        found = False
        for i, sheet in enumerate(sheets, 1):
            try:
                sections = list(row_sections(table_lines(_rows(sheet)), part=sheet.title))
            except (zipfile.BadZipFile, zlib.error, EOFError, KeyError, SyntaxError) as exc:
                raise ReadError(f"sheet {sheet.title!r} cannot be read: its part is damaged ({exc})") from exc
            ctx.tell(i, len(sheets))
            if sections:
                found = True
                yield Document(id=f"{ctx.doc_id}#{sheet.title}", title=f"{title} · {sheet.title}",
                               sections=sections, path=str(ctx.path))
        if not found:
            ctx.notes.append("every sheet is empty")
            yield Document(id=ctx.doc_id, title=title, sections=[], path=str(ctx.path))
    finally:
        wb.close()
