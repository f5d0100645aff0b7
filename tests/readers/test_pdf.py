"""The PDF reader (pypdfium2): on real PDFs from public repositories
(../shared/data/documents: two Korean government reports, a three-column Federal
Register issue, scans) and on PDFs the tests write with reportlab in Korean and
English: page locations, reading order across columns, running headers and page
numbers dropped, outline headings, exact Korean text, OCR of pages without text,
and the files the reader refuses."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from chaja.documents import Location, locate
from chaja.readers.base import ReadContext, ReadError
from chaja.readers.registry import format_of
from tests.readers.shared_files import NANUM, needs_ocr, shared_file as shared, where, words

pytest.importorskip("pypdfium2", reason="the PDF reader needs pypdfium2 (the 'documents' extra)")
from chaja.readers import pdf as pdf_reader  # noqa: E402


def read(path: Path, **kw) -> tuple:
    """The one document of ``path`` and the context it was read in."""
    ctx = ReadContext(path, path.stem, **kw)
    docs = list(pdf_reader.read(ctx))
    assert len(docs) == 1
    return docs[0], ctx


def page(n: int) -> Location:
    return Location("page", n, n)


def page_text(doc, n: int) -> str:
    """The text one page gave (its pieces in every section), in order."""
    out = []
    for s in doc.sections:
        for i, (at, loc) in enumerate(s.marks):
            if loc == page(n):
                end = s.marks[i + 1][0] if i + 1 < len(s.marks) else len(s.text)
                out.append(s.text[at:end].strip())
    return "\n\n".join(out)


_cache: dict[tuple, tuple] = {}


def read_shared(name: str, **kw) -> tuple:
    key = (name, tuple(sorted(kw.items())))
    if key not in _cache:
        _cache[key] = read(shared(name), **kw)
    return _cache[key]


# ------------------------------------------------------------------ real Korean PDFs

def test_korean_work_plan_pages_tables_and_page_numbers():
    doc, ctx = read_shared("nikl-work-plan-2022.pdf")
    assert ctx.notes == []
    assert doc.title == "2022년 국립국어원 업무계획"      # no metadata title, no outline: the first line
    assert doc.path.endswith("nikl-work-plan-2022.pdf") and doc.id == "nikl-work-plan-2022"
    # no outline: the numbered headings of a Korean report make the heading path
    paths = [s.heading_path for s in doc.sections]
    assert paths[0] == () and ("Ⅰ. 2021년 평가",) in paths and ("Ⅱ. 2022년 정책 방향",) in paths
    assert ("Ⅰ. 2021년 평가", "□ 공공언어 개선 지원 체계 강화 및 제도적 기반 확대") in paths
    pages = {n for s in doc.sections for _, loc in s.marks for n in range(loc.first, loc.last + 1)}
    assert pages == set(range(1, 36))
    # the table of contents (titles, leader dots, page numbers) is dropped
    assert "2021년 평가 ·" not in doc.text and "···" not in page_text(doc, 2)
    # facts read off the rendered pages: the page they are printed on
    assert where(doc, "□ 지속적 국어 말뭉치 구축, 공개로 인공지능 기술 발전 기반 강화")[1] == page(3)
    assert where(doc, "ㅇ 기초어휘 전체(5만 개)목록과 1등급 어휘(5천 개) 목록 구축")[1] == page(4)
    # a table row read across, its cells in order
    assert where(doc, "원시 말뭉치* 0.31억 어절 18억 어절 1.03억 어절 1.03억 어절 20.3억 어절")[1] == page(3)
    # a cell of two lines stays together, ahead of the row's numbers
    assert "전문가 감수, 사전 반영 2,208건 8,232건 10,286건 10,847건 12,230건" in page_text(doc, 3)
    # a table under a paragraph does not run into it
    assert "조사 실시를 통해 본격적인 한국어 변이 조사를 위한 체계 마련\n\n구분 내용\n" in page_text(doc, 4)
    # the printed page numbers ("- 1 -" at the foot of page 3) are gone
    assert not re.search(r"^- \d+ -$", doc.text, re.MULTILINE)
    assert page_text(doc, 1) == "2022년 국립국어원 업무계획\n\n2022. 1."


def test_korean_text_is_clean_nfc_with_its_spaces():
    import unicodedata

    doc, _ = read_shared("nikl-work-plan-2022.pdf")
    text = doc.text
    assert unicodedata.is_normalized("NFC", text)
    assert not re.search("[\x00\ufffe\uffff\ufffd\u00ad\ue000-\uf8ff]", text)
    assert not re.search("[\u1100-\u1112][\u1161-\u1175]", text)      # no syllable left in jamo
    # words apart, syllables whole, nothing doubled
    assert "ㅇ 국어사전 정보보완심의회 운영을 통한 국어사전 정보 수정 및 보완" in text
    assert "국어국어" not in text and "말뭉치말뭉치" not in text


def test_korean_call_guide_facts_on_their_pages():
    doc, ctx = read_shared("ai-semiconductor-overseas-pilot-2026.pdf")
    assert ctx.notes == []
    assert where(doc, "ㅇ 유망 AI반도체 및 AI서비스의 해외 현지 검증을 통한 글로벌 레퍼런스")[1] == page(4)
    assert where(doc, "확보 지원으로 해외시장 진출 확대 및 성과 확산")[1] == page(4)
    assert where(doc, "□ 지원규모 : 총 4개 컨소시엄, 컨소시엄당 최대 11억 6,250만원(연간) 이내")[1] == page(5)
    # page 6's table: each body's role on the body's row, not the two columns one after the other
    assert "심의위원회 o 사업비 조정, 제재조치 등 과제관리에 필요한 심의" in page_text(doc, 6)
    assert "- 4 -" not in doc.text and "- 6 -" not in doc.text


# ------------------------------------------------------------------ real three-column English PDF

def test_federal_register_columns_are_read_one_after_another():
    doc, _ = read_shared("federal-register-2020-17221.pdf", ocr="never")
    p2 = page_text(doc, 2)
    # three lines of the first column in a row: no line of the second column between them
    assert ("Hatta International Airport in Jakarta,\nIndonesia, resulting in 189 fatalities.\n"
            "Investigation of the accident has been\ncompleted by the Indonesian authorities") in p2
    col1_end = p2.index("These effects include stall warning\nactivation, airspeed disagree alert, and")
    col2_start = p2.index("altitude disagree alert,5 and may affect\nthe flightcrew’s ability to accomplish")
    col3_start = p2.index("and the Ethiopian Civil Aviation\nAuthority (ECAA).")
    assert col1_end < col2_start < col3_start
    # the first page's three columns, and the page's facts on it
    assert where(doc, "supersede Airworthiness Directive (AD)")[1] == page(1)
    p1 = page_text(doc, 1)
    assert p1.index("supersede Airworthiness Directive (AD)") < p1.index("• Federal eRulemaking Portal: Go to") \
        < p1.index("Confidential Business Information (CBI)")
    # a word broken at its own hyphen at a line end keeps it ("non-" / "normal checklists")
    assert "other non-normal checklists" in doc.text and "nonnormal" not in doc.text


def test_federal_register_running_headers_and_margin_lines_dropped():
    doc, ctx = read_shared("federal-register-2020-17221.pdf", ocr="never")
    text = doc.text
    assert "Federal Register / Vol. 85, No. 152" not in text      # the running head of pages 2-15
    assert "VerDate" not in text and "jbell on DSKJLSW7X2PROD" not in text   # sideways in the margin
    assert not re.search(r"^477\d\d$", text, re.MULTILINE)         # the page numbers
    # page 1's own masthead is no running header: it stays
    assert "Proposed Rules" in page_text(doc, 1)
    # the figure pages are images with a caption line: said, not silently lost
    assert ctx.notes == ["pages 8–9 are mostly images with little text; reading their text needs OCR "
                         "(OCR is turned off)"]


# ------------------------------------------------------------------ PDFs written here

def _canvas(buf, title: str | None = None, **kw):
    canvas = pytest.importorskip("reportlab.pdfgen.canvas",
                                 reason="the PDF tests write PDFs with reportlab (dev extra)")
    from reportlab.lib.pagesizes import A4

    c = canvas.Canvas(buf, pagesize=A4, **kw)
    if title is not None:
        c.setTitle(title)
    return c


@pytest.fixture(scope="module")
def nanum() -> str:
    if not NANUM.is_file():
        pytest.skip(f"{NANUM} is absent: install Debian's fonts-nanum (apt-get install -y fonts-nanum)")
    pytest.importorskip("reportlab", reason="the PDF tests write PDFs with reportlab (dev extra)")
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    pdfmetrics.registerFont(TTFont("NanumGothic", str(NANUM)))
    return "NanumGothic"


HEADER = "전기요금 안내서 · 2024년판"
FACT = "전기요금 단가는 킬로와트시당 120원이다."


def tariff_pdf(path: Path, font: str, title: str | None = "전기요금 안내서", outline: bool = True) -> Path:
    """Three A4 pages in Korean and English with a running header, a page number in
    three styles, and an outline: 1. 개요 (page 1), 2. 요금 체계 (page 2) and under it
    an entry titled unlike its line, pointing half-way down page 2."""
    buf = io.BytesIO()
    c = _canvas(buf, title)

    def header(number: str) -> None:
        c.setFont(font, 9)
        c.drawString(72, 810, HEADER)
        c.drawCentredString(297, 30, number)

    def lines(y: float, *texts: str, size: float = 11) -> None:
        c.setFont(font, size)
        for t in texts:
            c.drawString(72, y, t)
            y -= size * 1.6

    header("- 1 -")
    lines(740, "1. 개요", size=16)
    lines(710, FACT, "The committee approved the new tariff on Monday.", "요금은 매달 말일에 청구된다.")
    if outline:
        c.bookmarkPage("p1")
        c.addOutlineEntry("1. 개요", "p1", level=0)
    c.showPage()
    header("2")
    lines(740, "2. 요금 체계", size=16)
    lines(710, "누진 구간은 세 단계로 나뉜다.", "Heavy users pay a higher rate per kilowatt-hour.")
    lines(600, "2.1 기본요금", size=14)
    lines(570, "기본요금은 매달 910원이다.")
    if outline:
        c.bookmarkPage("p2")
        c.addOutlineEntry("2. 요금 체계", "p2", level=0)
        c.bookmarkPage("p2-basic", fit="XYZ", top=618, left=0)
        c.addOutlineEntry("기본요금 안내", "p2-basic", level=1)
    c.showPage()
    header("Page 3 of 3")
    lines(740, "계량기는 매월 1일에 검침한다.", "The meter is read on the first day of each month.")
    c.showPage()
    c.save()
    path.write_bytes(buf.getvalue())
    return path


def test_tariff_pages_headings_and_exact_korean(tmp_path, nanum):
    doc, ctx = read(tariff_pdf(tmp_path / "tariff.pdf", nanum))
    assert ctx.notes == []
    assert doc.title == "전기요금 안내서"
    assert [s.heading_path for s in doc.sections] == [
        ("1. 개요",), ("2. 요금 체계",), ("2. 요금 체계", "기본요금 안내")]
    # exact Korean, spaces and all, on the page it is printed on, under its heading
    assert where(doc, FACT) == (("1. 개요",), page(1))
    assert where(doc, "The committee approved the new tariff on Monday.") == (("1. 개요",), page(1))
    assert where(doc, "누진 구간은 세 단계로 나뉜다.") == (("2. 요금 체계",), page(2))
    assert where(doc, "기본요금은 매달 910원이다.") == (("2. 요금 체계", "기본요금 안내"), page(2))
    assert where(doc, "계량기는 매월 1일에 검침한다.") == (("2. 요금 체계", "기본요금 안내"), page(3))
    # the section under one heading over two pages cites each, and a span over both pp. 2–3
    last = doc.sections[-1]
    assert [loc for _, loc in last.marks] == [page(2), page(3)]
    assert locate(last.marks, 0, len(last.text)) == Location("page", 2, 3)
    # running header and page numbers gone; a heading's own line is in its path, not its text
    assert HEADER not in doc.text and "2024년판" not in doc.text
    for number in ("- 1 -", "Page 3 of 3"):
        assert number not in doc.text
    assert not re.search(r"^2$", doc.text, re.MULTILINE)
    assert doc.sections[0].text.startswith(FACT)
    assert doc.sections[1].text == "누진 구간은 세 단계로 나뉜다.\nHeavy users pay a higher rate per kilowatt-hour."


def test_title_falls_back_to_first_heading_then_file_name(tmp_path, nanum):
    doc, _ = read(tariff_pdf(tmp_path / "a.pdf", nanum, title="Microsoft Word - tariff_v2.docx"))
    assert doc.title == "1. 개요"
    doc, _ = read(tariff_pdf(tmp_path / "요금표.pdf", nanum, title="", outline=False))
    assert doc.title == "요금표"
    # without an outline, a Korean document's numbered headings make its heading path
    assert [s.heading_path for s in doc.sections] == [("1. 개요",), ("2. 요금 체계",)]
    assert where(doc, FACT) == (("1. 개요",), page(1))


def test_meaningful_titles():
    assert pdf_reader.meaningful_title("  2022년 국립국어원 업무계획 ") == "2022년 국립국어원 업무계획"
    for junk in ("", "   ", "Microsoft Word - 보고서.hwp", "report.pdf", "Untitled", "제목 없음", "scan_0001",
                 "12345", "C:\\work\\draft.doc"):
        assert pdf_reader.meaningful_title(junk) == "", junk


def test_progress_is_told_page_by_page(tmp_path, nanum):
    told = []
    read(tariff_pdf(tmp_path / "t.pdf", nanum), progress=lambda done, total: told.append((done, total)))
    assert told == [(1, 3), (2, 3), (3, 3)]


def test_columns_drawn_out_of_order_are_read_left_to_right(tmp_path):
    """The file draws the right column first, then the left one, then the heading
    over both (as the Federal Register draws footnotes first): the reader reads the
    heading, the left column to its end, then the right one."""
    buf = io.BytesIO()
    c = _canvas(buf, "Columns")
    left = [f"left column sentence number {i} runs along here." for i in range(1, 13)]
    right = [f"right column sentence number {i} goes on there." for i in range(1, 13)]
    c.setFont("Helvetica", 10)
    for x, column in ((310, right), (56, left)):
        for i, line in enumerate(column):
            c.drawString(x, 740 - 14 * i, line)
    c.setFont("Helvetica-Bold", 14)
    c.drawString(56, 780, "Two columns under one heading")
    c.showPage()
    c.save()
    path = tmp_path / "columns.pdf"
    path.write_bytes(buf.getvalue())
    doc, _ = read(path)
    assert doc.text == "\n\n".join(["Two columns under one heading", "\n".join(left), "\n".join(right)])


@pytest.mark.parametrize("angle", [90, 180, 270])
def test_text_turned_on_its_page_is_read_along_its_lines(tmp_path, angle):
    """A table set sideways on a portrait page: its lines read whole, in order; the
    page's upright line is kept too."""
    buf = io.BytesIO()
    c = _canvas(buf)
    c.setFont("Helvetica", 9)
    c.drawString(72, 810, "Upright note")
    c.saveState()
    c.translate(300, 420)
    c.rotate(angle)
    c.setFont("Helvetica", 12)
    lines = ["first line of the turned table", "second line of it", "third and last line"]
    for i, line in enumerate(lines):
        c.drawString(-150, 40 - 16 * i, line)
    c.restoreState()
    c.showPage()
    c.save()
    path = tmp_path / f"turned-{angle}.pdf"
    path.write_bytes(buf.getvalue())
    doc, _ = read(path)
    assert doc.text.startswith("\n".join(lines))
    assert "Upright note" in doc.text


