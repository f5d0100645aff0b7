"""PowerPoint files: the shared real presentations, and files written here with
python-pptx (Korean and English), read by chaja.readers.pptx."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from chaja.documents import Location
from chaja.readers import pptx as pptx_reader
from chaja.readers.base import ReadContext, ReadError
from tests.readers.shared_files import shared_file as shared

pptx = pytest.importorskip("pptx")
from pptx.util import Inches  # noqa: E402


def read(path: Path, doc_id: str = "deck", **kw):
    [doc] = pptx_reader.read(ReadContext(path, doc_id, **kw))
    return doc


def slide(doc, n: int):
    [section] = [s for s in doc.sections if s.marks[0][1] == Location("slide", n, n)]
    assert section.marks == ((0, Location("slide", n, n)),)
    return section


# -- the shared real presentations ------------------------------------------------------------

def test_korean_tutorial_slides_are_sections_under_their_titles():
    doc = read(shared("langchain-tutorial-ko.pptx"), "langchain")
    assert doc.id == "langchain" and doc.title == "랭체인 한국어 튜토리얼"     # no core title: slide 1's
    assert [s.heading_path for s in doc.sections] == [
        ("랭체인 한국어 튜토리얼",), ("Semantic Search",), ("Embedding",), ("Token",)]
    assert slide(doc, 1).text == "- 테디노트 -"
    assert ("정의: 임베딩은 단어나 문장 같은 텍스트 데이터를 저차원의 연속적인 벡터로 변환하는 과정입니다. "
            "이를 통해 컴퓨터가 텍스트를 이해하고 처리할 수 있게 합니다.") in slide(doc, 3).text.split("\n")


def test_english_deck_skips_slide_numbers_and_placeholder_core_title():
    doc = read(shared("nih-identity-management.pptx"))
    assert doc.title == "Government-University Identity Management Opportunities"   # core title is "Slide 1"
    assert len(doc.sections) == 23
    s21 = slide(doc, 21)
    assert s21.heading_path == ("Password Entropy (Copied From Bill Burr)*",)
    assert "Stated in bits, a password with 24 bits of entropy is as hard to guess as a 24 bit random number" in s21.text
    s12 = slide(doc, 12)                  # no title placeholder: no heading
    assert s12.heading_path == () and s12.text == "US Government E-Authentication Interfederation Model"
    s2 = slide(doc, 2).text.split("\n")
    assert s2[0] == "You apply to the application owner for a password" and "2" not in s2
    assert slide(doc, 4).text.endswith("* Codified in OMB Memorandum 04-04")


# -- presentations written here ----------------------------------------------------------------

def build(path: Path) -> Path:
    prs = pptx.Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[0])
    s1.shapes.title.text = "2024 분기 보고"
    s1.placeholders[1].text = "경영지원팀"
    s2 = prs.slides.add_slide(prs.slide_layouts[1])
    s2.shapes.title.text = "매출 개요"
    body = s2.placeholders[1].text_frame
    body.text = "1분기 매출은 전년 대비 12% 증가했다."
    body.add_paragraph().text = "Costs were flat."
    s2.notes_slide.notes_text_frame.text = "발표 시 강조: 해외 매출 비중이 처음으로 30%를 넘었다."
    s3 = prs.slides.add_slide(prs.slide_layouts[5])          # title only
    s3.shapes.title.text = "지점별 실적"
    low = s3.shapes.add_textbox(Inches(1), Inches(6), Inches(4), Inches(1))
    low.text_frame.text = "출처: 내부 집계"
    high = s3.shapes.add_textbox(Inches(1), Inches(1.6), Inches(4), Inches(1))
    high.text_frame.text = "서울 지점 매출 3억 원"
    table = s3.shapes.add_table(3, 3, Inches(1), Inches(3), Inches(6), Inches(1.5)).table
    for r, row in enumerate([["지점", "매출", "비고"], ["부산", "2억", "신규"], ["합계", "", ""]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.cell(2, 0).merge(table.cell(2, 2))
    table.cell(2, 0).text = "합계 5억"
    group = s3.shapes.add_group_shape()
    box = group.shapes.add_textbox(Inches(5), Inches(5), Inches(3), Inches(0.5))
    box.text_frame.text = "Grouped note: audited"
    s4 = prs.slides.add_slide(prs.slide_layouts[6])          # blank: no title
    s4.shapes.add_textbox(Inches(1), Inches(1), Inches(4), Inches(1)).text_frame.text = "제목 없는 슬라이드"
    s5 = prs.slides.add_slide(prs.slide_layouts[5])
    s5.shapes.title.text = "Q&A"
    prs.save(path)
    return path


def test_titles_notes_and_reading_order(tmp_path):
    told = []
    doc = read(build(tmp_path / "분기.pptx"), "q", progress=lambda done, total: told.append((done, total)))
    assert doc.title == "2024 분기 보고"
    assert told == [(n, 5) for n in range(1, 6)]
    assert slide(doc, 1).heading_path == ("2024 분기 보고",) and slide(doc, 1).text == "경영지원팀"
    s2 = slide(doc, 2)
    assert s2.heading_path == ("매출 개요",)
    assert s2.text == ("1분기 매출은 전년 대비 12% 증가했다.\nCosts were flat.\n"
                       "Notes:\n발표 시 강조: 해외 매출 비중이 처음으로 30%를 넘었다.")
    s3 = slide(doc, 3)                    # top to bottom: text box, table, group, bottom text box
    assert s3.text == ("서울 지점 매출 3억 원\n지점 | 매출 | 비고\n부산 | 2억 | 신규\n합계 5억\n"
                       "Grouped note: audited\n출처: 내부 집계")
    assert slide(doc, 4).heading_path == () and slide(doc, 4).text == "제목 없는 슬라이드"
    assert slide(doc, 5).text == "Q&A"    # a title-only slide stays findable


def test_a_fact_on_slide_3_is_cited_as_slide_3(tmp_path):
    from chaja.chunking import iter_chunks

    doc = read(build(tmp_path / "deck.pptx"))
    [chunk] = [c for c in iter_chunks(doc) if "서울 지점 매출 3억 원" in c.text]
    assert chunk.location == Location("slide", 3, 3) and chunk.location.label == "slide 3"
    assert chunk.heading_path == ("지점별 실적",)


def test_core_title_wins_unless_it_is_a_placeholder(tmp_path):
    path = build(tmp_path / "deck.pptx")
    prs = pptx.Presentation(path)
    prs.core_properties.title = "PowerPoint 프레젠테이션"
    prs.save(path)
    assert read(path).title == "2024 분기 보고"
    prs.core_properties.title = "연간 경영 보고"
    prs.save(path)
    assert read(path).title == "연간 경영 보고"


def test_malformed_files_are_refused(tmp_path):
    no_part = tmp_path / "empty.pptx"
    with zipfile.ZipFile(no_part, "w") as z:          # the right name, no presentation part
        z.writestr("[Content_Types].xml",
                   '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>')
        z.writestr("ppt/other.xml", "<x/>")
    with pytest.raises(ReadError, match="not a readable PowerPoint file"):
        read(no_part)
    good = build(tmp_path / "good.pptx")
    truncated = tmp_path / "truncated.pptx"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(ReadError, match="not a readable PowerPoint file"):
        read(truncated)
    text = tmp_path / "text.pptx"
    text.write_text("not a presentation", encoding="utf-8")
    with pytest.raises(ReadError, match="not a readable PowerPoint file"):
        read(text)
