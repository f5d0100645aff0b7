"""Word files: the shared real documents, and files written here with python-docx
(Korean and English), read by chaja.readers.docx."""
from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from chaja.documents import Location
from chaja.readers import docx as docx_reader
from chaja.readers.base import ReadContext, ReadError
from tests.readers.shared_files import shared_file as shared, where

docx = pytest.importorskip("docx")
from docx.enum.style import WD_STYLE_TYPE  # noqa: E402
from docx.oxml import parse_xml  # noqa: E402
from docx.oxml.ns import nsdecls  # noqa: E402


def read(path: Path, doc_id: str = "doc"):
    [doc] = docx_reader.read(ReadContext(path, doc_id))
    return doc


# -- the shared real documents ---------------------------------------------------------------

def test_korean_glossary_paragraphs_are_numbered_in_reading_order():
    doc = read(shared("ai-glossary-ko.docx"), "glossary")
    assert doc.id == "glossary" and doc.title == "ai-glossary-ko"       # no title set, no heading styles
    assert doc.path.endswith("ai-glossary-ko.docx")
    assert where(doc, "Semantic Search") == ((), Location("paragraph", 1, 1))
    assert where(doc, "정의: 의미론적 검색은 사용자의 질의를 단순한 키워드 매칭을 넘어서 그 의미를 파악하여 "
                      "관련된 결과를 반환하는 검색 방식입니다.")[1] == Location("paragraph", 2, 2)
    assert '예시: 문장 "나는 학교에 간다"를 "나는", "학교에", "간다"로 분할합니다.' in doc.text
    assert doc.sections[-1].marks[-1][1] == Location("paragraph", 120, 120)   # empty paragraphs not counted


def test_english_ordinance_reads_tracked_insertions_and_not_deletions():
    doc = read(shared("adu-ordinance-ch18-33.docx"))
    assert doc.title == "adu-ordinance-ch18-33"
    assert doc.text.startswith("As of Dec 2019. Check with city for latest updates.\nChapter 18.33\n"
                               "ACCESSORY DWELLING UNITS\n18.33.010 Purpose.")
    assert where(doc, "18.33.010 Purpose.")[1] == Location("paragraph", 3, 3)
    # "an" is a tracked deletion, "s and existing two-family and multifamily dwellings" an insertion
    assert ("A. Increase the supply of smaller units and rental housing units by allowing accessory dwelling "
            "units to locate on lots which contain existing or proposed single-family dwellings and existing "
            "two-family and multifamily dwellings;") in doc.text
    assert all(s.heading_path != ("Footnotes",) for s in doc.sections)    # only separator notes there


# -- documents written here --------------------------------------------------------------------

def test_heading_styles_build_the_heading_path(tmp_path):
    d = docx.Document()
    d.add_heading("연간 보고서", 0)                       # Title style: the document's title
    d.add_paragraph("머리말 문단입니다.")
    d.add_heading("개요", 1)
    d.add_paragraph("올해 전기요금은 12% 올랐다.")
    d.add_heading("세부 사항", 2)
    d.add_paragraph("Detail paragraph in English.")
    d.add_heading("결론", 1)
    d.add_paragraph("결론 문단.")
    local = d.styles.add_style("제목 2", WD_STYLE_TYPE.PARAGRAPH)    # a localized heading name
    d.add_paragraph("지역 요약", style=local)
    d.add_paragraph("서울과 부산의 요약.")
    outlined = d.add_paragraph("Outline Heading")                     # outline level set on the paragraph
    outlined._p.get_or_add_pPr().append(parse_xml(f'<w:outlineLvl {nsdecls("w")} w:val="0"/>'))
    d.add_paragraph("Under the outline heading.")
    path = tmp_path / "report.docx"
    d.save(path)
    doc = read(path)
    assert doc.title == "연간 보고서"
    assert where(doc, "머리말 문단입니다.")[0] == ()
    assert where(doc, "올해 전기요금은 12% 올랐다.") == (("개요",), Location("paragraph", 4, 4))
    assert where(doc, "Detail paragraph")[0] == ("개요", "세부 사항")
    assert where(doc, "결론 문단.")[0] == ("결론",)
    assert where(doc, "서울과 부산의 요약.")[0] == ("결론", "지역 요약")
    assert where(doc, "Under the outline heading.")[0] == ("Outline Heading",)
    assert "개요" not in doc.text and "연간 보고서" not in doc.text      # headings are the path, not the body


def test_core_title_wins_unless_it_is_a_placeholder(tmp_path):
    d = docx.Document()
    d.add_heading("Quarterly figures", 1)
    d.add_paragraph("Body.")
    d.core_properties.title = "분기 실적 보고"
    d.save(tmp_path / "a.docx")
    assert read(tmp_path / "a.docx").title == "분기 실적 보고"
    d.core_properties.title = "Microsoft Word - draft3.doc"
    d.save(tmp_path / "b.docx")
    assert read(tmp_path / "b.docx").title == "Quarterly figures"      # the first heading


def test_lists_keep_their_numbers_and_bullets(tmp_path):
    d = docx.Document()
    d.add_paragraph("준비물:")
    d.add_paragraph("신분증", style="List Number")
    d.add_paragraph("통장 사본", style="List Number")
    d.add_paragraph("Bring a pen", style="List Bullet")
    path = tmp_path / "list.docx"
    d.save(path)
    assert read(path).text == "준비물:\n1. 신분증\n2. 통장 사본\n- Bring a pen"


