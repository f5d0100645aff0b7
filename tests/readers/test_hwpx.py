"""The HWPX reader: on real HWPX files from public repositories (../shared/data/documents)
and on OWPML packages the tests write themselves."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path
from xml.sax.saxutils import escape

import pytest

from chaja.documents import Location
from chaja.readers import hwpx
from chaja.readers.base import ReadContext
from tests.readers import shared_files
from tests.readers.shared_files import read_error, shared_file as shared, where
from chaja.readers.registry import format_of

SHARED = ["mfds-admin-notice-2025.hwpx", "public-data-standard-2023.hwpx", "regulatory-impact-aged-planned-city.hwpx"]


def read(path: Path):
    ctx = ReadContext(path, path.stem)
    docs = list(hwpx.read(ctx))
    assert len(docs) == 1
    return docs[0]


def assert_clean(doc) -> None:
    shared_files.assert_clean(doc)


def raw_text_chars(path: Path) -> int:
    """Non-space characters of every hp:t in the body sections."""
    with zipfile.ZipFile(path) as z:
        return sum(len("".join("".join(e.itertext()).split()))
                   for name in z.namelist() if re.fullmatch(r"Contents/section\d+\.xml", name)
                   for e in ET.fromstring(z.read(name)).iter() if e.tag.endswith("}t"))


# -- real files ------------------------------------------------------------------


@pytest.mark.parametrize("name", SHARED)
def test_shared_files_read_clean_without_doubled_text(name):
    path = shared(name)
    assert format_of(path).name == "hwpx"
    doc = read(path)
    assert doc.id == path.stem and doc.path == str(path)
    assert_clean(doc)
    headings = [h for s in doc.sections for h in s.heading_path]
    squeezed = len("".join(doc.text.replace(" | ", " ").split())) + sum(len("".join(h.split())) for h in set(headings))
    assert 0.95 * raw_text_chars(path) - 200 <= squeezed <= raw_text_chars(path)


def test_mfds_notice():
    doc = read(shared("mfds-admin-notice-2025.hwpx"))
    # content.hpf's title is the template's "법령안", which the text does not bear out;
    # the title is set on two lines of the cover
    assert doc.title == "생산·수입 중단 보고대상 의료기기 및 보고 방법 일부개정고시(안)"
    assert where(doc, "식품의약품안전처 공고 제2025-477호") == ((), Location("paragraph", 5, 5))
    assert where(doc, "일상 속 자주 사용하지 않는 한자어를 알기 쉬운 용어로 순화하고") == (
        ("1. 개정이유",), Location("paragraph", 12, 12))
    assert where(doc, "제3조(보고방법 등) ① (생 략) | 제3조(보고방법 등) ① (현행과 같음)")[1] == Location("paragraph", 76, 76)
    assert "부      칙" in doc.text                      # the spacing as typed
    assert ("2. 주요내용", "가. 행정규칙 속 어려운 전문 용어의 정비(안 제3조제2항)") in {s.heading_path for s in doc.sections}


def test_public_data_standard_table():
    doc = read(shared("public-data-standard-2023.hwpx"))
    assert doc.title == "공공데이터 제공 표준 (2023.5.18.)"
    assert where(doc, "관련법령 | 국가통합교통체계효율화법") == (("□ 기본 정보",), Location("paragraph", 6, 6))
    assert where(doc, "1 | 환승센터명 | 필수 | 고시에 명기된 복합환승센터의 명칭 | text | 서울역복합환승센터")[1] == \
        Location("paragraph", 12, 12)
    assert "8 | 위도 | 필수 | WGS(World Geodetic System)84 위도 좌표계 사용" in doc.text


def test_regulatory_impact_analysis():
    doc = read(shared("regulatory-impact-aged-planned-city.hwpx"))
    assert doc.title == "규제영향분석서"
    assert where(doc, "국장 | 윤영중 | 연락처 | 044-201-4927") == ((), Location("paragraph", 9, 9))
    paths = {s.heading_path for s in doc.sections}
    assert ("Ⅰ. 규제의 필요성 및 대안선택", "1. 추진배경 및 정부개입 필요성") in paths
    assert ("Ⅳ. 추진계획 및 종합결론", "4. 종합결론", "가. 대안별 분석 비교표") in paths


# -- packages the tests write ----------------------------------------------------

NS = ('xmlns:hp="http://www.hancom.co.kr/hwpml/2011/paragraph" xmlns:hs="http://www.hancom.co.kr/hwpml/2011/section" '
      'xmlns:hh="http://www.hancom.co.kr/hwpml/2011/head" xmlns:hc="http://www.hancom.co.kr/hwpml/2011/core"')


def t(value: str) -> str:
    return f"<hp:t>{escape(value)}</hp:t>"


def p(*items: str, pr: int = 0) -> str:
    """A paragraph of one run; each item is run content (hp:t, hp:tbl, hp:ctrl, ...)."""
    return f'<hp:p id="0" paraPrIDRef="{pr}" styleIDRef="0"><hp:run charPrIDRef="0">{"".join(items)}</hp:run></hp:p>'


def tbl(rows: list[list[str]]) -> str:
    body = "".join("<hp:tr>" + "".join(
        f'<hp:tc><hp:subList>{p(t(value))}</hp:subList><hp:cellAddr colAddr="{c}" rowAddr="{r}"/>'
        f'<hp:cellSpan colSpan="1" rowSpan="1"/></hp:tc>' for c, value in enumerate(cells)) + "</hp:tr>"
        for r, cells in enumerate(rows))
    return f'<hp:tbl rowCnt="{len(rows)}" colCnt="{len(rows[0])}">{body}</hp:tbl>'


def header(outline_levels: dict[int, int]) -> str:
    prs = "".join(f'<hh:paraPr id="{i}"><hh:heading type="OUTLINE" idRef="0" level="{level}"/></hh:paraPr>'
                  for i, level in outline_levels.items())
    return (f'<?xml version="1.0" encoding="UTF-8"?><hh:head {NS}><hh:refList><hh:paraProperties>'
            f'<hh:paraPr id="0"><hh:heading type="NONE" idRef="0" level="0"/></hh:paraPr>{prs}'
            f'</hh:paraProperties></hh:refList></hh:head>')


def content_hpf(title: str, sections: int) -> str:
    items = "".join(f'<opf:item id="section{i}" href="Contents/section{i}.xml" media-type="application/xml"/>'
                    for i in range(sections))
    refs = "".join(f'<opf:itemref idref="section{i}" linear="yes"/>' for i in range(sections))
    return ('<?xml version="1.0" encoding="UTF-8"?><opf:package xmlns:opf="http://www.idpf.org/2007/opf/">'
            f'<opf:metadata><opf:title>{escape(title)}</opf:title><opf:language>ko</opf:language></opf:metadata>'
            '<opf:manifest><opf:item id="header" href="Contents/header.xml" media-type="application/xml"/>'
            f'{items}</opf:manifest><opf:spine><opf:itemref idref="header" linear="yes"/>{refs}</opf:spine>'
            '</opf:package>')


def section(*paragraphs: str) -> str:
    return f'<?xml version="1.0" encoding="UTF-8"?><hs:sec {NS}>{"".join(paragraphs)}</hs:sec>'


def write_package(path: Path, parts: dict[str, str | bytes], mimetype: bool = True) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        if mimetype:
            z.writestr("mimetype", "application/hwp+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", '<?xml version="1.0"?><ocf:container '
                   'xmlns:ocf="urn:oasis:names:tc:opendocument:xmlns:container"><ocf:rootfiles>'
                   '<ocf:rootfile full-path="Contents/content.hpf" media-type="application/hwpml-package+xml"/>'
                   '</ocf:rootfiles></ocf:container>')
        for name, data in parts.items():
            z.writestr(name, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def outlined_package(path: Path) -> Path:
    """Two sections; paraPr 1 and 2 are outline levels 1 and 2 (개요 1, 개요 2)."""
    sec0 = section(
        p(t("2025년 주민 참여 사업 계획")),
        p(t("사업 개요"), pr=1),
        p('<hp:t>주민이 참여하는<hp:tab/>사업<hp:lineBreak/>둘째 줄</hp:t>'),
        p(t("예산은 다음과 같다"), tbl([["항목", "내용"], ["예산", "1,000만원"], ["", ""]])),
        p(t("본문 문장"), '<hp:ctrl><hp:footNote number="1"><hp:subList>' + p(t("2024년 기준")) + '</hp:subList>'
          '</hp:footNote></hp:ctrl>', '<hp:ctrl><hp:header><hp:subList>' + p(t("머리말은 빠진다")) +
          '</hp:subList></hp:header></hp:ctrl>'),
        p(tbl([["상자 속 문단"]])),
    )
    sec1 = section(
        p(t("세부 일정"), pr=2),
        p(t("3월에 시작한다.")),
        p('<hp:rect><hp:drawText><hp:subList>' + p(t("글상자 안의 글")) + '</hp:subList></hp:drawText></hp:rect>'),
    )
    return write_package(path, {"Contents/content.hpf": content_hpf("주민 참여 사업 계획", 2),
                                "Contents/header.xml": header({1: 0, 2: 1}),
                                "Contents/section0.xml": sec0, "Contents/section1.xml": sec1})


def test_written_package_with_outline_headings(tmp_path):
    path = outlined_package(tmp_path / "plan.hwpx")
    assert format_of(path).name == "hwpx"
    doc = read(path)
    assert doc.title == "주민 참여 사업 계획"        # content.hpf's title, borne out by the text
    assert_clean(doc)
    assert [(s.heading_path, s.text, s.marks) for s in doc.sections] == [
        ((), "2025년 주민 참여 사업 계획", ((0, Location("paragraph", 1, 1)),)),
        (("사업 개요",), "주민이 참여하는\t사업\n둘째 줄\n\n예산은 다음과 같다\n\n항목 | 내용\n\n예산 | 1,000만원"
                       "\n\n본문 문장\n\n2024년 기준\n\n상자 속 문단",
         ((0, Location("paragraph", 3, 3)), (18, Location("paragraph", 4, 4)), (30, Location("paragraph", 5, 5)),
          (39, Location("paragraph", 6, 6)), (53, Location("paragraph", 7, 7)), (70, Location("paragraph", 8, 8)))),
        (("사업 개요", "세부 일정"), "3월에 시작한다.\n\n글상자 안의 글",
         ((0, Location("paragraph", 10, 10)), (11, Location("paragraph", 11, 11)))),
    ]


def test_written_package_with_numbered_headings(tmp_path):
    sec = section(p(t("행정예고")), p(t("1. 개정 이유")), p(t("용어를 정비하려는 것임")),
                  p(t("2. 주요 내용")), p(t("가. 용어 정비")), p(t("어려운 용어를 바꾼다")))
    path = write_package(tmp_path / "n.hwpx", {"Contents/content.hpf": content_hpf("법령안", 1),
                                               "Contents/header.xml": header({}), "Contents/section0.xml": sec})
    doc = read(path)
    assert doc.title == "행정예고"                  # "법령안" is not in the text
    assert [(s.heading_path, s.text) for s in doc.sections] == [
        ((), "행정예고"), (("1. 개정 이유",), "용어를 정비하려는 것임"),
        (("2. 주요 내용", "가. 용어 정비"), "어려운 용어를 바꾼다")]
    assert doc.sections[2].marks == ((0, Location("paragraph", 6, 6)),)


def test_captions_of_tables_and_pictures(tmp_path):
    caption = '<hp:caption side="BOTTOM"><hp:subList>' + p(t("<표 1> 예산 내역")) + '</hp:subList></hp:caption>'
    table = tbl([["항목", "금액"], ["인건비", "300"]]).replace("</hp:tbl>", caption + "</hp:tbl>")
    picture = ('<hp:pic><hp:imgRect/><hp:caption side="BOTTOM"><hp:subList>' + p(t("[그림 1] 위치도"))
               + '</hp:subList></hp:caption></hp:pic>')
    path = write_package(tmp_path / "cap.hwpx", {"Contents/section0.xml": section(p(table), p(picture))})
    assert read(path).text == "항목 | 금액\n\n인건비 | 300\n\n<표 1> 예산 내역\n\n[그림 1] 위치도"


def test_sections_found_without_content_hpf(tmp_path):
    path = write_package(tmp_path / "bare.hwpx", {
        "Contents/section1.xml": section(p(t("둘째 구역"))), "Contents/section0.xml": section(p(t("첫째 구역")))})
    assert read(path).text == "첫째 구역\n\n둘째 구역"


# -- malformed packages ----------------------------------------------------------


def test_zip_without_sections(tmp_path):
    path = write_package(tmp_path / "empty.hwpx", {"Contents/content.hpf": content_hpf("x", 0), "readme.txt": "hi"})
    assert "no Contents/section0.xml" in read_error(hwpx, path)


def test_malformed_xml(tmp_path):
    path = write_package(tmp_path / "bad.hwpx", {"Contents/section0.xml": "<hs:sec><hp:p>unclosed"})
    assert "is not well-formed XML" in read_error(hwpx, path)


def test_entities_are_refused(tmp_path):
    laughs = ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>'
              f'<hs:sec {NS}>' + p(t("x").replace("x", "&lol2;")) + "</hs:sec>")
    path = write_package(tmp_path / "lol.hwpx", {"Contents/section0.xml": laughs})
    assert "refused as unsafe" in read_error(hwpx, path)


def test_corrupted_deflate(tmp_path):
    sec = section(*(p(t(f"문단 {i}")) for i in range(300)))
    path = write_package(tmp_path / "c.hwpx", {"Contents/section0.xml": sec})
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("Contents/section0.xml")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for i in range(start + 20, start + 60):
        data[i] ^= 0xA5
    path.write_bytes(bytes(data))
    assert "Contents/section0.xml cannot be unpacked" in read_error(hwpx, path)


def test_zip_bomb_is_refused(tmp_path, monkeypatch):
    sec = section(p(t("가" * 1000)) * 1000)           # 3 MB of XML that packs into a few KB
    path = write_package(tmp_path / "bomb.hwpx", {"Contents/section0.xml": sec})
    assert path.stat().st_size < 100_000
    monkeypatch.setattr(hwpx, "MAX_UNPACKED_BYTES", 1 << 20)
    assert "zip bomb" in read_error(hwpx, path)


def test_not_a_zip(tmp_path):
    path = tmp_path / "text.hwpx"
    path.write_text("이것은 압축 파일이 아니다")
    assert "not a readable HWPX" in read_error(hwpx, path)
