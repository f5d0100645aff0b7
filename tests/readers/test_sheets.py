"""Spreadsheets and CSV files: the shared real workbooks, and files written here
with openpyxl and csv (Korean and English), read by chaja.readers.sheets_xlsx and
chaja.readers.sheets_csv."""
from __future__ import annotations

import csv
import datetime as dt
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from chaja.chunking import iter_chunks
from chaja.documents import Location
from chaja.readers import sheets_csv, sheets_xlsx
from chaja.readers.base import ReadContext, ReadError
from tests.readers.shared_files import shared_file as shared

openpyxl = pytest.importorskip("openpyxl")


def read_xlsx(path: Path, doc_id: str = "book", **kw):
    ctx = ReadContext(path, doc_id, **kw)
    return list(sheets_xlsx.read(ctx)), ctx


def read_csv(path: Path, doc_id: str = "table"):
    ctx = ReadContext(path, doc_id)
    [doc] = sheets_csv.read(ctx)
    return doc, ctx


def line_at(doc, row: int) -> tuple[str, Location]:
    """The line a document holds for sheet row ``row`` and the location it is marked with."""
    for section in doc.sections:
        for i, (at, loc) in enumerate(section.marks):
            if loc.first == row:
                end = section.marks[i + 1][0] if i + 1 < len(section.marks) else len(section.text)
                return section.text[at:end].strip(), loc
    raise AssertionError(f"no line marked for row {row}")


# -- the shared real workbooks -------------------------------------------------------------

def test_korean_population_sheet_renders_rows_with_their_column_names():
    docs, _ = read_xlsx(shared("mois-resident-population-2020.xlsx"), "mois")
    [doc] = docs
    sheet = "주민등록 인구 및 세대현황"
    assert doc.id == f"mois#{sheet}"
    assert doc.title == f"mois-resident-population-2020 · {sheet}"
    text, loc = line_at(doc, 57)
    assert text == ("행정기관코드: 2817700000, 행정기관: 인천광역시 미추홀구, 총인구수: 406,602, 세대수: 185,953, "
                    "세대당 인구: 2.19, 남자 인구수: 204,875, 여자 인구수: 201,727, 남여 비율: 1.02")
    assert loc == Location("row", 57, 57, sheet)
    assert line_at(doc, 1)[0].startswith("행정기관코드 | 행정기관 | 총인구수")     # the header row itself
    last, _ = line_at(doc, 279)
    assert "행정기관: 제주특별자치도 서귀포시" in last
    assert all(len(s.text) <= 1000 for s in doc.sections)
    chunk = next(c for c in iter_chunks(doc) if "인천광역시 미추홀구" in c.text)
    assert chunk.location.unit == "row" and chunk.location.first <= 57 <= chunk.location.last
    assert chunk.location.label.startswith(f"sheet '{sheet}', rows ")


def test_irish_budget_tables_combine_their_two_header_rows():
    docs, _ = read_xlsx(shared("irish-budget-examples.xlsx"), "irish")
    assert len(docs) == 12
    exp1 = docs[0]
    assert exp1.title == "irish-budget-examples · Exp1"          # the workbook's title is blank
    text, loc = line_at(exp1, 15)
    # 1335.84 shown as its cell format #,##0 shows it; 1.53116... under 0.0
    assert text == ("GROSS INCOME: 40000, PRSI Liability Existing: 1336, PRSI Liability Proposed: 1336, "
                    "Levy Liability Existing: 800, Levy Liability Proposed: 800, Tax Liability Existing: 3250, "
                    "Tax Liability Proposed: 2720, Total Gain: 530, Total Gain: 10, Gain as % of Net Income: 1.5")
    assert loc == Location("row", 15, 15, "Exp1")
    assert line_at(exp1, 24)[0] == "Variations can arise due to rounding"   # a note under the table


