"""HWP 5 data records (chaja.readers.hwp_records), on streams built byte by byte after
the format spec: record headers with long sizes, paragraph text with its controls."""
from __future__ import annotations

import pytest

from chaja.readers import hwp_records
from chaja.readers.base import ReadError
from tests.readers.hwp_build import rec, text


def test_record_headers_with_long_sizes():
    long = "가" * 3000                               # 6,000 bytes: past 0xFFF, so a DWORD size
    data = rec(1, 0, b"ab") + rec(hwp_records.TAG_PARA_TEXT, 3, long.encode("utf-16-le")) + rec(1023, 1023)
    got = list(hwp_records.iter_records(data, "test"))
    assert [(r.tag, r.level, len(r.data)) for r in got] == [(1, 0, 2), (67, 3, 6000), (1023, 1023, 0)]
    with pytest.raises(ReadError, match="runs past the end"):
        list(hwp_records.iter_records(data[:-1 - 6000], "test"))
    with pytest.raises(ReadError, match="inside a record header"):
        list(hwp_records.iter_records(b"\x01\x00", "test"))


def test_para_text_controls():
    data = text("가", ("ext", 2, "secd"), ("ext", 3, "%clk"), "누름틀", ("inline", 4), ("inline", 9), "끝",
                ("char", 10), "둘째 줄😀", ("char", 24), ("char", 30), ("char", 0), "x")
    got = hwp_records.decode_para_text(data)
    assert got == ["가", hwp_records.Control(2, "secd"), hwp_records.Control(3, "%clk"), "누름틀\t끝\n둘째 줄😀- x"]
