"""HWP 5.x (Hangul word processor) files → a document, read from the published format.

Format facts from Hancom's "한글 문서 파일 형식 5.0" (revision 1.3), by its section names:

* 파일 구조: an OLE2 compound file with the streams ``FileHeader``, ``DocInfo``,
  ``BodyText/Section0``… (``ViewText/Section0``… in a 배포용 document) and
  ``\\x05HwpSummaryInformation`` (an OLE property set; PIDSI_TITLE = 2).
* 파일 인식 정보 (FileHeader): the 32-byte signature ``HWP Document File``, a DWORD
  version ``0xMMnnPPrr`` and a DWORD of flags: bit 0 compressed, bit 1 password,
  bit 2 배포용, bit 4 DRM, bit 8 certificate encryption. A compressed stream is raw
  deflate (zlib ``wbits=-15``).
* 데이터 레코드: each record has a DWORD header, tag id in bits 0-9, level in 10-19,
  size in 20-31; size 0xFFF means a DWORD size follows. A record is the child of the
  nearest record before it one level up.
* 문단 헤더 / 문단의 텍스트 (HWPTAG_PARA_HEADER 66, HWPTAG_PARA_TEXT 67): the text is
  UTF-16LE with control characters below 32: char controls (0, 10 line break, 13
  paragraph end, 24-31) take one unit; inline (4-9, 19-20; 9 is a tab) and extended
  controls (1-3, 11-12, 14-18, 21-23) take eight, an extended one naming in units 2-3
  the id of the control header (HWPTAG_CTRL_HEADER 71) that holds its object.
* 표 개체 ('tbl ' control, HWPTAG_TABLE 77) and 문단 리스트 헤더 (HWPTAG_LIST_HEADER 72):
  after the TABLE record each cell is a list header (paragraph count, attributes, then
  column and row address at bytes 8 and 10) followed by its paragraphs; a caption's
  list comes before the TABLE record. Footnotes and endnotes ('fn  ', 'en  ') and text
  boxes ('gso ') hold paragraph lists the same way.
* An HWP 3 file (Hangul 97 and older) is no compound file; it opens with
  ``HWP Document File V3.00``.
* 문단 모양 (HWPTAG_PARA_SHAPE 25 in DocInfo, 표 43/44): attribute bits 23-24 are the
  paragraph head type (1 = 개요, an outline heading) and bits 25-27 its level (0-6).
* 배포용 문서 데이터 (HWPTAG_DISTRIBUTE_DOC_DATA 28): 256 bytes whose first four seed
  the MS Visual C ``rand()``; each ``rand() & 0xFF`` XORs the next ``(rand() & 0xF) + 1``
  bytes from byte 4 on, and the AES-128 key is the 16 bytes at ``4 + (seed & 0xF)``.
  The rest of the stream is AES-128-ECB ciphertext of the (compressed) records.

Paragraph numbers (``Location("paragraph", n, n)``) count what a reader sees, in reading
order over the whole document: each paragraph with text, each table row (a table with
one cell, a box, gives its paragraphs instead), each text-box paragraph; a footnote
shares its paragraph's number. Headers, footers, hidden comments and equations are
left out.
"""
from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from chaja.documents import Document
from chaja.readers.base import ReadContext, ReadError
from chaja.readers.headings import Block, block_sections, document_title

#: the most bytes a file's streams may inflate to, all together: more is refused as a zip bomb
MAX_STREAM_BYTES = 200 * 1024 * 1024
#: tables and boxes nested deeper than this are not read (a hostile file's recursion)
MAX_NESTING = 16

SIGNATURE = b"HWP Document File"
F_COMPRESSED, F_PASSWORD, F_DISTRIBUTION, F_DRM, F_CERT_ENCRYPTED = 1, 2, 4, 16, 256

TAG_PARA_SHAPE = 25
TAG_DISTRIBUTE_DOC_DATA = 28
TAG_PARA_HEADER = 66
TAG_PARA_TEXT = 67
TAG_CTRL_HEADER = 71
TAG_LIST_HEADER = 72
TAG_TABLE = 77

