"""Word files (.docx) → one document, its body in reading order.

python-docx opens the package; the body's XML is walked here so paragraphs and
tables come in the order they stand, tracked insertions count and deletions do
not, and text boxes and content controls are read. Headings (``Heading 1``–``9``,
``Title``, localized names such as ``제목 1``, or an outline level) build the heading
path; list items keep their numbers (``1.``, ``가.``) or a ``- ``; a table row is one
line of its cells joined `` | ``; footnotes and endnotes follow as their own
sections. Every non-empty paragraph and table row is numbered from 1 in reading
order and marked ``Location("paragraph", n, n)``; a note is marked with the
paragraph that refers to it. Heading levels and list labels come from
:mod:`chaja.readers.docx_styles`.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from chaja.documents import Document, Location, Section
from chaja.readers.base import ReadContext, ReadError, located_section
from chaja.readers.docx_styles import W, Numbering, Style, as_int, heading_level, read_styles, roman, style_list, val
from chaja.readers.fields import meaningful_title
from chaja.readers.office import open_package

MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
_RELS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
# subtrees whose text is not the document's: deletions, field codes, a drawing's fallback copy
_SKIP = {W + "del", W + "moveFrom", W + "delText", W + "instrText", W + "pPr", W + "rPr", W + "tblPr",
         W + "trPr", W + "tcPr", MC + "Fallback", W + "fldData"}
_NOTE_TYPES = {"separator", "continuationSeparator", "continuationNotice"}


# -- opening ---------------------------------------------------------------------------

def _open(path):
    """The package's main part and its parts by relationship name (``styles``, ``numbering``, ...)."""
    from docx.opc.package import OpcPackage
    from docx.oxml.parser import parse_xml

    def opened():
        package = OpcPackage.open(str(path))
        main = package.main_document_part
        parts = {rel.reltype[len(_RELS):]: _element(rel.target_part, parse_xml)
                 for rel in main.rels.values() if not rel.is_external and rel.reltype.startswith(_RELS)
                 and rel.reltype[len(_RELS):] in ("styles", "numbering", "footnotes", "endnotes")}
        return package, _element(main, parse_xml), parts

    package, body, parts = open_package("Word document", opened)
    if body.find(W + "body") is None:
        raise ReadError("is not a readable Word document: its main part has no body")
    return package, body, parts


def _element(part, parse_xml):
    element = getattr(part, "element", None)        # parts python-docx knows come parsed
    return element if element is not None else parse_xml(part.blob)


# -- text ------------------------------------------------------------------------------

@dataclass
class _Notes:
    """Footnote and endnote references met in the body, in order, numbered as shown."""

    order: dict[str, list[str]] = field(default_factory=lambda: {"footnote": [], "endnote": []})
    where: dict[tuple[str, str], int] = field(default_factory=dict)   # (kind, id) → paragraph number
    pending: list[tuple[str, str]] = field(default_factory=list)

    def refer(self, kind: str, note_id: str) -> str:
        if note_id not in self.order[kind]:
            self.order[kind].append(note_id)
        self.pending.append((kind, note_id))
        return _note_mark(kind, self.order[kind].index(note_id) + 1)

    def place(self, paragraph: int) -> None:
        for key in self.pending:
            self.where.setdefault(key, paragraph)
        self.pending.clear()


def _note_mark(kind: str, n: int) -> str:
    return f"[{n}]" if kind == "footnote" else f"[{roman(n)}]"


def _hidden(run) -> bool:
    v = run.find(f"{W}rPr/{W}vanish")
    return v is not None and v.get(W + "val") not in ("0", "false", "off")


def _text(el, notes: _Notes | None) -> str:
    """The visible text under ``el``: runs, tabs, breaks, insertions, text boxes."""
    out: list[str] = []

    def walk(node) -> None:
        for child in node:
            tag = child.tag
            if not isinstance(tag, str) or tag in _SKIP:
                continue
            if tag == W + "t":
                out.append(child.text or "")
            elif tag == W + "tab":
                out.append("\t")
            elif tag in (W + "br", W + "cr"):
                out.append("\n")
            elif tag == W + "noBreakHyphen":
                out.append("-")
            elif tag in (W + "footnoteReference", W + "endnoteReference"):
                if notes is not None:
                    out.append(notes.refer(tag[len(W):-len("Reference")], child.get(W + "id")))
            elif tag == W + "p":                     # a paragraph in a text box
                out.append("\n")
                walk(child)
            elif tag == W + "r" and _hidden(child):
                continue
            else:
                walk(child)
    walk(el)
    return "\n".join(" ".join(line.split()) for line in "".join(out).split("\n")).strip()


def _blocks(container) -> Iterator:
    """Paragraphs and tables of a body or cell in order, content controls opened."""
    for child in container:
        if child.tag in (W + "p", W + "tbl"):
            yield child
        elif child.tag in (W + "sdt", W + "customXml", W + "ins", W + "moveTo"):
            content = child.find(W + "sdtContent")
            yield from _blocks(content if content is not None else child)
        elif child.tag == MC + "AlternateContent":
            choice = child.find(MC + "Choice")
            if choice is not None:
                yield from _blocks(choice)


