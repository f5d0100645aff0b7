"""HWP 5 data records: the record stream, the record tree, and paragraph text with its
control characters.

Format facts from Hancom's "한글 문서 파일 형식 5.0" (revision 1.3), by its section names:

* 데이터 레코드: each record has a DWORD header, tag id in bits 0-9, level in 10-19,
  size in 20-31; size 0xFFF means a DWORD size follows. A record is the child of the
  nearest record before it one level up.
* 문단 헤더 / 문단의 텍스트 (HWPTAG_PARA_HEADER 66, HWPTAG_PARA_TEXT 67): the text is
  UTF-16LE with control characters below 32: char controls (0, 10 line break, 13
  paragraph end, 24-31) take one unit; inline (4-9, 19-20; 9 is a tab) and extended
  controls (1-3, 11-12, 14-18, 21-23) take eight, an extended one naming in units 2-3
  the id of the control header (HWPTAG_CTRL_HEADER 71) that holds its object.
"""
from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from chaja.readers.base import ReadError

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