# 문단의 텍스트, 표 6: control characters by how many UTF-16 units they take
_EXTENDED = frozenset({1, 2, 3, 11, 12, 14, 15, 16, 17, 18, 21, 22, 23})   # 8 units, own control header
_INLINE = frozenset({4, 5, 6, 7, 8, 9, 19, 20})                             # 8 units
_CHAR_AS = {10: "\n", 24: "-", 30: " ", 31: " "}    # line break, hyphen, bound and fixed-width space

_NOTES = ("fn  ", "en  ")


@dataclass
class Record:
    tag: int
    level: int
    data: bytes


@dataclass
class Node:
    """A record with the records under it."""

    tag: int
    data: bytes
    children: list["Node"] = field(default_factory=list)


@dataclass(frozen=True)
class Control:
    """An extended control character in paragraph text: its code and its object's id."""

    code: int
    ctrl_id: str


def iter_records(data: bytes, where: str = "a stream") -> Iterator[Record]:
    """The records of a decompressed stream, in order (데이터 레코드)."""
    pos, end = 0, len(data)
    while pos < end:
        if pos + 4 > end:
            raise ReadError(f"is damaged: {where} ends inside a record header")
        head = int.from_bytes(data[pos:pos + 4], "little")
        pos += 4
        tag, level, size = head & 0x3FF, (head >> 10) & 0x3FF, head >> 20
        if size == 0xFFF:
            if pos + 4 > end:
                raise ReadError(f"is damaged: {where} ends inside a record header")
            size = int.from_bytes(data[pos:pos + 4], "little")
            pos += 4
        if pos + size > end:
            raise ReadError(f"is damaged: a record in {where} runs past the end of the stream")
        yield Record(tag, level, data[pos:pos + size])
        pos += size


def record_tree(records: Iterable[Record]) -> list[Node]:
    """The records as a forest: each record under the nearest one before it with a lower level."""
    roots: list[Node] = []
    stack: list[tuple[int, Node]] = []
    for rec in records:
        node = Node(rec.tag, rec.data)
        while stack and stack[-1][0] >= rec.level:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((rec.level, node))
    return roots


def decode_para_text(data: bytes) -> list[str | Control]:
    """HWPTAG_PARA_TEXT → runs of text and the extended controls between them. Tabs
    become ``\\t``, line breaks ``\\n``; other controls, the paragraph end and unpaired
    surrogates are dropped."""
    count = len(data) // 2
    units = struct.unpack(f"<{count}H", data[:count * 2])
    out: list[str | Control] = []
    run: list[int] = []

    def flush() -> None:
        if run:
            out.append(struct.pack(f"<{len(run)}H", *run).decode("utf-16-le", "ignore"))
            run.clear()

    i = 0
    while i < count:
        code = units[i]
        if code >= 32:
            run.append(code)
            i += 1
        elif code in _EXTENDED or code in _INLINE:
            if code == 9:
                run.append(9)
            elif code in _EXTENDED:
                flush()
                ctrl = (units[i + 1] | units[i + 2] << 16) if i + 2 < count else 0
                out.append(Control(code, ctrl.to_bytes(4, "big").decode("latin-1")))
            i += 8
        else:
            if code in _CHAR_AS:
                run.append(ord(_CHAR_AS[code]))
            i += 1
    flush()
    return out


def clean_text(text: str) -> str:
    """Text without private-use characters (Hancom's symbol-font glyphs) or other stray controls."""
    return "".join(ch for ch in text if (ch >= " " or ch in "\n\t") and not "\ue000" <= ch <= "\uf8ff")


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


# -- the compound file -----------------------------------------------------------


