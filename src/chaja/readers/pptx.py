"""PowerPoint files (.pptx) → one document, a section a slide.

A slide's section is headed by its title (when it has a title placeholder) and
holds its text in reading order, top to bottom then left to right: text frames a
line a paragraph, tables a line a row (cells joined `` | ``), groups opened, chart
titles and SmartArt text; slide numbers, dates and footers are left out. Speaker
notes follow a line ``Notes:``. Each section is marked ``Location("slide", n, n)``.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from chaja.documents import Document, Location, Section
from chaja.readers.base import ReadContext, located_section
from chaja.readers.fields import meaningful_title
from chaja.readers.office import open_package

_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_DIAGRAM = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
_PLACEHOLDER_TITLE = re.compile(r"slide\s*\d*|powerpoint\s*(presentation|프레젠테이션)|presentation\s*\d*|"
                                r"프레젠테이션\s*\d*", re.I)


def _open(path):
    from pptx import Presentation

    return open_package("PowerPoint file", lambda: Presentation(str(path)))


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _frame_lines(frame) -> Iterator[str]:
    for paragraph in frame.paragraphs:
        for line in paragraph.text.replace("\v", "\n").split("\n"):   # python-pptx writes a line break as \v
            if line.strip():
                yield " ".join(line.split())


def _table_lines(table) -> Iterator[str]:
    for row in table.rows:
        cells = [_one_line(c.text) for c in row.cells if not c.is_spanned]
        line = " | ".join(c for c in cells if c)
        if line:
            yield line


def _diagram_lines(shape) -> Iterator[str]:
    """A SmartArt graphic's text, from its data part."""
    from pptx.oxml import parse_xml

    ids = shape._element.xpath(".//*[local-name()='relIds']")
    rel_id = ids[0].get(_R + "dm") if ids else None
    if not rel_id:
        return
    try:
        data = parse_xml(shape.part.related_part(rel_id).blob)
    except (KeyError, ValueError, SyntaxError):
        return
    for p in data.iter(_A + "p"):
        line = _one_line("".join(t.text or "" for t in p.iter(_A + "t")))
        if line:
            yield line


def _skipped(shape) -> bool:
    """Slide furniture: the slide number, the date and the footer."""
    from pptx.enum.shapes import PP_PLACEHOLDER

    if not shape.is_placeholder:
        return False
    try:
        kind = shape.placeholder_format.type
    except ValueError:              # a placeholder type python-pptx does not know
        return False
    return kind in (PP_PLACEHOLDER.SLIDE_NUMBER, PP_PLACEHOLDER.DATE, PP_PLACEHOLDER.FOOTER)


def _shape_lines(shapes, title_id: int | None) -> Iterator[str]:
    """The text of ``shapes`` in reading order, groups opened; the title shape left out."""
    from pptx.shapes.group import GroupShape

    for shape in sorted(shapes, key=lambda s: (s.top or 0, s.left or 0)):
        if shape.shape_id == title_id or _skipped(shape):
            continue
        if isinstance(shape, GroupShape):
            yield from _shape_lines(shape.shapes, title_id)
        elif shape.has_text_frame:
            yield from _frame_lines(shape.text_frame)
        elif getattr(shape, "has_table", False):
            yield from _table_lines(shape.table)
        elif getattr(shape, "has_chart", False):
            chart = shape.chart
            if chart.has_title and chart.chart_title.has_text_frame:
                yield from _frame_lines(chart.chart_title.text_frame)
        elif shape._element.xpath(f".//*[local-name()='graphicData'][@uri='{_DIAGRAM}']"):
            yield from _diagram_lines(shape)


def _notes(slide) -> str:
    if not slide.has_notes_slide:
        return ""
    frame = slide.notes_slide.notes_text_frame
    return "\n".join(_frame_lines(frame)) if frame is not None else ""


def slide_section(slide, n: int) -> tuple[str, Section | None]:
    """Slide ``n``'s title and section (None for a slide without text)."""
    title_shape = slide.shapes.title
    has_title = title_shape is not None and title_shape.has_text_frame
    title = _one_line(title_shape.text_frame.text) if has_title else ""
    lines = list(_shape_lines(slide.shapes, title_shape.shape_id if title_shape is not None else None))
    notes = _notes(slide)
    if notes:
        lines.append(f"Notes:\n{notes}")
    if not lines and title:
        lines = [title]             # a title-only slide (a divider) stays findable by its words
    loc = Location("slide", n, n)
    return title, located_section((title,) if title else (), [(loc, line) for line in lines], "\n")


def read(ctx: ReadContext) -> Iterator[Document]:
    prs = _open(ctx.path)
    slides = list(prs.slides)
    sections, first_title = [], ""
    for n, slide in enumerate(slides, 1):
        title, section = slide_section(slide, n)
        if n == 1:
            first_title = title
        if section is not None:
            sections.append(section)
        ctx.tell(n, len(slides))
    title = meaningful_title(prs.core_properties.title, _PLACEHOLDER_TITLE) or first_title or ctx.path.stem
    yield Document(id=ctx.doc_id, title=title, sections=sections, path=str(ctx.path))
