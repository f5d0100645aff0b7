"""Text files in the encodings people have: UTF-8, UTF-16, CP949/EUC-KR."""
from __future__ import annotations

import pytest

from chaja.loaders import LoadReport, load_paths
from chaja.readers.encoding import decode
from tests.readers.shared_files import shared_file

KOREAN = "한글 인코딩 EUC-KR로 저장된 공지입니다. 전기요금 단가는 킬로와트시당 120원입니다."


@pytest.mark.parametrize("codec", ["cp949", "euc-kr"])
def test_korean_code_pages_are_read_as_korean(codec):
    got = decode(KOREAN.encode(codec))
    assert got.text == KOREAN and got.encoding == "cp949" and got.note is None


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-be", "utf-8-sig", "utf-32"])
def test_byte_order_marks_choose_the_codec(codec):
    data = KOREAN.encode(codec) if codec != "utf-16-be" else b"\xfe\xff" + KOREAN.encode("utf-16-be")
    assert decode(data).text == KOREAN


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_mark(codec):
    text = "Plain English notes, written by a Windows tool.\n" * 3
    got = decode(text.encode(codec))
    assert got.text == text and got.encoding == codec


def test_a_few_broken_bytes_in_utf8_are_replaced_not_guessed_as_another_code_page():
    got = decode("정상적인 UTF-8 문장입니다. ".encode() * 20 + b"\xff\xfe" + "끝".encode())
    assert got.encoding == "utf-8" and got.text.count("\ufffd") == 2 and "invalid UTF-8" in got.note


def test_the_shared_cp949_glossary_reads_as_korean(tmp_path):
    path = shared_file("ai-glossary-cp949.txt")
    report = LoadReport()
    docs = list(load_paths([path], report))
    assert report.encodings == {str(path): "cp949"}
    text = docs[0].title + docs[0].text
    assert "\ufffd" not in text and docs[0].lang == "ko"
    assert "Semantic Search" in text and "의미론적 검색" in text


def test_the_shared_legal_dong_codes_are_read_whole():
    path = shared_file("legal-dong-codes-cp949.txt")
    report = LoadReport()
    docs = list(load_paths([path], report))
    text = docs[0].text
    assert report.encodings[str(path)] == "cp949"
    assert "서울특별시 종로구 청운동" in text and "\ufffd" not in text