def _children(el, tag: str) -> Iterator:
    """``el``'s ``tag`` children, also those wrapped in content controls."""
    for child in el:
        if child.tag == tag:
            yield child
        elif child.tag in (W + "sdt", W + "customXml"):
            content = child.find(W + "sdtContent")
            yield from _children(content if content is not None else child, tag)


def _cell_text(tc, reader: "_Body") -> str:
    parts = []
    for block in _blocks(tc):
        if block.tag == W + "tbl":
            parts.append(" / ".join(reader.rows(block)))
        else:
            parts.append(reader.paragraph_text(block))
    return " ".join(p for p in parts if p)


# -- the body --------------------------------------------------------------------------

@dataclass
class _Body:
    styles: dict[str, Style]
    default_style: str | None
    numbering: Numbering
    notes: _Notes
    sections: list[Section] = field(default_factory=list)
    path: list[tuple[int, str]] = field(default_factory=list)
    pieces: list[tuple[Location, str]] = field(default_factory=list)
    count: int = 0
    title: str = ""               # the first title-style paragraph before any text
    first_heading: str = ""

    def paragraph_text(self, p) -> str:
        text = _text(p, self.notes)
        ppr = p.find(W + "pPr")
        num_id = val(ppr, f"{W}numPr/{W}numId")
        ilvl = as_int(val(ppr, f"{W}numPr/{W}ilvl"), 0)
        if num_id is None:
            num_id, ilvl = style_list(self.styles, self._style(p)) or (None, ilvl)
        if text and num_id and num_id != "0":
            label = self.numbering.label(num_id, ilvl)
            text = f"{label} {text}" if label else text
        return text

    def rows(self, tbl) -> Iterator[str]:
        for tr in _children(tbl, W + "tr"):
            cells = []
            for tc in _children(tr, W + "tc"):
                merge = tc.find(f"{W}tcPr/{W}vMerge")
                if merge is not None and merge.get(W + "val") in (None, "continue"):
                    continue             # the rest of a vertically merged cell: shown once, above
                cells.append(_cell_text(tc, self))
            line = " | ".join(c for c in cells if c)
            if line:
                yield line

    def _style(self, p) -> str | None:
        return val(p.find(W + "pPr"), W + "pStyle") or self.default_style

    def _level(self, p) -> int | None:
        outline = as_int(val(p.find(W + "pPr"), W + "outlineLvl"), None)
        if outline is not None:
            return outline + 1 if 0 <= outline < 9 else None
        return heading_level(self.styles, self._style(p))

    def _add(self, text: str) -> None:
        self.count += 1
        self.notes.place(self.count)
        self.pieces.append((Location("paragraph", self.count, self.count), text))

    def _flush(self) -> None:
        section = located_section(tuple(h for _, h in self.path), self.pieces, "\n")
        if section is not None:
            self.sections.append(section)
        self.pieces = []

    def read(self, body) -> None:
        for block in _blocks(body):
            if block.tag == W + "tbl":
                for line in self.rows(block):
                    self._add(line)
                continue
            text = self.paragraph_text(block)
            if not text:
                continue
            level = self._level(block)
            if level is None:
                self._add(text)
                continue
            heading = " ".join(text.split())
            self.count += 1
            self.notes.place(self.count)
            if level == 0 and not self.title and not self.sections and not self.pieces and not self.path:
                self.title = heading          # the document's own title, not a section of it
                continue
            self.first_heading = self.first_heading or heading
            self._flush()
            while self.path and self.path[-1][0] >= level:
                self.path.pop()
            self.path.append((level, heading))
        self._flush()


def _note_section(root, kind: str, notes: _Notes, last: int) -> Section | None:
    """The ``kind`` notes (``footnote``, ``endnote``) as one section, in the order the
    body refers to them, each marked with the paragraph that refers to it."""
    if root is None:
        return None
    texts = {n.get(W + "id"): _text(n, None) for n in root.iter(W + kind)
             if n.get(W + "type") not in _NOTE_TYPES}
    order = notes.order[kind] + [i for i in texts if i not in notes.order[kind]]
    pieces = []
    for n, note_id in enumerate(order, 1):
        if texts.get(note_id):
            at = notes.where.get((kind, note_id), max(last, 1))
            pieces.append((Location("paragraph", at, at), f"{_note_mark(kind, n)} {texts[note_id]}"))
    return located_section(("Footnotes" if kind == "footnote" else "Endnotes",), pieces, "\n")


def read(ctx: ReadContext) -> Iterator[Document]:
    package, main, parts = _open(ctx.path)
    styles, default = read_styles(parts.get("styles"))
    body = _Body(styles, default, Numbering.parse(parts.get("numbering")), _Notes())
    body.read(main.find(W + "body"))
    for kind in ("footnote", "endnote"):
        section = _note_section(parts.get(kind + "s"), kind, body.notes, body.count)
        if section is not None:
            body.sections.append(section)
    try:
        core = package.core_properties.title
    except (KeyError, ValueError, SyntaxError):
        core = None
    ctx.tell(1, 1)
    title = meaningful_title(core) or body.title or body.first_heading or ctx.path.stem
    yield Document(id=ctx.doc_id, title=title, sections=body.sections, path=str(ctx.path))
