"""HWPX (OWPML, KS X 6101) files → a document, with the standard library alone.

Format facts from KS X 6101 "개방형 워드프로세서 마크업 언어(OWPML) 문서 구조" and
Hancom's HWPX files:

* the file is a zip: ``mimetype`` (``application/hwp+zip``), ``Contents/content.hpf``
  (an OPF package: ``opf:metadata`` with ``opf:title``, ``opf:manifest`` items and the
  ``opf:spine`` order), ``Contents/header.xml`` (styles) and the body sections
  ``Contents/section0.xml``…;
* header.xml: ``hh:paraPr id=…`` holds ``hh:heading type="OUTLINE" level="0".."6"``
  for an outline (개요) paragraph shape;
* a section (``hs:sec``) is a list of paragraphs ``hp:p paraPrIDRef=…``; a paragraph's
  ``hp:run`` elements hold text ``hp:t`` (with ``hp:tab``, ``hp:lineBreak``,
  ``hp:nbSpace``, ``hp:fwSpace``, ``hp:hyphen`` inside), tables ``hp:tbl`` → ``hp:tr``
  → ``hp:tc`` (``hp:cellAddr colAddr rowAddr``) → ``hp:subList`` → ``hp:p``, and
  controls ``hp:ctrl`` (``hp:footNote``/``hp:endNote`` → ``hp:subList``; headers,
  footers and hidden comments, left out). Drawing objects keep a text box's
  paragraphs in ``hp:drawText`` → ``hp:subList``, tables and pictures their caption's
  in ``hp:caption`` → ``hp:subList``.

Elements are matched by local name, whatever the namespace version. Paragraphs,
table rows and headings follow the HWP reader (:mod:`chaja.readers.hwp`): one block a
paragraph or table row, numbered 1.. over the document.
"""
from __future__ import annotations

import re
import zipfile
import zlib
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import PurePosixPath

from chaja.documents import Document
from chaja.readers.base import ReadContext, ReadError
from chaja.readers.headings import Block, block_sections, document_title
from chaja.readers.hwp import MAX_NESTING
from chaja.readers.hwp_records import clean_text

#: the most bytes the package's XML may take unpacked (one part and all together)
MAX_UNPACKED_BYTES = 200 * 1024 * 1024
_SECTION = re.compile(r"Contents/section(\d+)\.xml$")
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_SKIPPED_CTRLS = {"header", "footer", "hiddenComment"}
_CHAR_ELEMENTS = {"tab": "\t", "lineBreak": "\n", "nbSpace": " ", "fwSpace": " ", "hyphen": "-"}


def _name(elem: ET.Element) -> str:
    return elem.tag.rsplit("}", 1)[-1]


def _children(elem: ET.Element, name: str) -> Iterator[ET.Element]:
    return (c for c in elem if _name(c) == name)


class _Package:
    """The zip, read with bounds: no part may unpack past the limit, nor all together."""

    def __init__(self, zf: zipfile.ZipFile):
        self.zf = zf
        self.names = set(zf.namelist())
        self.unpacked = 0
        self.parsed: dict[str, ET.Element] = {}

    def xml(self, name: str, keep: bool = False) -> ET.Element:
        """A part's parsed XML; ``keep`` holds on to it for the next call."""
        if name in self.parsed:
            return self.parsed[name]
        root = self._parse(name)
        if keep:
            self.parsed[name] = root
        return root

    def _parse(self, name: str) -> ET.Element:
        try:
            with self.zf.open(name) as f:
                data = f.read(MAX_UNPACKED_BYTES - self.unpacked + 1)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, RuntimeError, NotImplementedError) as e:
            raise ReadError(f"is damaged: {name} cannot be unpacked ({e})") from None
        self.unpacked += len(data)
        if self.unpacked > MAX_UNPACKED_BYTES:
            raise ReadError(f"unpacks past {MAX_UNPACKED_BYTES // 2**20} MB of XML (a zip bomb?); not read")
        if _DTD.search(data):
            raise ReadError(f"has a DTD or entity declaration in {name}, which an HWPX file never needs; "
                            "refused as unsafe")
        try:
            return ET.fromstring(data)
        except ET.ParseError as e:
            raise ReadError(f"is damaged: {name} is not well-formed XML ({e})") from None


def _section_names(pkg: _Package) -> list[str]:
    """The body sections in the order content.hpf's spine gives, else by number."""
    order: list[str] = []
    if "Contents/content.hpf" in pkg.names:
        hpf = pkg.xml("Contents/content.hpf", keep=True)
        hrefs = {item.get("id"): item.get("href", "") for item in hpf.iter() if _name(item) == "item"}
        for ref in (e for e in hpf.iter() if _name(e) == "itemref"):
            href = hrefs.get(ref.get("idref"), "")
            for name in (href, str(PurePosixPath("Contents") / href)):
                if _SECTION.search(name) and name in pkg.names and name not in order:
                    order.append(name)
                    break
    if not order:
        order = sorted((n for n in pkg.names if _SECTION.match(n)), key=lambda n: int(_SECTION.match(n).group(1)))
    return order


def _meta_title(pkg: _Package) -> str:
    if "Contents/content.hpf" not in pkg.names:
        return ""
    title = next((e for e in pkg.xml("Contents/content.hpf", keep=True).iter() if _name(e) == "title"), None)
    return (title.text or "").strip() if title is not None else ""