def inflate(data: bytes, where: str, limit: int | None = None) -> bytes:
    """Raw deflate → bytes, at most ``limit`` (:data:`MAX_STREAM_BYTES`) of them."""
    limit = MAX_STREAM_BYTES if limit is None else limit
    unzip = zlib.decompressobj(-15)
    try:
        out = unzip.decompress(data, limit + 1)
    except zlib.error as e:
        raise ReadError(f"is damaged: {where} does not decompress ({e})") from None
    if len(out) > limit:
        raise ReadError(f"expands {where} past {limit / 2**20:g} MB when decompressed (a zip bomb?); not read")
    if not unzip.eof:
        raise ReadError(f"is damaged: {where} ends before its compressed data does (truncated?)")
    return out


def _ms_rand(seed: int) -> Iterator[int]:
    """MS Visual C ``rand()`` after ``srand(seed)``."""
    while True:
        seed = (seed * 214013 + 2531011) & 0xFFFFFFFF
        yield (seed >> 16) & 0x7FFF


def distribution_key(doc_data: bytes) -> bytes:
    """The AES-128 key hidden in a HWPTAG_DISTRIBUTE_DOC_DATA record's 256 bytes."""
    if len(doc_data) < 256:
        raise ReadError("is damaged: its 배포용 (distribution) key record is short")
    seed = int.from_bytes(doc_data[:4], "little")
    rand = _ms_rand(seed)
    data = bytearray(doc_data[:256])
    key = left = 0
    for i in range(256):
        if left == 0:
            key, left = next(rand) & 0xFF, (next(rand) & 0xF) + 1
        if i >= 4:
            data[i] ^= key
        left -= 1
    at = 4 + (seed & 0xF)
    return bytes(data[at:at + 16])


def decrypt_view_text(raw: bytes, where: str) -> bytes:
    """A ViewText stream → its (still compressed) records: the key record, then AES-128-ECB."""
    first = next(iter_records(raw[:260], where), None) if len(raw) >= 260 else None
    if first is None or first.tag != TAG_DISTRIBUTE_DOC_DATA or len(first.data) != 256:
        raise ReadError(f"is damaged: {where} of this 배포용 (distribution) document has no key record")
    body = raw[260:]
    body = body[:len(body) - len(body) % 16]
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    except ImportError:
        from chaja.readers.base import MissingExtra
        raise MissingExtra("배포용 (distribution) HWP files", "documents", "cryptography") from None
    decryptor = Cipher(algorithms.AES(distribution_key(first.data)), modes.ECB()).decryptor()
    return decryptor.update(body) + decryptor.finalize()


def _section_number(name: list[str]) -> int:
    digits = name[-1][len("Section"):]
    return int(digits) if digits.isdigit() else 1 << 30


@dataclass
class HwpFile:
    """The parts of an open HWP 5 file that the reader uses."""

    version: str
    flags: int
    title: str
    outline_of_shape: dict[int, int]
    sections: list[bytes]          # each body section's decompressed records
    notes: list[str] = field(default_factory=list)     # what was damaged but read around


def _version(raw: int) -> str:
    return ".".join(str(raw >> s & 0xFF) for s in (24, 16, 8, 0))


