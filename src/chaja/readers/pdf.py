"""PDF files, read with pypdfium2: the text layer page by page, in reading order.

PDFium gives each character with its box, in the order the file draws them, which
need not be the order a person reads them (the Federal Register draws a page's
footnotes first). So the reader rebuilds the page: characters → line segments
(split where a gap is wider than a word space) → blocks (consecutive segments one
under the other: a paragraph, a table cell) → reading order by cutting the page
into horizontal bands and, where blocks stand in wide columns with a clear gutter
between them, into columns, each read to its end before the next. Narrow columns
(a table's) are read row by row instead.

Running headers and footers (lines repeated, modulo digits, at the top or bottom of
many pages) and page numbers are dropped; the PDF outline gives the headings, each
page's text taking the heading path in force there. Every page's text is marked
``Location("page", n, n)``, so text under one heading over several pages is one
section citing each page. Pages without a text layer are read by OCR
(:mod:`chaja.readers.image`) where Tesseract is installed, else noted.
"""
from __future__ import annotations

import ctypes
import math
import re
import threading
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field

import pypdfium2
import pypdfium2.raw as pdfium_c

from chaja.documents import Document, Location
from chaja.readers.base import ReadContext, ReadError, located_section
from chaja.readers.fields import meaningful_title
from chaja.readers.pdf_layout import Line, ocr_lines, page_lines
from chaja.readers.pdf_segments import PageChars, char_code
from chaja.language import detect_language
from chaja.readers.headings import Block, block_sections
from chaja.readers.numbering import numbered_heading_level
from chaja.readers.pdf_lines import document_words, drop_contents_lines, drop_running_lines, join_lines

# PDFium is not thread-safe: one PDF is read at a time in a process
_LOCK = threading.Lock()

#: OCR renders pages at this resolution, fewer dots on a very large page
OCR_DPI = 300
#: a page with fewer characters than this, and images over this share of it, is OCR'd
SPARSE_CHARS = 400
IMAGE_SHARE = 0.4
_MAX_OCR_PIXELS = 40_000_000


# ------------------------------------------------------------------ outline, title

@dataclass(frozen=True)
class _Mark:
    """An outline entry: the page it points at (0-based), how far down it (PDF y, or
    None), and the heading path it opens."""

    page: int
    y: float | None
    path: tuple[str, ...]


def _dest_of(bookmark, pdf):
    dest = bookmark.get_dest()
    if dest is not None:
        return dest
    action = pdfium_c.FPDFBookmark_GetAction(bookmark.raw)
    if action:
        found = pdfium_c.FPDFAction_GetDest(pdf.raw, action)
        if found:
            return pypdfium2.PdfDest(found, pdf)
    return None


def _outline(pdf) -> list[_Mark]:
    """The outline's entries with the heading path each opens, in page order."""
    marks: list[tuple[int, int, _Mark]] = []
    stack: list[tuple[int, str]] = []
    has_x, has_y, has_zoom = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    x, y, zoom = ctypes.c_float(), ctypes.c_float(), ctypes.c_float()
    try:
        for n, bookmark in enumerate(pdf.get_toc(max_depth=12)):
            title = " ".join(unicodedata.normalize("NFC", bookmark.get_title() or "").split())
            title = "".join(ch for ch in title if char_code(ord(ch)) is not None)
            while stack and stack[-1][0] >= bookmark.level:
                stack.pop()
            if not title:
                continue
            stack.append((bookmark.level, title))
            dest = _dest_of(bookmark, pdf)
            page = dest.get_index() if dest is not None else None
            if page is None or page >= len(pdf):
                continue
            top = None
            if pdfium_c.FPDFDest_GetLocationInPage(dest.raw, has_x, has_y, has_zoom, x, y, zoom) and has_y.value:
                top = float(y.value)
            marks.append((page, n, _Mark(page, top, tuple(t for _, t in stack))))
    except Exception:       # a broken outline costs the headings, not the text
        return []
    return [m for _, _, m in sorted(marks, key=lambda t: (t[0], t[1]))]


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFC", text)).lower()


# ------------------------------------------------------------------ the reader

def _page_list(pages: list[int]) -> str:
    """``3``, ``3–5, 9``: 1-based page numbers in ranges."""
    spans: list[list[int]] = []
    for p in pages:
        if spans and p == spans[-1][1] + 1:
            spans[-1][1] = p
        else:
            spans.append([p, p])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)


def _open(path):
    """The PDF, or :class:`ReadError` saying why not: a password, a broken file."""
    try:
        return pypdfium2.PdfDocument(path)
    except pypdfium2.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code == 4:
            raise ReadError("is encrypted with a password") from None
        if code == 5:
            raise ReadError("is encrypted with a security scheme PDFium does not support") from None
        reason = str(exc).split("(PDFium: ", 1)[-1].rstrip(").") if "PDFium: " in str(exc) else str(exc)
        raise ReadError(f"is not a PDF that can be read ({reason})") from None


