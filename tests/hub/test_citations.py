"""A fact on page N of a PDF, slide N of a deck and row N of a sheet is found by a
Korean and by an English question and cited at that place: in ``chaja search``'s text,
in ``--json``, through a hub (the files read by ``chaja index --hub``, their marks sent
with the sections), and in both framework retrievers' metadata. The files are written
here with the libraries that write them; the real encoders index them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import chaja
from chaja.cli import main

from chaja.readers.image import ocr_problem

from hubs import READ_KEY, WRITE_KEY, start_hub, stop_hub
from tests.readers.shared_files import DOCUMENTS

FONT = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")

PDF_PAGES = [
    "사무실 운영 시간은 평일 오전 9시부터 오후 6시까지입니다. 점심시간에는 민원 창구를 닫습니다. "
    "토요일과 공휴일에는 문을 열지 않으며, 긴급한 민원은 전화로 접수합니다. 운영 시간이 바뀌면 "
    "누리집 공지사항과 출입문 안내판에 미리 알립니다. 방문 전에 예약하면 기다리지 않고 상담을 받을 수 있습니다.",
    "전기요금 단가는 킬로와트시당 120원이다. 누진 구간은 월 사용량 300킬로와트시부터 적용된다. "
    "여름철 7월과 8월에는 누진 구간의 경계가 450킬로와트시로 넓어진다. 기본요금은 사용량에 따라 "
    "세 단계로 나뉘며, 요금 고지서는 매달 10일에 발송된다. 자동이체를 신청하면 요금의 1%를 할인받는다.",
    "주차장은 지하 2층에 있으며 방문객은 2시간까지 무료로 주차할 수 있습니다. 2시간이 지나면 "
    "10분마다 500원의 요금이 붙습니다. 장애인 전용 주차 구역은 엘리베이터 바로 옆에 있습니다. "
    "전기차 충전기는 지하 1층에 네 대가 있으며, 충전 중인 차량만 그 자리에 세울 수 있습니다.",
]
SLIDES = [("분기 실적 보고", "2024년 3분기 매출은 전년 대비 12% 늘었습니다."),
          ("채용 계획", "하반기에 개발자 15명을 새로 뽑을 계획입니다."),
          ("회의실 예약 방법", "회의실 예약은 사내 포털의 자원 예약 메뉴에서 하루 전까지 신청합니다."),
          ("보안 교육", "모든 직원은 연 2회 정보보안 교육을 받아야 합니다.")]
FACT_ROW = 57

QUESTIONS = [  # (question, file, unit, where)
    ("전기요금 킬로와트시당 단가는 얼마인가요?", "rates", "page", 2),
    ("What is the electricity rate per kilowatt-hour?", "rates", "page", 2),
    ("회의실 예약은 어디서 하나요?", "deck", "slide", 3),
    ("How do I book a meeting room?", "deck", "slide", 3),
    ("비상용 소화기 단가", "prices", "row", FACT_ROW),
    ("fire extinguisher unit price", "prices", "row", FACT_ROW),
]


def write_pdf(path: Path) -> None:
    canvas = pytest.importorskip("reportlab.pdfgen.canvas")
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    pdfmetrics.registerFont(TTFont("Nanum", str(FONT)))
    c = canvas.Canvas(str(path))
    for text in PDF_PAGES:
        c.setFont("Nanum", 11)
        line, y = "", 780
        for word in text.split():               # wrapped at spaces, as a word processor would
            if len(line) + len(word) > 44:
                c.drawString(40, y, line)
                line, y = "", y - 18
            line = f"{line} {word}".strip()
        c.drawString(40, y, line)
        c.showPage()
    c.save()


def write_deck(path: Path) -> None:
    pptx = pytest.importorskip("pptx")
    deck = pptx.Presentation()
    for title, body in SLIDES:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(str(path))


def write_sheet(path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "단가표"
    ws.append(["품목", "규격", "단가", "비고"])
    for row in range(2, 80):
        if row == FACT_ROW:
            ws.append(["비상용 소화기", "3.3kg 분말", 35000, "층마다 2대"])
        else:
            ws.append([f"사무용품 {row}", f"규격 {row}", 1000 + row, ""])
    wb.save(str(path))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    if not FONT.is_file():
        pytest.skip(f"{FONT} is absent: install Debian's fonts-nanum")
    root = tmp_path_factory.mktemp("office")
    write_pdf(root / "rates.pdf")
    write_deck(root / "deck.pptx")
    write_sheet(root / "prices.xlsx")
    return root


@pytest.fixture(scope="module")
def store(folder, tmp_path_factory):
    path = tmp_path_factory.mktemp("store") / "office.chaja"
    assert main(["index", str(folder), "--store", str(path), "--quiet"]) == 0
    return path


def cited(location: dict | None, unit: str, where: int) -> bool:
    """At that page or slide exactly; for a row, in the rows the chunk holds."""
    if not location or location["unit"] != unit:
        return False
    return location["first"] <= where <= location["last"] if unit == "row" else location["first"] == location["last"] == where


@pytest.mark.parametrize("question, doc, unit, where", QUESTIONS)
def test_the_cli_cites_the_page_slide_or_row(store, capsys, question, doc, unit, where):
    capsys.readouterr()
    assert main(["search", question, "--store", str(store), "--json", "-k", "5"]) == 0
    top = json.loads(capsys.readouterr().out)["results"][0]
    assert top["doc_id"].split("#")[0] == doc, top
    assert cited(top["location"], unit, where), top["location"]
    assert main(["search", question, "--store", str(store), "-k", "5"]) == 0
    first = capsys.readouterr().out.split("\n 1. ", 1)[1].split("\n", 1)[0]
    assert top["location"]["label"] in first


def test_both_retrievers_put_the_citation_in_the_metadata(store):
    pytest.importorskip("langchain_core")
    pytest.importorskip("llama_index.core")
    from chaja.integrations.langchain import ChajaRetriever as LangChainRetriever
    from chaja.integrations.llama_index import ChajaRetriever as LlamaIndexRetriever

    with chaja.open(store) as idx:
        doc = LangChainRetriever(index=idx, k=3).invoke(QUESTIONS[0][0])[0]
        node = LlamaIndexRetriever(index=idx, k=3).retrieve(QUESTIONS[1][0])[0].node
    assert doc.metadata["page"] == 2 and doc.metadata["cite"] == "p. 2"
    assert node.metadata["page_label"] == "2" and node.metadata["location"]["unit"] == "page"


def test_a_hub_fed_by_chaja_index_cites_the_same_places(folder, tmp_path):
    running = start_hub(tmp_path / "hub.chaja", tmp_path / "hub.log",
                        [f"hub.api_keys={READ_KEY}", f"hub.write_keys={WRITE_KEY}"])
    try:
        assert main(["index", str(folder), "--hub", running.url, "--api-key", WRITE_KEY]) == 0
        for question, doc, unit, where in QUESTIONS:
            top = running.client().search(question, 5)["results"][0]
            assert top["doc_id"].split("#")[0] == doc and cited(top["location"], unit, where), (question, top)
    finally:
        stop_hub(running)


def test_a_file_posted_to_the_hub_is_read_there_and_cited_or_named_past_its_budget(folder, tmp_path):
    from chaja.client import HubError

    running = start_hub(tmp_path / "hub.chaja", tmp_path / "hub.log",
                        [f"hub.api_keys={READ_KEY}", f"hub.write_keys={WRITE_KEY}", "index.read_timeout_s=1"])
    try:
        got = running.writer.add_file(folder / "rates.pdf")
        assert got["ids"] == ["rates"] and got["added"] == 1 and got["skipped"] == []
        top = running.client().search(QUESTIONS[0][0], 3)["results"][0]
        assert top["doc_id"] == "rates" and cited(top["location"], "page", 2)
        got = running.writer.add_file(folder / "prices.xlsx", doc_id="price-list")
        assert got["ids"] == ["price-list#단가표"]
        (tmp_path / "tool.pdf").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(200))
        with pytest.raises(HubError) as err:
            running.writer.add_file(tmp_path / "tool.pdf")
        assert err.value.status == 422 and "looks like an executable" in str(err.value.detail)
        scan = DOCUMENTS / "scan-linn-sequencer-brochure.pdf"     # about 4 s of OCR for its one page
        if scan.is_file() and not ocr_problem():
            with pytest.raises(HubError) as err:
                running.writer.add_file(scan)
            assert err.value.status == 422 and "budget of 1 s" in str(err.value.detail)
            assert running.client().search(QUESTIONS[0][0], 3)["results"][0]["doc_id"] == "rates"
    finally:
        stop_hub(running)