def test_line_end_hyphens_join_only_when_safe(tmp_path):
    buf = io.BytesIO()
    c = _canvas(buf)
    c.setFont("Helvetica", 11)
    for i, line in enumerate(["The investigation began in May. The investi-", "gation found a non-",
                              "normal procedure at the Soekarno-", "Hatta airport."]):
        c.drawString(72, 700 - 15 * i, line)
    c.showPage()
    c.save()
    path = tmp_path / "hyphens.pdf"
    path.write_bytes(buf.getvalue())
    doc, _ = read(path)
    # the joined word is spelled whole elsewhere: the hyphen goes; "nonnormal" and
    # "SoekarnoHatta" are not, so their hyphens stay
    assert doc.text == ("The investigation began in May. The investigation found a non-normal procedure "
                        "at the Soekarno-Hatta airport.")


def test_repeated_body_line_is_no_running_header(tmp_path):
    """A line repeated in the body (not at a page's edge) is text, not a header."""
    buf = io.BytesIO()
    c = _canvas(buf)
    for n in range(1, 5):
        c.setFont("Helvetica", 11)
        c.drawString(72, 800, "ACME quarterly report")
        c.drawString(72, 500, "See the table below.")
        c.drawString(72, 480, f"Quarter {n} revenue rose by {n * 3} percent.")
        c.drawCentredString(297, 30, f"{n} / 4")
        c.showPage()
    c.save()
    path = tmp_path / "report.pdf"
    path.write_bytes(buf.getvalue())
    doc, _ = read(path)
    assert "ACME quarterly report" not in doc.text
    assert doc.text.count("See the table below.") == 4
    assert where(doc, "Quarter 3 revenue rose by 9 percent.")[1] == page(3)
    assert not re.search(r"\d / 4", doc.text)


