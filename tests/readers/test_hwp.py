"""The HWP 5 reader: on real HWP files from public repositories (../shared/data/documents)
and, since no library here writes HWP 5, on record streams the tests build byte by byte
after the format spec (tables, notes, text boxes, outline headings): paragraph records
into blocks, blocks into sections."""
from __future__ import annotations

import struct
from pathlib import Path

import pytest

from chaja.documents import Location
from chaja.readers import hwp, hwp_file, hwp_records
from chaja.readers.base import ReadContext
from tests.readers import shared_files
from tests.readers.hwp_build import cell, ctrl, para, rec, table, text
from tests.readers.shared_files import shared_file as shared, where
from chaja.readers.registry import format_of

olefile = pytest.importorskip("olefile", reason="the HWP reader needs olefile (the 'documents' extra)")

SHARED = ["tika-intro-ko.hwp", "regulatory-impact-urban-complex-dev.hwp", "nts-tax-ruling-rnd-credit-2009.hwp",
          "distribution-bid-notice-2024.hwp"]


_read_cache: dict[str, object] = {}


def read(path: Path):
    key = str(path)
    if key not in _read_cache:
        ctx = ReadContext(path, path.stem)
        docs = list(hwp.read(ctx))
        assert len(docs) == 1
        _read_cache[key] = (docs[0], ctx)
    return _read_cache[key]


def assert_clean(doc) -> None:
    shared_files.assert_clean(doc)
    assert all(s.marks and s.marks[0][0] == 0 for s in doc.sections)


def raw_text_chars(path: Path) -> int:
    """Non-space characters of every paragraph text record in the body, however nested."""
    body = hwp_file.open_hwp(path).sections
    return sum(len("".join(piece.split())) for data in body for rec in hwp_records.iter_records(data)
               if rec.tag == hwp_records.TAG_PARA_TEXT for piece in hwp_records.decode_para_text(rec.data)
               if isinstance(piece, str))


# -- real files ------------------------------------------------------------------


@pytest.mark.parametrize("name", SHARED)
def test_shared_files_read_clean_without_doubled_text(name):
    path = shared(name)
    assert format_of(path).name == "hwp"
    doc, ctx = read(path)
    assert doc.id == path.stem and doc.path == str(path)
    assert_clean(doc)
    cells = doc.text.replace(" | ", " ")                   # the separators the reader puts between cells
    squeezed = len("".join(cells.split())) + sum(len("".join(h.split())) for h in
                                                 {h for s in doc.sections for h in s.heading_path})
    assert squeezed <= raw_text_chars(path), "no text read twice"
    assert squeezed >= 0.95 * raw_text_chars(path) - 200, "no text lost"


def test_tika_intro():
    doc, _ = read(shared("tika-intro-ko.hwp"))
    assert doc.title == "Apache Tika"          # the summary information's title, found in the text
    assert where(doc, "Apache Tika - 컨텐츠 분석 툴킷") == ((), Location("paragraph", 1, 1))
    assert where(doc, "2019 년 5 월 20 일 : Apache Tika 출시")[1] == Location("paragraph", 7, 7)
    assert where(doc, "Apache Tika 1.19.1이 출시되었습니다!")[1] == Location("paragraph", 12, 12)
    assert "a) MP3Parser (TIKA-2730) 수정 및 b) SAX 구문 분석 (TIKA-2727)의 엔티티 확장 제한" in doc.text


def test_regulatory_impact_analysis_tables_and_headings():
    doc, _ = read(shared("regulatory-impact-urban-complex-dev.hwp"))
    assert doc.title == "규제영향분석서"
    # a table row, its cells in order
    assert where(doc, "국장 | 김배성 | 연락처 | 044-201-4386") == ((), Location("paragraph", 16, 16))
    assert "2.규제조문 | 도심 복합개발 지원에 관한 법률 시행령 제4조" in doc.text
    # the numbered headings of the report, under the Roman ones
    paths = {s.heading_path for s in doc.sections}
    assert ("Ⅰ. 규제의 필요성 및 대안선택", "1. 추진배경 및 정부개입 필요성") in paths
    assert ("Ⅳ. 추진계획 및 종합결론", "3. 종합결론") in paths
    # the table of contents is a list, not ten headings
    assert where(doc, "1.사업시행자의 결정·변경") == ((), Location("paragraph", 4, 4))
    section = next(s for s in doc.sections if s.heading_path == ("Ⅰ. 규제의 필요성 및 대안선택", "3. 규제목표"))
    assert section.text.startswith("ㅇ 동의자의 본인여부를 표시토록 하여 차후 동의서의 진위 여부와 관련한 다툼이")


def test_tax_ruling_form_layout():
    doc, _ = read(shared("nts-tax-ruling-rnd-credit-2009.hwp"))
    assert doc.title == "연구 및 인력개발비와 창업벤처기업에 대한 세액감면 여부"   # the paragraph after "[ 제 목 ]"
    assert where(doc, "[ 문서번호 ] | 법인세과 - 566 (2009. 05. 12) | 세목 | 조특") == ((), Location("paragraph", 1, 1))
    assert where(doc, "갑) 2008년 연구개발비 지출분으로 세액공제한다") == (("1. 질의내용 요약",), Location("paragraph", 16, 16))
    path, _ = where(doc, "100분의 3의 비율 + 해당 과세연도의 수입금액에서")
    assert path == ("2. 질의내용에 대한 자료", "가. 관련조세법령(법, 시행령, 시행규칙)")