def _outline_levels(pkg: _Package) -> dict[str, int]:
    """paraPr id → outline level (1-7) for the 개요 paragraph shapes in header.xml."""
    if "Contents/header.xml" not in pkg.names:
        return {}
    out: dict[str, int] = {}
    for para_pr in (e for e in pkg.xml("Contents/header.xml").iter() if _name(e) == "paraPr"):
        heading = next(_children(para_pr, "heading"), None)
        if heading is not None and heading.get("type") == "OUTLINE":
            try:
                out[para_pr.get("id", "")] = int(heading.get("level", "0")) + 1
            except ValueError:
                continue
    return out


class _Renderer:
    def __init__(self, outline_of: dict[str, int]):
        self.outline_of = outline_of

    def paragraphs(self, container: ET.Element, depth: int = 0) -> Iterator[Block]:
        for p in _children(container, "p"):
            yield from self.paragraph(p, depth)

    def paragraph(self, p: ET.Element, depth: int) -> Iterator[Block]:
        outline = self.outline_of.get(p.get("paraPrIDRef", ""))
        text: list[str] = []
        after: list[Block] = []
        for run in _children(p, "run"):
            for item in _unswitched(run):
                kind = _name(item)
                if kind == "t":
                    text.append(_run_text(item))
                elif depth >= MAX_NESTING:
                    continue
                elif kind == "tbl":
                    table = list(self.table(item, depth + 1))
                    if table:
                        yield Block(clean_text("".join(text)), outline)
                        text.clear()
                        yield from table
                elif kind == "ctrl":
                    for ctrl in _unswitched(item):
                        if _name(ctrl) in ("footNote", "endNote"):
                            note = " ".join(b.text for sub in _children(ctrl, "subList")
                                            for b in self.paragraphs(sub, depth + 1) if b.text.strip())
                            if note.strip():
                                after.append(Block(note, note=True))
                elif kind not in ("secPr", "equation", "linesegarray"):
                    for sub in _draw_texts(item):
                        after.extend(self.paragraphs(sub, depth + 1))
        yield Block(clean_text("".join(text)), outline)
        yield from after

    def table(self, tbl: ET.Element, depth: int) -> Iterator[Block]:
        cells: list[tuple[int, int, ET.Element]] = []
        for r, tr in enumerate(_children(tbl, "tr")):
            for c, tc in enumerate(_children(tr, "tc")):
                addr = next(_children(tc, "cellAddr"), None)
                row, col = r, c
                if addr is not None:
                    row, col = _int(addr.get("rowAddr"), r), _int(addr.get("colAddr"), c)
                cells.append((row, col, tc))
        captions = [sub for caption in _children(tbl, "caption") for sub in _children(caption, "subList")]
        if len(cells) == 1:               # a box drawn around text: its paragraphs as they are
            for sub in [*_children(cells[0][2], "subList"), *captions]:
                yield from self.paragraphs(sub, depth)
            return
        rows: dict[int, list[tuple[int, str]]] = {}
        for row, col, tc in cells:
            text = " ".join(" ".join(b.text.split()) for sub in _children(tc, "subList")
                            for b in self.paragraphs(sub, depth))
            rows.setdefault(row, []).append((col, text.strip()))
        for row in sorted(rows):
            line = " | ".join(t for _, t in sorted(rows[row], key=lambda c: c[0]) if t)
            if line:
                yield Block(line, row=True)
        for sub in captions:
            yield from self.paragraphs(sub, depth)


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def _unswitched(elem: ET.Element) -> Iterator[ET.Element]:
    """``elem``'s children, an ``hp:switch`` replaced by its ``hp:default`` (else first case)."""
    for child in elem:
        if _name(child) == "switch":
            chosen = next(_children(child, "default"), None) or next(_children(child, "case"), None)
            if chosen is not None:
                yield from chosen
        else:
            yield child


def _run_text(t: ET.Element) -> str:
    """An ``hp:t``'s text with its tab, line-break and space elements."""
    parts = [t.text or ""]
    for child in t:
        parts.append(_CHAR_ELEMENTS.get(_name(child), ""))
        parts.append(child.tail or "")
    return "".join(parts)


def _draw_texts(elem: ET.Element, depth: int = 0) -> list[ET.Element]:
    """The ``hp:subList`` of each outermost text box (``hp:drawText``) or caption under a
    drawing object, in document order."""
    found: list[ET.Element] = []
    for child in elem:
        name = _name(child)
        if name in ("drawText", "caption"):
            found.extend(_children(child, "subList"))
        elif name not in _SKIPPED_CTRLS and depth < 4 * MAX_NESTING:
            found.extend(_draw_texts(child, depth + 1))
    return found


def read(ctx: ReadContext) -> Iterator[Document]:
    try:
        zf = zipfile.ZipFile(ctx.path)
    except (zipfile.BadZipFile, OSError) as e:
        raise ReadError(f"is not a readable HWPX (zip) file ({e})") from None
    with zf:
        pkg = _Package(zf)
        names = _section_names(pkg)
        if not names:
            raise ReadError("is a zip without HWPX body sections (no Contents/section0.xml); "
                            "not an HWPX document or a damaged one")
        renderer = _Renderer(_outline_levels(pkg))
        blocks: list[Block] = []
        for i, name in enumerate(names, 1):
            blocks.extend(renderer.paragraphs(pkg.xml(name)))
            ctx.tell(i, len(names))
        meta_title = _meta_title(pkg)
    marked = any(b.outline is not None and b.text.strip() for b in blocks)
    sections, headings = block_sections(blocks, marked)
    if not sections:
        ctx.notes.append("has no text (an HWPX file of images or empty pages)")
    title = document_title(meta_title, blocks, headings, ctx.path.stem)
    yield Document(id=ctx.doc_id, title=title, sections=sections, path=str(ctx.path))