def test_tables_stand_between_paragraphs_a_row_a_line(tmp_path):
    d = docx.Document()
    d.add_paragraph("표 앞 문단")
    t = d.add_table(rows=4, cols=3)
    for r, row in enumerate([["이름", "나이", "도시"], ["김철수", "30", "서울"], ["", "31", "부산"]]):
        for c, value in enumerate(row):
            t.cell(r, c).text = value
    t.cell(1, 0).merge(t.cell(2, 0))                 # 김철수 spans two rows: written once
    wide = t.cell(3, 0).merge(t.cell(3, 2))          # one cell across the last row
    wide.text = "합계 두 명"
    d.add_paragraph("표 뒤 문단")
    path = tmp_path / "table.docx"
    d.save(path)
    doc = read(path)
    assert doc.text == "표 앞 문단\n이름 | 나이 | 도시\n김철수 | 30 | 서울\n31 | 부산\n합계 두 명\n표 뒤 문단"
    assert where(doc, "김철수 | 30 | 서울")[1] == Location("paragraph", 3, 3)     # a row counts as a paragraph
    assert where(doc, "표 뒤 문단")[1] == Location("paragraph", 6, 6)


FOOTNOTES = (f'<w:footnotes {nsdecls("w")}>'
             '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
             '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p>'
             '</w:footnote>'
             '<w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> '
             '2023년 통계청 자료 기준.</w:t></w:r></w:p></w:footnote>'
             '<w:footnote w:id="2"><w:p><w:r><w:t>Source: annual survey.</w:t></w:r></w:p></w:footnote>'
             '</w:footnotes>')


def add_footnotes(path: Path) -> None:
    """Give a saved document a footnotes part (python-docx writes none)."""
    with zipfile.ZipFile(path) as z:
        parts = {name: z.read(name) for name in z.namelist()}
    parts["word/footnotes.xml"] = FOOTNOTES.encode("utf-8")
    parts["word/_rels/document.xml.rels"] = parts["word/_rels/document.xml.rels"].replace(
        b"</Relationships>",
        b'<Relationship Id="rIdFn1" Target="footnotes.xml" '
        b'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes"/></Relationships>')
    parts["[Content_Types].xml"] = parts["[Content_Types].xml"].replace(
        b"</Types>",
        b'<Override PartName="/word/footnotes.xml" ContentType="application/'
        b'vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/></Types>')
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            z.writestr(name, data)


def test_footnotes_follow_as_their_own_section(tmp_path):
    d = docx.Document()
    d.add_paragraph("서론.")
    p = d.add_paragraph("인구는 5천만 명이다.")
    p.add_run()._r.append(parse_xml(f'<w:footnoteReference {nsdecls("w")} w:id="1"/>'))
    q = d.add_paragraph("Growth slowed.")
    q.add_run()._r.append(parse_xml(f'<w:footnoteReference {nsdecls("w")} w:id="2"/>'))
    path = tmp_path / "notes.docx"
    d.save(path)
    add_footnotes(path)
    doc = read(path)
    assert doc.sections[0].text == "서론.\n인구는 5천만 명이다.[1]\nGrowth slowed.[2]"
    notes = doc.sections[-1]
    assert notes.heading_path == ("Footnotes",)
    assert notes.text == "[1] 2023년 통계청 자료 기준.\n[2] Source: annual survey."
    assert notes.marks == ((0, Location("paragraph", 2, 2)), (len("[1] 2023년 통계청 자료 기준.\n"),
                                                               Location("paragraph", 3, 3)))


TEXT_BOX = (
    '<w:r xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    ' xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
    ' xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"'
    ' xmlns:v="urn:schemas-microsoft-com:vml"><mc:AlternateContent>'
    '<mc:Choice Requires="wps"><w:drawing><wps:wsp><wps:txbx><w:txbxContent><w:p><w:r><w:t>상자 안의 글</w:t></w:r>'
    '</w:p></w:txbxContent></wps:txbx></wps:wsp></w:drawing></mc:Choice>'
    '<mc:Fallback><w:pict><v:shape><v:textbox><w:txbxContent><w:p><w:r><w:t>상자 안의 글</w:t></w:r></w:p>'
    '</w:txbxContent></v:textbox></v:shape></w:pict></mc:Fallback></mc:AlternateContent></w:r>')


def test_hidden_text_is_left_out_and_a_text_box_read_once(tmp_path):
    d = docx.Document()
    p = d.add_paragraph("보이는 글 ")
    p.add_run("숨은 글").font.hidden = True
    boxed = d.add_paragraph("그림 옆 글")
    boxed._p.append(parse_xml(TEXT_BOX))
    d.add_paragraph("끝.")
    path = tmp_path / "hidden.docx"
    d.save(path)
    assert read(path).text == "보이는 글\n그림 옆 글\n상자 안의 글\n끝."


def test_malformed_files_are_refused(tmp_path):
    no_body = tmp_path / "empty.docx"
    with zipfile.ZipFile(no_body, "w") as z:                  # the right name, no document part
        z.writestr("[Content_Types].xml",
                   '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>')
        z.writestr("word/other.xml", "<x/>")
    with pytest.raises(ReadError, match="not a readable Word document"):
        read(no_body)
    good = tmp_path / "good.docx"
    d = docx.Document()
    d.add_paragraph("내용")
    d.save(good)
    truncated = tmp_path / "truncated.docx"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(ReadError, match="not a readable Word document"):
        read(truncated)
    text = tmp_path / "text.docx"
    text.write_text("그냥 텍스트", encoding="utf-8")
    with pytest.raises(ReadError, match="not a readable Word document"):
        read(text)