def test_distribution_document_is_decrypted():
    path = shared("distribution-bid-notice-2024.hwp")
    assert hwp_file.open_hwp(path).flags & hwp_file.F_DISTRIBUTION
    doc, _ = read(path)
    assert "배포용 문서" not in doc.text and "상위 버전" not in doc.text      # not the placeholder
    assert doc.title == "2025년 강남세움센터 시설관리원 용역업체 선정 입찰공고"
    assert where(doc, "강남세움복지관 공고 제 2024-08호") == ((), Location("paragraph", 1, 1))
    assert where(doc, "②기초금액 : 금72,300,000원(금칠천이백삼십만원)(※부가가치세 포함)") == (
        ("1. 입찰에 부치는 사항",), Location("paragraph", 5, 5))
    assert where(doc, "⑤전자입찰 이용 관련 문의 : 조달청 콜센터 (☎ 1588-0800)")[0] == ("10. 기타사항",)
    assert doc.text.endswith("강남세움복지관장")


# -- records built by the test -----------------------------------------------------


def test_tables_notes_and_boxes_become_blocks():
    section = (
        para(0, text("표 앞 문장", ("ext", 11, "tbl "), "표 뒤 문장"),
             extra=table(1, [["이름", "값"], ["가격", "1,000원"], ["", ""]]))
        + para(0, text("본문", ("ext", 17, "fn  "), " 계속", ("ext", 16, "head")),
               extra=ctrl(1, "fn  ") + cell(2, 0, 0, para(2, text("각주 내용")))
               + ctrl(1, "head") + cell(2, 0, 0, para(2, text("머리말은 빠진다"))))
        + para(0, text(("ext", 11, "tbl ")), extra=table(1, [["상자 속 문단"]]))
        + para(0, None)
    )
    blocks = [b for b in hwp.section_blocks(section) if b.text.strip()]
    assert [(b.text, b.row, b.note) for b in blocks] == [
        ("표 앞 문장", False, False), ("이름 | 값", True, False), ("가격 | 1,000원", True, False),
        ("표 뒤 문장", False, False), ("본문 계속", False, False), ("각주 내용", False, True),
        ("상자 속 문단", False, False)]


def test_text_box_paragraphs_follow_their_anchor():
    """A 'gso ' drawing object keeps a text box's list under its shape component records."""
    box = (ctrl(1, "gso ") + rec(76, 2, bytes(40))
           + rec(hwp_records.TAG_LIST_HEADER, 3, bytes(30)) + para(3, text("글상자 첫 줄")) + para(3, text("글상자 둘째 줄")))
    blocks = hwp.section_blocks(para(0, text("그림 옆 문장", ("ext", 11, "gso ")), extra=box))
    assert [b.text for b in blocks if b.text] == ["그림 옆 문장", "글상자 첫 줄", "글상자 둘째 줄"]


def test_table_caption_follows_its_rows():
    caption = rec(hwp_records.TAG_LIST_HEADER, 2, struct.pack("<HIH", 1, 0, 0) + bytes(30)) + para(2, text("<표 1> 예산"))
    captioned = table(1, [["항목", "금액"], ["인건비", "300"]])
    at = captioned.index(struct.pack("<I", hwp_records.TAG_TABLE | 2 << 10 | 38 << 20))   # the caption goes before TABLE
    section = para(0, text(("ext", 11, "tbl ")), extra=captioned[:at] + caption + captioned[at:])
    assert [b.text for b in hwp.section_blocks(section) if b.text] == ["항목 | 금액", "인건비 | 300", "<표 1> 예산"]


def test_nested_tables_keep_their_cells_in_the_outer_row():
    inner = table(3, [["a", "b"], ["c", "d"]])
    outer = (ctrl(1, "tbl ") + rec(hwp_records.TAG_TABLE, 2, bytes(40))
             + cell(2, 0, 0, para(2, text(("ext", 11, "tbl ")), extra=inner))
             + cell(2, 1, 0, para(2, text("오른쪽"))))
    blocks = hwp.section_blocks(para(0, text(("ext", 11, "tbl ")), extra=outer))
    assert [b.text for b in blocks if b.text] == ["a | b c | d | 오른쪽"]


def test_outline_paragraph_shapes_make_headings():
    shapes = (rec(hwp_records.TAG_PARA_SHAPE, 1, struct.pack("<I", 0) + bytes(50))                # 0: body
              + rec(hwp_records.TAG_PARA_SHAPE, 1, struct.pack("<I", 1 << 23) + bytes(50))        # 1: 개요 1
              + rec(hwp_records.TAG_PARA_SHAPE, 1, struct.pack("<I", 1 << 23 | 2 << 25) + bytes(50))  # 2: 개요 3
              + rec(hwp_records.TAG_PARA_SHAPE, 1, struct.pack("<I", 2 << 23) + bytes(50)))       # 3: 번호, no heading
    outline = hwp_file.outline_shapes(rec(16, 0, bytes(26)) + shapes)
    assert outline == {1: 1, 2: 3}
    section = (para(0, text("사업 개요"), shape=1) + para(0, text("1. 번호 붙은 본문"), shape=3)
               + para(0, text("세부 사항"), shape=2) + para(0, text("내용이다."), shape=0))
    sections, headings = hwp.block_sections(hwp.section_blocks(section, outline), marked=True)
    assert headings == ["사업 개요", "세부 사항"]
    assert [(s.heading_path, s.text, s.marks) for s in sections] == [
        (("사업 개요",), "1. 번호 붙은 본문", ((0, Location("paragraph", 2, 2)),)),
        (("사업 개요", "세부 사항"), "내용이다.", ((0, Location("paragraph", 4, 4)),))]