def open_hwp(path) -> HwpFile:
    """Open and check an HWP 5 file; raise :class:`ReadError` for what cannot be read."""
    import olefile

    with open(path, "rb") as f:
        head = f.read(64)
    if head.startswith(b"HWP Document File V"):
        version = head[len(b"HWP Document File V"):].split(b" ")[0].decode("latin-1", "replace")
        raise ReadError(f"is an HWP {version} document (Hangul 97 or older), which chaja does not read; "
                        "save it as HWP 5 (.hwp) or HWPX in Hangul")
    if not olefile.isOleFile(str(path)):
        raise ReadError("is not an HWP file: it is no OLE compound file")
    try:
        ole = olefile.OleFileIO(str(path))
    except Exception as e:             # olefile raises OSError and others on damaged files
        raise ReadError(f"is damaged: its compound file cannot be opened ({e})") from None
    with ole:
        try:
            header = ole.openstream("FileHeader").read() if ole.exists("FileHeader") else b""
        except Exception as e:
            raise ReadError(f"is damaged: its FileHeader cannot be read ({e})") from None
        if not header.startswith(SIGNATURE) or len(header) < 40:
            raise ReadError("is an OLE compound file but not an HWP document")
        raw_version, flags = struct.unpack_from("<II", header, 32)
        version = _version(raw_version)
        if raw_version >> 24 != 5:
            raise ReadError(f"is an HWP {version} document; chaja reads HWP 5.x")
        if flags & F_PASSWORD:
            raise ReadError("is protected with a password; save it without one to read it")
        if flags & (F_DRM | F_CERT_ENCRYPTED):
            raise ReadError("is DRM-protected or encrypted with a certificate; chaja cannot read it")

        budget = [MAX_STREAM_BYTES]

        def stream(name: list[str]) -> bytes:
            where = "/".join(name)
            try:
                data = ole.openstream(name).read()
            except Exception as e:
                raise ReadError(f"is damaged: its {where} stream cannot be read ({e})") from None
            if name[0] == "ViewText":
                data = decrypt_view_text(data, where)
            if flags & F_COMPRESSED:
                data = inflate(data, where, budget[0])
                budget[0] -= len(data)
            return data

        body = "ViewText" if flags & F_DISTRIBUTION and ole.exists("ViewText") else "BodyText"
        names = sorted((e for e in ole.listdir() if len(e) == 2 and e[0] == body and e[1].startswith("Section")),
                       key=_section_number)
        if not names:
            raise ReadError(f"is damaged: it has no {body}/Section streams")
        notes: list[str] = []
        try:
            outline = _outline_shapes(stream(["DocInfo"])) if ole.exists("DocInfo") else {}
        except ReadError as e:           # the body can be read without the paragraph shapes
            if "zip bomb" in str(e):
                raise
            outline = {}
            notes.append(f"{e}; its outline headings are not known")
        sections = [stream(name) for name in names]
        title = _summary_title(ole)
    return HwpFile(version, flags, title, outline, sections, notes)


def _outline_shapes(doc_info: bytes) -> dict[int, int]:
    """Paragraph shape id → outline level (1-7) for DocInfo's 개요 paragraph shapes."""
    out: dict[int, int] = {}
    shape = 0
    for rec in iter_records(doc_info, "DocInfo"):
        if rec.tag != TAG_PARA_SHAPE:
            continue
        if len(rec.data) >= 4:
            attr = int.from_bytes(rec.data[:4], "little")
            if (attr >> 23) & 0x3 == 1:
                out[shape] = ((attr >> 25) & 0x7) + 1
        shape += 1
    return out


def _summary_title(ole) -> str:
    """PIDSI_TITLE from the ``\\x05HwpSummaryInformation`` property set (a VT_LPWSTR), or ""."""
    name = "\x05HwpSummaryInformation"
    if not ole.exists(name):
        return ""
    try:
        data = ole.openstream(name).read(1 << 20)
        return property_string(data, 2)
    except (struct.error, ValueError, OSError):
        return ""


def property_string(data: bytes, pid: int) -> str:
    """One string property of an OLE property set stream (its first section)."""
    (count,) = struct.unpack_from("<I", data, 24)
    if count < 1:
        return ""
    (section,) = struct.unpack_from("<I", data, 44)
    (props,) = struct.unpack_from("<I", data, section + 4)
    for i in range(min(props, 4096)):
        prop_id, offset = struct.unpack_from("<II", data, section + 8 + 8 * i)
        if prop_id != pid:
            continue
        at = section + offset
        (vtype,) = struct.unpack_from("<H", data, at)
        (chars,) = struct.unpack_from("<I", data, at + 4)
        if vtype == 0x1F:                   # VT_LPWSTR: a count of UTF-16 units, NUL included
            raw = data[at + 8:at + 8 + 2 * chars]
            return raw.decode("utf-16-le", "ignore").split("\x00", 1)[0].strip()
        if vtype == 0x1E:                   # VT_LPSTR, in the file's code page (Korean: cp949)
            raw = data[at + 8:at + 8 + chars]
            return raw.split(b"\x00", 1)[0].decode("cp949", "ignore").strip()
        return ""
    return ""


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
