"""Numbered headings of Korean official documents, and sections built by them."""
from __future__ import annotations

import pytest

from chaja.documents import Location
from chaja.readers.headings import Block, block_sections, document_title
from chaja.readers.numbering import numbered_heading_level


@pytest.mark.parametrize("line, level", [
    ("Ⅰ. 사업 개요", 1), ("Ⅱ.추진 배경", 1), ("IV. 기대효과", 1), ("제1장 총칙", 1), ("제 2 편 각칙", 1),
    ("1. 개요", 2), ("1.개요", 2), ("12. 행정사항", 2), ("□ 추진 배경", 2), ("■ 제출 서류", 2),
    ("제3조(정의)", 2), ("제3조의2(특례)", 2), ("1. 2024년 추진 실적", 2),
    ("가. 입찰 방법", 3), ("나.입찰 일정", 3),
    ("1) 참가 자격", 4), ("가) 세부 기준", 5), ("(1) 제출 방법", 6), ("(가) 유의 사항", 7),
])
def test_numbered_headings_have_their_level(line, level):
    assert numbered_heading_level(line) == level


@pytest.mark.parametrize("line", [
    "", "   ", "1.5% 증가했다", "1.5%", "2024. 3. 5.", "3. 5. 공고", "12", "1.", "가.", "1) 2) 3)",
    "다음과 같이 공고합니다.",                                  # a sentence
    "1. 본 공고는 입찰에 관한 사항을 알려드립니다.",               # a numbered sentence
    "제1조(목적) 이 영은 법에서 위임한 사항을 정한다.",            # an article with its text
    "□ 예 □ 아니오",                                            # check boxes
    "가능한 범위에서 지원",                                     # 가 opens a word
    "1. " + "매우 긴 제목 " * 12,                               # too long for a heading
    "Introduction to the toolkit",
])
def test_body_text_is_no_heading(line):
    assert numbered_heading_level(line) is None


def test_sections_follow_numbered_headings_and_number_paragraphs():
    blocks = [Block("계획서"), Block("Ⅰ. 개요"), Block("1. 추진 배경"), Block("배경 설명이다."),
              Block(""), Block("2. 추진 내용"), Block("항목 | 값", row=True), Block("각주 설명", note=True)]
    sections, headings = block_sections(blocks, marked=False)
    assert headings == ["Ⅰ. 개요", "1. 추진 배경", "2. 추진 내용"]
    assert [s.heading_path for s in sections] == [(), ("Ⅰ. 개요", "1. 추진 배경"), ("Ⅰ. 개요", "2. 추진 내용")]
    assert sections[1].text == "배경 설명이다."
    assert sections[1].marks == ((0, Location("paragraph", 4, 4)),)
    # the blank block takes no number; the note shares the row's number
    assert sections[2].text == "항목 | 값\n\n각주 설명"
    assert sections[2].marks == ((0, Location("paragraph", 6, 6)),)


def test_a_run_of_numbered_lines_is_a_list_not_headings():
    blocks = [Block("목차"), Block("1. 사업 개요"), Block("2. 추진 계획"), Block("3. 기대 효과"),
              Block("1. 사업 개요"), Block("본문이다.")]
    sections, headings = block_sections(blocks, marked=False)
    assert headings == ["1. 사업 개요"]
    assert sections[0].heading_path == ()
    assert "2. 추진 계획" in sections[0].text
    assert sections[1].heading_path == ("1. 사업 개요",)


def test_marked_outline_levels_win_over_numbering():
    blocks = [Block("사업 개요", outline=1), Block("1. 이 줄은 본문이다"), Block("세부", outline=2), Block("내용")]
    sections, headings = block_sections(blocks, marked=True)
    assert headings == ["사업 개요", "세부"]
    assert [s.heading_path for s in sections] == [("사업 개요",), ("사업 개요", "세부")]


def test_title_rules():
    blocks = [Block("강남복지관 공고 제2024-08호"), Block("2025년 용역업체 선정 입찰공고"), Block("1. 입찰 사항")]
    assert document_title("", blocks, ["1. 입찰 사항"], "stem") == "2025년 용역업체 선정 입찰공고"
    # the metadata title counts when the text bears it out, whatever its spacing
    assert document_title("용역업체 선정", blocks, [], "stem") == "용역업체 선정"
    assert document_title("무궁화동산등", blocks, [], "stem") == "2025년 용역업체 선정 입찰공고"
    # a "제목" label gives the paragraph after it
    assert document_title("", [Block("[ 제 목 ]", row=True), Block("세액감면 여부", row=True)], [], "s") == "세액감면 여부"
    # a title on two lines
    assert document_title("", [Block("의료기기 및"), Block("보고 방법 고시(안)")], [], "s") == "의료기기 및 보고 방법 고시(안)"
    assert document_title("", [Block("1. 개요"), Block("본문")], ["1. 개요"], "stem") == "1. 개요"
    assert document_title("", [], [], "stem") == "stem"
