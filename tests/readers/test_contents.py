"""Table-of-contents lines are told from text that merely ends in a number."""
from __future__ import annotations

import pytest

from chaja.readers.contents import is_contents_line


@pytest.mark.parametrize("line", [
    "Ⅰ. 사업 개요 ··························· 3", "1. 추진배경 및 목적 ·········· 4", "Introduction ..... 12",
    "【별첨】일반현황 ·········································31", "Ⅰ. 사업 개요 · 3", "Appendix B . . . . . . iv",
    "제3장 추진 계획 ‥‥‥‥ - 12 -",
])
def test_contents_entries(line):
    assert is_contents_line(line)


@pytest.mark.parametrize("line", [
    "The rate is 3.5 ...", "see page 12", "..... 12", "Total 1,234", "Revenue grew · 3", "", "12",
    "전기요금 단가는 킬로와트시당 120원이다.", "a" * 5000 + "." * 5000 + "1" * 5000,
])
def test_other_lines(line):
    assert not is_contents_line(line)
