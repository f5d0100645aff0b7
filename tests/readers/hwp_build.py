"""HWP 5 records built byte by byte after the format spec ("한글 문서 파일 형식 5.0"), for
the HWP reader's tests: record headers, paragraph text with its controls, paragraphs,
control headers, table cells and tables."""
from __future__ import annotations

import struct

from chaja.readers import hwp_records


def rec(tag: int, level: int, data: bytes = b"") -> bytes:
    """A record: tag in bits 0-9, level 10-19, size 20-31 (0xFFF and a DWORD when larger)."""
    if len(data) >= 0xFFF:
        return struct.pack("<II", tag | level << 10 | 0xFFF << 20, len(data)) + data
    return struct.pack("<I", tag | level << 10 | len(data) << 20) + data


def ctrl_id(name: str) -> int:
    return int.from_bytes(name.encode("latin-1"), "big")


def text(*parts: str | tuple) -> bytes:
    """PARA_TEXT: strings as UTF-16LE; ("ext", code, id) an extended control (8 units);
    ("inline", code) an inline control (8 units); ("char", code) one unit."""
    out = b""
    for part in parts:
        if isinstance(part, str):
            out += part.encode("utf-16-le")
        elif part[0] == "ext":
            cid = ctrl_id(part[2])
            out += struct.pack("<8H", part[1], cid & 0xFFFF, cid >> 16, 0, 0, 0, 0, part[1])
        elif part[0] == "inline":
            out += struct.pack("<8H", part[1], 0, 0, 0, 0, 0, 0, part[1])
        else:
            out += struct.pack("<H", part[1])
    return out + struct.pack("<H", 13)


def para(level: int, body: bytes | None, shape: int = 0, extra: bytes = b"") -> bytes:
    """A paragraph: PARA_HEADER (shape id at byte 8), its PARA_TEXT, then ``extra`` records."""
    header = struct.pack("<IIHBBHHHI", 1, 0, shape, 0, 0, 1, 0, 1, 0)
    out = rec(hwp_records.TAG_PARA_HEADER, level, header)
    if body is not None:
        out += rec(hwp_records.TAG_PARA_TEXT, level + 1, body)
    return out + extra


def ctrl(level: int, name: str) -> bytes:
    return rec(hwp_records.TAG_CTRL_HEADER, level, struct.pack("<I", ctrl_id(name)) + bytes(40))


def cell(level: int, col: int, row: int, *paragraphs: bytes) -> bytes:
    header = struct.pack("<HIHHHHH", len(paragraphs), 0, 0, col, row, 1, 1) + bytes(20)
    return rec(hwp_records.TAG_LIST_HEADER, level, header) + b"".join(paragraphs)


def table(level: int, rows: list[list[str]]) -> bytes:
    """A 'tbl ' control at ``level`` with its TABLE record and one list header per cell."""
    shape = struct.pack("<IHH", 0, len(rows), len(rows[0])) + bytes(30)
    out = ctrl(level, "tbl ") + rec(hwp_records.TAG_TABLE, level + 1, shape)
    for r, cells in enumerate(rows):
        for c, value in enumerate(cells):
            out += cell(level + 1, c, r, para(level + 1, text(value)))
    return out