def test_long_pdf_is_read_page_by_page(tmp_path):
    buf = io.BytesIO()
    c = _canvas(buf)
    for n in range(1, 201):
        c.setFont("Helvetica", 11)
        c.drawString(72, 700, f"Paragraph of page {n}: the fact number {n * 7} is here.")
        c.showPage()
    c.save()
    path = tmp_path / "long.pdf"
    path.write_bytes(buf.getvalue())
    told = []
    doc, _ = read(path, progress=lambda done, total: told.append(done))
    assert told == list(range(1, 201))
    assert where(doc, "the fact number 1043 is here.")[1] == page(149)
    assert len(doc.sections) == 1 and len(doc.sections[0].marks) == 200


# ------------------------------------------------------------------ files refused

def _simple_pdf(**kw) -> bytes:
    buf = io.BytesIO()
    c = _canvas(buf, **kw)
    for n in range(3):
        c.setFont("Helvetica", 12)
        c.drawString(72, 700, f"Page {n} says hello.")
        c.showPage()
    c.save()
    return buf.getvalue()


def test_truncated_pdf_is_refused_with_the_reason(tmp_path):
    data = _simple_pdf()
    path = tmp_path / "broken.pdf"
    path.write_bytes(data[: len(data) // 2])
    assert format_of(path).name == "pdf"
    with pytest.raises(ReadError, match=r"is not a PDF that can be read \(.+\)"):
        read(path)


def test_encrypted_pdf_is_refused_for_its_password(tmp_path):
    path = tmp_path / "secret.pdf"
    path.write_bytes(_simple_pdf(encrypt="secret"))
    with pytest.raises(ReadError, match="is encrypted with a password"):
        read(path)


# ------------------------------------------------------------------ pages without a text layer

def _scan_pdf(path: Path, text_page: bool, font_path: Path) -> Path:
    """A PDF whose page (the second, after a text page, when ``text_page``) is only a
    picture of Korean and English lines."""
    from PIL import Image, ImageDraw, ImageFont
    from reportlab.lib.utils import ImageReader

    picture = Image.new("L", (2000, 600), 255)
    draw = ImageDraw.Draw(picture)
    font = ImageFont.truetype(str(font_path), 64)
    draw.text((80, 120), "계량기는 매월 검침한다", font=font, fill=0)
    draw.text((80, 320), "The meter is read every month", font=font, fill=0)
    buf = io.BytesIO()
    c = _canvas(buf)
    if text_page:
        c.setFont("Helvetica", 12)
        c.drawString(72, 700, "This first page has a text layer.")
        c.showPage()
    c.drawImage(ImageReader(picture), 36, 400, width=520, height=156)
    c.showPage()
    c.save()
    path.write_bytes(buf.getvalue())
    return path


def test_page_without_text_gets_one_note_naming_what_to_install(tmp_path, nanum, no_tesseract):
    doc, ctx = read(_scan_pdf(tmp_path / "mixed.pdf", True, NANUM))
    assert where(doc, "This first page has a text layer.")[1] == page(1)
    assert ctx.notes == ["page 2 has no text layer and needs OCR (install Debian's tesseract-ocr, "
                         "tesseract-ocr-kor and pip install 'chaja[ocr]')"]
    assert ctx.partial


def test_pdf_without_any_text_is_refused_without_ocr(tmp_path, nanum, no_tesseract):
    with pytest.raises(ReadError, match=r"has no text layer on its one page; it needs OCR \(install "
                                        r"Debian's tesseract-ocr, tesseract-ocr-kor"):
        read(_scan_pdf(tmp_path / "scan.pdf", False, NANUM))
    with pytest.raises(ReadError, match=r"has no text layer on its one page; it needs OCR"):
        read(shared("scan-huckleberry-finn-p22.pdf"))


def test_ocr_never_leaves_scans_unread(tmp_path, nanum):
    doc, ctx = read(_scan_pdf(tmp_path / "mixed.pdf", True, NANUM), ocr="never")
    assert doc.text == "This first page has a text layer."
    assert ctx.notes == ["page 2 has no text layer and needs OCR (OCR is turned off)"]
    with pytest.raises(ReadError, match="has no text layer on its one page; it needs OCR"):
        read(shared("scan-linn-sequencer-brochure.pdf"), ocr="never")


@needs_ocr
def test_scanned_page_is_read_by_ocr(tmp_path, nanum):
    doc, ctx = read(_scan_pdf(tmp_path / "mixed.pdf", True, NANUM))
    assert ctx.notes == []
    assert where(doc, "This first page has a text layer.")[1] == page(1)
    scanned = page_text(doc, 2)
    assert len({"meter", "read", "every", "month"} & words(scanned)) >= 3, scanned
    assert len({"계량기는", "매월", "검침한다"} & words(scanned)) >= 2, scanned


@needs_ocr
def test_shared_scan_is_read_by_ocr():
    doc, ctx = read(shared("scan-linn-sequencer-brochure.pdf"))
    assert ctx.notes == []
    assert [loc for s in doc.sections for _, loc in s.marks] == [page(1)]
    found = words(doc.text)
    # words of the brochure's transcript (OCRmyPDF's tests/resources/linn.txt)
    assert {"linnsequencer", "midi", "sequence", "tracks", "record"} <= found, sorted(found)[:80]


def test_ocr_always_without_tesseract_reads_the_text_layer_and_says_so(tmp_path, no_tesseract):
    path = tmp_path / "hello.pdf"
    path.write_bytes(_simple_pdf())
    doc, ctx = read(path, ocr="always")
    assert where(doc, "Page 1 says hello.")[1] == page(2)
    assert len(ctx.notes) == 1 and ctx.notes[0].startswith("OCR was asked for on every page but is not available")


@needs_ocr
def test_ocr_always_reads_pages_with_text_too(tmp_path, nanum):
    doc, ctx = read(tariff_pdf(tmp_path / "tariff.pdf", nanum), ocr="always")
    assert ctx.notes == []
    # the outline still gives the headings; the words come from the rendered pages
    assert [s.heading_path[0] for s in doc.sections][:1] == ["1. 개요"]
    assert {"committee", "approved", "tariff", "monday"} <= words(page_text(doc, 1))
    assert {"meter", "first", "month"} <= words(page_text(doc, 3))
    assert len({"계량기는", "매월", "검침한다"} & words(page_text(doc, 3))) >= 2


@pytest.mark.parametrize("line, number", [
    ("3", True), ("- 3 -", True), ("iv", True), ("xii", True), ("Page 3 of 10", True), ("3 / 27", True),
    ("3쪽", True), ("Civil", False), ("DC", False), ("Did", False), ("MIX", False), ("Vivid", False),
])
def test_page_numbers_and_words_that_look_like_them(line, number):
    from chaja.readers.pdf_lines import is_page_number

    assert is_page_number(line) is number