def _coverage(page) -> tuple[float, int]:
    """The share of the page its images cover (at most 1) and how many paths it draws."""
    width, height = page.get_size()
    area, paths = 0.0, 0
    for obj in page.get_objects(max_depth=4):
        if obj.type == pdfium_c.FPDF_PAGEOBJ_IMAGE:
            left, bottom, right, top = obj.get_bounds()
            area += max(0.0, min(right, width) - max(left, 0.0)) * max(0.0, min(top, height) - max(bottom, 0.0))
        elif obj.type == pdfium_c.FPDF_PAGEOBJ_PATH:
            paths += 1
    return min(area / max(width * height, 1.0), 1.0), paths


def _ocr_reason(page, chars: PageChars, lines: list[Line]) -> str:
    """Why OCR should read a page: ``"no text"`` (a scan, or text drawn as outlines),
    ``"garbled"`` (most characters have no Unicode meaning), ``"image"`` (little text
    beside images covering much of the page: a scanned figure with a caption); ""
    when the text layer will do, and for a blank page."""
    visible = chars.visible()
    if visible and chars.unmapped > 0.5 * visible:
        return "garbled"
    if lines and visible >= SPARSE_CHARS:
        return ""
    share, paths = _coverage(page)
    if not lines:
        return "no text" if share > 0 or paths >= 100 else ""
    return "image" if share >= IMAGE_SHARE else ""


def _ocr_page(page) -> str:
    from chaja.readers.image import ocr_image

    width, height = page.get_size()
    scale = min(OCR_DPI / 72, math.sqrt(_MAX_OCR_PIXELS / max(width * height, 1.0)))
    bitmap = page.render(scale=scale, grayscale=True)
    try:
        image = bitmap.to_pil()
    finally:
        bitmap.close()
    return ocr_image(image, dpi=scale * 72)


@dataclass
class _Pages:
    """What reading the pages gave: each page's lines, and the pages OCR should have
    read but did not (no text layer; mostly an image) or failed on."""

    lines: list[list[Line]] = field(default_factory=list)
    unread: list[int] = field(default_factory=list)
    imaged: list[int] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    ocred: list[int] = field(default_factory=list)       # pages read by OCR
    boxes: list[tuple] = field(default_factory=list)     # each page's (left, bottom, right, top)


def _read_pages(pdf, ctx: ReadContext) -> _Pages:
    """Every page's lines, from its text layer or, where that will not do, from OCR.
    One page is open at a time."""
    from chaja.readers.image import ocr_problem

    total = len(pdf)
    ocr_missing = ocr_problem() if ctx.ocr != "never" else "OCR is turned off"
    out = _Pages()
    for index in range(total):
        page = pdf[index]
        try:
            out.boxes.append(tuple(page.get_bbox()))
            textpage = page.get_textpage()
            try:
                lines, chars = page_lines(textpage, out.boxes[-1])
            finally:
                textpage.close()
            reason = _ocr_reason(page, chars, lines)
            if (reason or ctx.ocr == "always") and not ocr_missing:
                try:
                    read = ocr_lines(_ocr_page(page))
                    if read or reason == "garbled":
                        lines = read
                        out.ocred.append(index + 1)
                except ReadError as exc:
                    out.failures.append(f"page {index + 1}: {exc}")
                    if reason == "garbled":        # the text layer is noise: not indexed
                        lines = []
            elif reason in ("no text", "garbled"):
                out.unread.append(index + 1)
                lines = []
            elif reason == "image":
                out.imaged.append(index + 1)
        finally:
            page.close()
        out.lines.append(lines)
        ctx.tell(index + 1, total)
    return out


def _sections(pages: list[list[Line]], marks: list[_Mark], boxes: list[tuple[float, float, float, float]]):
    """The document's sections: page texts under the outline's headings, one mark a page."""
    sections = []
    path: tuple[str, ...] = ()
    pieces: list[tuple[Location, str]] = []
    by_page: dict[int, list[_Mark]] = {}
    for m in marks:
        by_page.setdefault(m.page, []).append(m)

    def close() -> None:
        section = located_section(path, pieces)
        if section is not None:
            sections.append(section)
        pieces.clear()

    words = document_words(pages)
    for index, lines in enumerate(pages):
        lines = list(lines)
        at = 0
        loc = Location("page", index + 1, index + 1)
        for mark in by_page.get(index, []):
            split = _heading_line(lines, at, mark, boxes[index])
            if split > at:
                pieces.append((loc, join_lines(lines[at:split], words)))
            close()
            path = mark.path
            if split < len(lines) and _compact(lines[split].text) == _compact(mark.path[-1]):
                del lines[split]                # the heading's own line: its text is in the path
            at = split
        if at < len(lines):
            pieces.append((loc, join_lines(lines[at:], words)))
    close()
    return sections


def _first_line_title(pages: list[list[Line]]) -> str:
    """The first page's first line, where it reads as a title: at most 80 characters,
    with letters, no numbered heading (that opens a section), no sentence."""
    first = next((lines[0].text for lines in pages[:1] if lines), "").strip()
    if (0 < len(first) <= 80 and any(ch.isalpha() for ch in first) and numbered_heading_level(first) is None
            and not first.endswith((".", "다"))):
        return first
    return ""


