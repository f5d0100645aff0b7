"""HWP 5.x (Hangul word processor) files → a document: the body's paragraph records
read in order into blocks (paragraphs, table rows, notes, text boxes), and the blocks
into sections by their headings. The file itself is opened by
:mod:`chaja.readers.hwp_file`, its records parsed by :mod:`chaja.readers.hwp_records`.

Format facts from Hancom's "한글 문서 파일 형식 5.0" (revision 1.3), by its section names:

* 표 개체 ('tbl ' control, HWPTAG_TABLE 77) and 문단 리스트 헤더 (HWPTAG_LIST_HEADER 72):
  after the TABLE record each cell is a list header (paragraph count, attributes, then
  column and row address at bytes 8 and 10) followed by its paragraphs; a caption's
  list comes before the TABLE record. Footnotes and endnotes ('fn  ', 'en  ') and text
  boxes ('gso ') hold paragraph lists the same way.

Paragraph numbers (``Location("paragraph", n, n)``) count what a reader sees, in reading
order over the whole document: each paragraph with text, each table row (a table with
one cell, a box, gives its paragraphs instead), each text-box paragraph; a footnote
shares its paragraph's number. Headers, footers, hidden comments and equations are
left out.
"""
from __future__ import annotations

from collections.abc import Iterator

from chaja.documents import Document
from chaja.readers.base import ReadContext
from chaja.readers.headings import Block, block_sections, document_title
from chaja.readers.hwp_file import open_hwp
from chaja.readers.hwp_records import (TAG_CTRL_HEADER, TAG_LIST_HEADER, TAG_PARA_HEADER, TAG_PARA_TEXT, TAG_TABLE,
                                       Node, clean_text, decode_para_text, iter_records, record_tree)

#: tables and boxes nested deeper than this are not read (a hostile file's recursion)
MAX_NESTING = 16

_NOTES = ("fn  ", "en  ")


# -- paragraphs → blocks ---------------------------------------------------------


def _u16(data: bytes, at: int) -> int:
    return int.from_bytes(data[at:at + 2], "little") if len(data) >= at + 2 else 0


class _Renderer:
    """Turns paragraph records into :class:`Block` objects, given DocInfo's paragraph
    shapes' outline levels."""

    def __init__(self, outline_of_shape: dict[int, int]):
        self.outline_of_shape = outline_of_shape

    def paragraphs(self, nodes: list[Node], depth: int = 0) -> Iterator[Block]:
        for node in nodes:
            if node.tag == TAG_PARA_HEADER:
                yield from self.paragraph(node, depth)

    def paragraph(self, para: Node, depth: int) -> Iterator[Block]:
        outline = self.outline_of_shape.get(_u16(para.data, 8))
        text_rec = next((c for c in para.children if c.tag == TAG_PARA_TEXT), None)
        controls = [c for c in para.children if c.tag == TAG_CTRL_HEADER]
        pieces = decode_para_text(text_rec.data) if text_rec is not None else []
        text: list[str] = []
        after: list[Block] = []           # notes and text boxes, shown after the paragraph
        for piece in pieces:
            if isinstance(piece, str):
                text.append(piece)
                continue
            ctrl = _take(controls, piece.ctrl_id)
            if ctrl is None or depth >= MAX_NESTING:
                continue
            if piece.ctrl_id == "tbl ":
                table = list(self.table(ctrl, depth + 1))
                if table:
                    yield Block(clean_text("".join(text)), outline)
                    text.clear()
                    yield from table
            elif piece.ctrl_id in _NOTES:
                note = " ".join(b.text for b in self.paragraphs(ctrl.children, depth + 1) if b.text.strip())
                if note.strip():
                    after.append(Block(note, note=True))
            elif piece.ctrl_id == "gso ":
                after.extend(self.paragraphs(_descendant_paragraphs(ctrl), depth + 1))
        yield Block(clean_text("".join(text)), outline)
        yield from after

    def table(self, ctrl: Node, depth: int) -> Iterator[Block]:
        """One block per row, its non-empty cells joined by `` | ``; a table with one
        cell (a box drawn around text) gives that cell's paragraphs instead. The
        caption's paragraphs follow."""
        cells: list[tuple[int, int, list[Node]]] = []
        caption: list[Node] = []          # a caption's list comes before the TABLE record, cells after
        in_cells = False
        for child in ctrl.children:
            if child.tag == TAG_TABLE:
                in_cells = True
            elif child.tag == TAG_LIST_HEADER and in_cells:
                col, row = (_u16(child.data, 8), _u16(child.data, 10)) if len(child.data) >= 12 else (len(cells), 0)
                cells.append((row, col, []))
            elif child.tag == TAG_PARA_HEADER:
                (cells[-1][2] if cells else caption).append(child)
        if len(cells) == 1:
            yield from self.paragraphs(cells[0][2], depth)
            yield from self.paragraphs(caption, depth)
            return
        rows: dict[int, list[tuple[int, str]]] = {}
        for row, col, paras in cells:
            text = " ".join(" ".join(b.text.split()) for b in self.paragraphs(paras, depth))
            rows.setdefault(row, []).append((col, text.strip()))
        for row in sorted(rows):
            line = " | ".join(t for _, t in sorted(rows[row], key=lambda c: c[0]) if t)
            if line:
                yield Block(line, row=True)
        yield from self.paragraphs(caption, depth)


def _take(controls: list[Node], ctrl_id: str) -> Node | None:
    """The first control header left with ``ctrl_id``, removed from ``controls``."""
    for i, node in enumerate(controls):
        if node.data[:4][::-1].decode("latin-1") == ctrl_id:
            return controls.pop(i)
    return None


def _descendant_paragraphs(node: Node) -> list[Node]:
    """The paragraph lists anywhere under a drawing object (a text box's text)."""
    found: list[Node] = []
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        if child.tag == TAG_PARA_HEADER:
            found.append(child)
        else:
            stack.extend(reversed(child.children))
    return found


# -- the document ---------------------------------------------------------------


def section_blocks(data: bytes, outline_of_shape: dict[int, int] | None = None,
                   where: str = "a section") -> list[Block]:
    """One body section's decompressed records → its blocks in reading order."""
    tree = record_tree(iter_records(data, where))
    return list(_Renderer(outline_of_shape or {}).paragraphs(tree))


def read(ctx: ReadContext) -> Iterator[Document]:
    hwp = open_hwp(ctx.path)
    ctx.notes.extend(hwp.notes)
    blocks: list[Block] = []
    for i, data in enumerate(hwp.sections, 1):
        blocks.extend(section_blocks(data, hwp.outline_of_shape, f"section {i}"))
        ctx.tell(i, len(hwp.sections))
    marked = any(b.outline is not None and b.text.strip() for b in blocks)
    sections, headings = block_sections(blocks, marked)
    if not sections:
        ctx.notes.append("has no text (an HWP file of images or empty pages)")
    title = document_title(hwp.title, blocks, headings, ctx.path.stem)
    yield Document(id=ctx.doc_id, title=title, sections=sections, path=str(ctx.path))