def test_georgia_calculator_reads_every_sheet_with_or_without_a_header():
    docs, ctx = read_xlsx(shared("georgia-child-support-calculator.xlsx"), "ga")
    by_sheet = {d.id.split("#", 1)[1]: d for d in docs}
    assert len(docs) == 14 and "BCSO" in by_sheet and "Explanation of Terms" in by_sheet
    text, loc = line_at(by_sheet["BCSO"], 57)
    assert text == ("ADJUSTED GROSS: 3150, ONE CHILD: 647, TWO CHILDREN: 919, THREE CHILDREN: 1066, "
                    "FOUR CHILDREN: 1188, FIVE CHILDREN: 1307, SIX CHILDREN: 1422")
    assert loc.label == "sheet 'BCSO', row 57"
    alimony, _ = line_at(by_sheet["Explanation of Terms"], 4)
    assert alimony.startswith("Terms: Alimony, Explanation: Alimony is actual payment allowances for support")
    assert line_at(by_sheet["Start Here"], 2)[0] == "Georgia Child Support Guidelines Calculators"


# -- workbooks written here ---------------------------------------------------------------

def test_a_fact_on_row_57_is_cited_at_row_57(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "요금"
    ws.append(["2024년 공공요금 내역"])        # a title above the table
    ws.append([])
    ws.append(["품목", "단가", "수량", "청구일"])
    for r in range(4, 80):
        ws.append([f"품목{r}", 100 + r, r % 5 + 1, dt.date(2024, 3, 1) + dt.timedelta(days=r)])
    ws["A57"], ws["B57"], ws["C57"] = "전기요금", 120.0, None
    wb.properties.title = "공공요금 장부"
    path = tmp_path / "요금.xlsx"
    wb.save(path)
    [doc], _ = read_xlsx(path)
    assert doc.title == "공공요금 장부 · 요금"
    text, loc = line_at(doc, 57)
    assert text == "품목: 전기요금, 단가: 120, 청구일: 2024-04-27"       # 120.0 as 120, the empty cell left out
    assert loc == Location("row", 57, 57, "요금")
    assert line_at(doc, 1)[0] == "2024년 공공요금 내역"
    assert line_at(doc, 3)[0] == "품목 | 단가 | 수량 | 청구일"
    chunk = next(c for c in iter_chunks(doc, max_chars=200) if "전기요금" in c.text)
    assert chunk.location.first <= 57 <= chunk.location.last and chunk.location.last - chunk.location.first < 5


def test_number_formats_dates_and_errors_read_as_shown(tmp_path):
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.append(["Item", "Share", "Price", "When", "Ratio", "Flag"])
    ws.append(["tea", 0.125, 3.1000000000000001, dt.datetime(2024, 3, 1, 0, 0), 145.33199999999852, True])
    ws.append(["coffee", 0.5, 1e21, dt.datetime(2024, 3, 1, 9, 30), "#DIV/0!", False])
    ws["B2"].number_format = ws["B3"].number_format = "0.0%"
    ws["C2"].number_format = "#,##0.00"
    path = tmp_path / "prices.xlsx"
    wb.save(path)
    [doc], _ = read_xlsx(path)
    assert line_at(doc, 2)[0] == "Item: tea, Share: 12.5%, Price: 3.1, When: 2024-03-01, Ratio: 145.332, Flag: TRUE"
    assert line_at(doc, 3)[0] == "Item: coffee, Share: 50%, Price: 1e+21, When: 2024-03-01 09:30, Flag: FALSE"


def test_one_document_per_non_empty_sheet_and_progress_per_sheet(tmp_path):
    wb = openpyxl.Workbook()
    wb.active.title = "Prices"
    wb.active.append(["Name", "Price"])
    wb.active.append(["apple", 3])
    wb.create_sheet("Empty")
    free = wb.create_sheet("메모")
    free.append(["회의 메모", 2024, "참석자 5명"])          # no header: cells joined " | "
    path = tmp_path / "book.xlsx"
    wb.save(path)
    told = []
    docs, _ = read_xlsx(path, "b", progress=lambda done, total: told.append((done, total)))
    assert [d.id for d in docs] == ["b#Prices", "b#메모"]
    assert [d.title for d in docs] == ["book · Prices", "book · 메모"]
    assert docs[1].text == "회의 메모 | 2024 | 참석자 5명"
    assert docs[1].sections[0].marks == ((0, Location("row", 1, 1, "메모")),)
    assert told == [(1, 3), (2, 3), (3, 3)]


def test_a_workbook_of_empty_sheets_gives_one_empty_document(tmp_path):
    wb = openpyxl.Workbook()
    path = tmp_path / "blank.xlsx"
    wb.save(path)
    [doc], ctx = read_xlsx(path, "blank")
    assert doc.id == "blank" and doc.sections == [] and ctx.notes == ["every sheet is empty"]


_MEASURED_READ = """
import sys, tracemalloc
from pathlib import Path
from chaja.readers import sheets_xlsx
from chaja.readers.base import ReadContext
ctx = ReadContext(Path(sys.argv[1]), "big")
import openpyxl  # noqa: F401  (imported before the window, as a reading process has it)
tracemalloc.start()
docs = list(sheets_xlsx.read(ctx))
kept, peak = tracemalloc.get_traced_memory()
print(kept, peak)
"""


def test_a_20000_row_sheet_is_streamed(tmp_path):
    path = tmp_path / "big.xlsx"
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("거래")
    ws.append(["번호", "품목", "단가", "수량", "금액", "비고"])
    for i in range(2, 20002):
        ws.append([i, f"품목 {i % 97}", 120 + i % 50, i % 7 + 1, (120 + i % 50) * (i % 7 + 1), f"메모 {i}"])
    wb.save(path)
    uncompressed = sum(info.file_size for info in zipfile.ZipFile(path).infolist())
    # measured in a fresh interpreter: tracemalloc counts every thread's allocations, and
    # threads earlier tests leave in this process (a hub's, a store's) moved the peak
    kept, peak = map(int, subprocess.run(
        [sys.executable, "-c", _MEASURED_READ, str(path)], capture_output=True, text=True, check=True,
        timeout=300).stdout.split())
    [doc], _ = read_xlsx(path, "big")
    assert line_at(doc, 20001)[0] == "번호: 20001, 품목: 품목 19, 단가: 121, 수량: 3, 금액: 363, 비고: 메모 20001"
    assert len(doc.sections) > 1000 and max(len(s.text) for s in doc.sections) <= 1000
    # What the document keeps (its text, a mark a row) is about the size of the sheet's XML;
    # what reading needs beyond it (openpyxl's shared strings, one section) is far less,
    # where loading the sheet as a tree of cells takes about eight times the XML.
    assert peak - kept < uncompressed / 2, (peak, kept, uncompressed)
    assert peak < 2 * uncompressed, (peak, uncompressed)


def test_malformed_workbooks_are_refused(tmp_path):
    nothing = tmp_path / "nothing.xlsx"
    with zipfile.ZipFile(nothing, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("docProps/app.xml", "<Properties/>")
    with pytest.raises(ReadError, match="not a readable Excel workbook"):
        read_xlsx(nothing)
    good = tmp_path / "good.xlsx"
    wb = openpyxl.Workbook()
    wb.active.append(["a", "b"])
    wb.save(good)
    truncated = tmp_path / "truncated.xlsx"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(ReadError, match="not a readable Excel workbook"):
        read_xlsx(truncated)
    garbage = tmp_path / "garbage.xlsx"
    garbage.write_bytes(b"this is no zip archive at all")
    with pytest.raises(ReadError):
        read_xlsx(garbage)


# -- CSV and TSV ----------------------------------------------------------------------------

ROWS = [["품목", "단가", "비고"]] + [[f"품목{r}", str(100 + r), "메모, 쉼표 포함"] for r in range(2, 80)]
ROWS[56] = ["전기요금", "120", "누진제 적용"]          # record 57


def write_csv(path: Path, rows, encoding="utf-8", delimiter=","):
    with open(path, "w", encoding=encoding, newline="") as f:
        csv.writer(f, delimiter=delimiter).writerows(rows)
    return path


def test_utf8_csv_with_a_bom_cites_row_57(tmp_path):
    doc, ctx = read_csv(write_csv(tmp_path / "요금.csv", ROWS, "utf-8-sig"), "fees")
    assert doc.id == "fees" and doc.title == "요금" and ctx.notes == []
    text, loc = line_at(doc, 57)
    assert text == "품목: 전기요금, 단가: 120, 비고: 누진제 적용"
    assert loc == Location("row", 57, 57)
    assert line_at(doc, 2)[0] == "품목: 품목2, 단가: 102, 비고: 메모, 쉼표 포함"       # a quoted comma stays in its cell
    assert line_at(doc, 1)[0] == "품목 | 단가 | 비고"


def test_cp949_csv_is_read_and_noted(tmp_path):
    doc, ctx = read_csv(write_csv(tmp_path / "legacy.csv", ROWS, "cp949"))
    assert ctx.encoding == "cp949" and ctx.notes == []
    assert line_at(doc, 57)[0] == "품목: 전기요금, 단가: 120, 비고: 누진제 적용"


def test_utf16_tab_separated_file_is_read(tmp_path):
    path = write_csv(tmp_path / "export.csv", ROWS, "utf-16", delimiter="\t")
    assert path.read_bytes()[:2] == b"\xff\xfe"
    doc, ctx = read_csv(path)
    assert ctx.encoding == "utf-16" and ctx.notes == []
    assert line_at(doc, 57)[0] == "품목: 전기요금, 단가: 120, 비고: 누진제 적용"


def test_semicolon_csv_with_decimal_commas(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text('Product;Price;Note\nTea;3,50;"green; loose"\nCoffee;4,20;ground\n', encoding="utf-8")
    doc, _ = read_csv(path)
    assert line_at(doc, 2)[0] == "Product: Tea, Price: 3,50, Note: green; loose"
    assert line_at(doc, 3)[0] == "Product: Coffee, Price: 4,20, Note: ground"


def test_tsv_pipe_and_multiline_records(tmp_path):
    tsv = tmp_path / "codes.tsv"
    tsv.write_text("1100000000\t서울특별시\t존재\n1111000000\t서울특별시 종로구\t존재\n", encoding="utf-8")
    doc, _ = read_csv(tsv)
    assert doc.text == "1100000000 | 서울특별시 | 존재\n1111000000 | 서울특별시 종로구 | 존재"
    pipe = tmp_path / "pipe.csv"
    pipe.write_text('name|city|note\nKim|Seoul|"first line\nsecond line"\nLee|Busan|none\n', encoding="utf-8")
    doc, _ = read_csv(pipe)
    assert line_at(doc, 2)[0] == "name: Kim, city: Seoul, note: first line second line"
    assert line_at(doc, 3)[0] == "name: Lee, city: Busan, note: none"     # rows count records, not lines


def test_a_latin1_csv_falls_back_to_a_guessed_encoding(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("name;city\nJosé;Málaga\nFrançois;Besançon\nZoë;Gießen\n".encode("cp1252"))
    doc, ctx = read_csv(path)
    assert line_at(doc, 2)[0] == "name: José, city: Málaga"
    assert ctx.encoding not in ("utf-8", "ascii") and ctx.notes == []


def test_an_empty_csv_gives_a_document_without_sections(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_bytes(b"")
    doc, _ = read_csv(path)
    assert doc.sections == []


def test_an_unpaired_quote_does_not_swallow_the_file(tmp_path):
    path = tmp_path / "broken.csv"
    rows = "".join(f"row{r},{'가' * 60}\n" for r in range(3, 3000))
    path.write_text(f'name,note\n"oops,unclosed\n{rows}', encoding="utf-8")
    doc, ctx = read_csv(path)
    assert ctx.notes == ["its quotes do not pair up, so they were read as plain characters"]
    assert line_at(doc, 2)[0] == 'name: "oops, note: unclosed'
    assert line_at(doc, 2999)[0] == f"name: row2999, note: {'가' * 60}"


def test_rows_of_amounts_are_not_taken_for_a_header(tmp_path):
    path = tmp_path / "bills.csv"
    path.write_text('전기요금,"12,000원",3월\n수도요금,"8,000원",3월\n', encoding="utf-8")
    doc, _ = read_csv(path)
    assert doc.text == "전기요금 | 12,000원 | 3월\n수도요금 | 8,000원 | 3월"


def test_a_utf16_csv_without_a_byte_order_mark_is_read_as_utf16(tmp_path):
    path = tmp_path / "export.csv"
    path.write_bytes("code,name\n1100000000,Seoul\n2600000000,Busan\n".encode("utf-16-le"))
    doc, ctx = read_csv(path)
    assert ctx.encoding == "utf-16-le"
    assert line_at(doc, 2)[0] == "code: 1100000000, name: Seoul"