def _korean(pages: list[list[Line]]) -> bool:
    """Whether the text is Korean: numbered headings are Korean official documents'
    way; in English "(6) In the ..." is a list."""
    return detect_language("".join(line.text for lines in pages[:50] for line in lines)) == "ko"


def _paragraphs(pages: list[list[Line]]) -> list[tuple[int, list[Line]]]:
    """(page index, lines) of each paragraph in reading order, a page break ending one;
    a page's first line starts one only where it reads as a numbered heading."""
    paras: list[tuple[int, list[Line]]] = []
    for index, lines in enumerate(pages):
        for i, line in enumerate(lines):
            opens = line.para or (i == 0 and numbered_heading_level(line.text) is not None)
            if paras and paras[-1][0] == index and not opens:
                paras[-1][1].append(line)
            else:
                paras.append((index, [line]))
    return paras


def _numbered_sections(pages: list[list[Line]]) -> list:
    """Sections of a PDF without an outline: its paragraphs as blocks marked with their
    page, sectioned by the numbered headings of Korean official documents (``Ⅰ.``,
    ``1.``, ``□``, ``가.``) as :func:`chaja.readers.headings.block_sections` does for
    HWP, runs of numbered items in sequence being lists."""
    words = document_words(pages)
    blocks = [Block(join_lines(lines, words), location=Location("page", index + 1, index + 1))
              for index, lines in _paragraphs(pages)]
    return block_sections(blocks, marked=False)[0]


def _heading_line(lines: list[Line], start: int, mark: _Mark, bbox: tuple[float, float, float, float]) -> int:
    """Where on its page an outline entry's heading starts: the line that reads as
    the heading, else the first line below the point it targets, else the page's top."""
    title = _compact(mark.path[-1])
    for i in range(start, len(lines)):
        if _compact(lines[i].text) == title:
            return i
    _, bottom, _, top = bbox
    if mark.y is not None and top > bottom:
        frac = (top - mark.y) / (top - bottom)      # PDF y grows upward
        for i in range(start, len(lines)):
            if lines[i].bottom > frac + 0.005 and lines[i].top < 1.0:
                return i
        return len(lines)
    return start


def read(ctx: ReadContext) -> Iterator[Document]:
    """The PDF as one document: its pages' text under its outline's headings."""
    with _LOCK:
        pdf = _open(ctx.path)
        try:
            total = len(pdf)
            meta_title = meaningful_title(pdf.get_metadata_value("Title") if total else "")
            marks = _outline(pdf)
            got = _read_pages(pdf, ctx)
        finally:
            pdf.close()
    _note_ocr(ctx, got, total)
    drop_running_lines(got.lines)
    drop_contents_lines(got.lines)
    if marks:
        sections = _sections(got.lines, marks, got.boxes)
    elif _korean(got.lines):
        sections = _numbered_sections(got.lines)
    else:
        sections = _sections(got.lines, [], [])
    first_line = "" if 1 in got.ocred else _first_line_title(got.lines)      # OCR's first line is often noise
    title = meta_title or (marks[0].path[0] if marks else "") or first_line or ctx.path.stem
    yield Document(ctx.doc_id, title, sections, path=str(ctx.path))


def _note_ocr(ctx: ReadContext, got: _Pages, total: int) -> None:
    """Tell what OCR should have read and did not: one note for all pages without a
    text layer, one for pages mostly images; a :class:`ReadError` when no page had text."""
    from chaja.readers.image import OCR_INSTALL, ocr_problem

    hint = "OCR is turned off" if ctx.ocr == "never" else OCR_INSTALL
    if not any(got.lines):
        if got.unread:
            where = f"on any of its {total} pages" if total > 1 else "on its one page"
            raise ReadError(f"has no text layer {where}; it needs OCR ({hint})")
        if got.failures:
            raise ReadError(f"has no text layer and OCR failed ({got.failures[0]})")
    if got.unread:
        one = len(got.unread) == 1
        which = f"page {got.unread[0]} has" if one else f"pages {_page_list(got.unread)} have"
        ctx.notes.append(f"{which} no text layer and need{'s' if one else ''} OCR ({hint})")
    if got.imaged:
        one = len(got.imaged) == 1
        which = f"page {got.imaged[0]} is" if one else f"pages {_page_list(got.imaged)} are"
        ctx.notes.append(f"{which} mostly images with little text; reading {'its' if one else 'their'} "
                         f"text needs OCR ({hint})")
    if got.failures:
        ctx.notes.append("OCR failed on " + "; ".join(got.failures))
    if ctx.ocr == "always" and ocr_problem():
        ctx.notes.append(f"OCR was asked for on every page but is not available: {ocr_problem()}; "
                         "the text layer was read instead")
    if got.unread or got.failures:
        ctx.partial = True              # pages went unread: the file was read in part
