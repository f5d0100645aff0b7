"""Readers side by side: chaja's reader of each format beside the plain extraction of
other libraries, on the real office documents in ``../shared/data/documents`` and on
files generated here (a 500-page PDF, a large spreadsheet).

For each file and reader: seconds (median of ``--rounds`` runs in this process),
pages (slides, rows) per second and MB per second, the ratio to chaja's time, and
fidelity on a hand-checked excerpt of the file (``reader_excerpts.json``): the
character error rate of the best-matching span of the extracted text against the
excerpt (edit distance / excerpt length, NFC), once as written and once with spaces
removed, so a reader that loses the spaces between words shows it. Peak memory (the
child's maximum resident set) is measured in a fresh process per reader on the
generated files (VmHWM: a child's own, where getrusage would report the parent's
peak carried across exec).

    python benchmarks/bench_readers.py                 # shared files, 500-page PDF, 50 MB sheet
    python benchmarks/bench_readers.py --pdf-pages 100 --sheet-mb 5   # a quick look
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, line, write_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ROOT.parent / "shared" / "data" / "documents"
EXCERPTS = Path(__file__).resolve().parent / "reader_excerpts.json"
FONT = Path("/usr/share/fonts/truetype/nanum/NanumGothic.ttf")


# ---- the readers: path -> (text, units) ------------------------------------------

def chaja_reader(path: Path) -> tuple[str, int]:
    from chaja.loaders import LoadReport, read_file

    report = LoadReport()
    docs = list(read_file(path, path.stem, report, ocr="never"))
    if not docs:
        raise RuntimeError("; ".join(str(s) for s in report.skipped) or "no documents")
    units = set()
    parts = []
    for d in docs:
        for s in d.sections:
            parts.append(" ".join(s.heading_path))
            parts.append(s.text)
            units.update((loc.unit, loc.part, n) for _, loc in s.marks for n in range(loc.first, loc.last + 1))
    return "\n".join(parts), len(units) or len(docs)


def pypdfium2_plain(path: Path) -> tuple[str, int]:
    import pypdfium2

    pdf = pypdfium2.PdfDocument(str(path))
    out = []
    for i in range(len(pdf)):
        page = pdf[i]
        tp = page.get_textpage()
        out.append(tp.get_text_range())
        tp.close()
        page.close()
    n = len(pdf)
    pdf.close()
    return "\n".join(out), n


def pdfplumber_plain(path: Path) -> tuple[str, int]:
    import pdfplumber

    with pdfplumber.open(str(path)) as pdf:
        out = []
        for page in pdf.pages:
            out.append(page.extract_text() or "")
            page.close()
        return "\n".join(out), len(out)


def pypdf_plain(path: Path) -> tuple[str, int]:
    import pypdf

    reader = pypdf.PdfReader(str(path))
    return "\n".join(p.extract_text() or "" for p in reader.pages), len(reader.pages)


def pdfminer_plain(path: Path) -> tuple[str, int]:
    from pdfminer.high_level import extract_pages, extract_text

    return extract_text(str(path)), sum(1 for _ in extract_pages(str(path)))


def python_docx_plain(path: Path) -> tuple[str, int]:
    import docx

    d = docx.Document(str(path))
    paras = [p.text for p in d.paragraphs]
    cells = [c.text for t in d.tables for r in t.rows for c in r.cells]
    return "\n".join(paras + cells), len(paras)


def python_pptx_plain(path: Path) -> tuple[str, int]:
    import pptx

    deck = pptx.Presentation(str(path))
    out = [sh.text_frame.text for s in deck.slides for sh in s.shapes if sh.has_text_frame]
    return "\n".join(out), len(deck.slides)


def openpyxl_plain(path: Path) -> tuple[str, int]:
    import openpyxl

    wb = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
    out, rows = [], 0
    for ws in wb.worksheets:
        for row in ws.iter_rows(values_only=True):
            rows += 1
            out.append(" | ".join("" if v is None else str(v) for v in row))
    wb.close()
    return "\n".join(out), rows


def calamine_plain(path: Path) -> tuple[str, int]:
    from python_calamine import CalamineWorkbook

    wb = CalamineWorkbook.from_path(str(path))
    out, rows = [], 0
    for name in wb.sheet_names:
        for row in wb.get_sheet_by_name(name).to_python():
            rows += 1
            out.append(" | ".join("" if v in (None, "") else str(v) for v in row))
    return "\n".join(out), rows


READERS = {
    "pdf": {"chaja": chaja_reader, "pypdfium2": pypdfium2_plain, "pdfplumber": pdfplumber_plain,
            "pypdf": pypdf_plain, "pdfminer.six": pdfminer_plain},
    "docx": {"chaja": chaja_reader, "python-docx": python_docx_plain},
    "pptx": {"chaja": chaja_reader, "python-pptx": python_pptx_plain},
    "xlsx": {"chaja": chaja_reader, "openpyxl": openpyxl_plain, "python-calamine": calamine_plain},
    "hwp": {"chaja": chaja_reader}, "hwpx": {"chaja": chaja_reader}, "txt": {"chaja": chaja_reader},
    "csv": {"chaja": chaja_reader},
}


# ---- fidelity --------------------------------------------------------------------

def _norm(text: str, spaces: bool) -> str:
    text = unicodedata.normalize("NFC", text)
    return " ".join(text.split()) if spaces else "".join(text.split())


def _span_error(excerpt: str, text: str) -> int:
    """Edit distance from ``excerpt`` to its best-matching span of ``text`` (a span may
    start and end anywhere: the first row of the table is free)."""
    prev = [0] * (len(text) + 1)
    for i, a in enumerate(excerpt, 1):
        cur = [i] + [0] * len(text)
        for j, b in enumerate(text, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a != b))
        prev = cur
    return min(prev)


def best_span_error(excerpt: str, text: str, probe: int = 10, windows: int = 20) -> float:
    """The edit distance from ``excerpt`` to its best-matching span of ``text``, over the
    excerpt's length: aligned in a window around each place a ``probe``-character piece
    of the excerpt (its start, middle or end) occurs; 1.0 where none occurs."""
    if not excerpt:
        return 0.0
    n = len(excerpt)
    starts = set()
    for offset in (0, max(0, n // 2 - probe // 2), max(0, n - probe)):
        piece, at = excerpt[offset:offset + probe], -1
        while len(starts) < windows and (at := text.find(piece, at + 1)) >= 0:
            starts.add(max(0, at - offset))
    if not starts:
        return 1.0
    return min(_span_error(excerpt, text[max(0, s - n // 4): s + n + n // 4]) for s in starts) / n


def fidelity(excerpt: str, text: str) -> dict:
    return {"cer": round(best_span_error(_norm(excerpt, True), _norm(text, True)), 4),
            "cer_no_spaces": round(best_span_error(_norm(excerpt, False), _norm(text, False)), 4)}


# ---- timing -----------------------------------------------------------------------

def timed(fn, path: Path, rounds: int) -> dict:
    seconds, text, units = [], "", 0
    for _ in range(rounds):
        start = time.perf_counter()
        text, units = fn(path)
        seconds.append(time.perf_counter() - start)
    s = statistics.median(seconds)
    mb = path.stat().st_size / 1e6
    return {"seconds": round(s, 4), "units": units, "units_per_s": round(units / s, 1) if s else None,
            "mb_per_s": round(mb / s, 2) if s else None, "chars": len(text), "_text": text}


def shared_files(rounds: int, excerpts: dict) -> list[dict]:
    rows = []
    for path in sorted(DOCUMENTS.iterdir()):
        fmt = path.suffix.lower().lstrip(".")
        if fmt not in READERS or path.name.startswith("scan-"):
            continue
        for name, fn in READERS[fmt].items():
            row = {"file": path.name, "format": fmt, "reader": name, "mb": round(path.stat().st_size / 1e6, 3)}
            try:
                row |= timed(fn, path, rounds)
            except Exception as exc:          # a peer that cannot read a file is a result too
                row["error"] = f"{type(exc).__name__}: {exc}"[:200]
            text = row.pop("_text", None)
            if text is not None and path.name in excerpts:
                row |= fidelity(excerpts[path.name]["text"], text)
            rows.append(row)
            print(f"  {path.name:45} {name:16} {row.get('seconds', row.get('error'))}", file=sys.stderr)
    for row in rows:
        base = next((r for r in rows if r["file"] == row["file"] and r["reader"] == "chaja"), None)
        if base and base.get("seconds") and row.get("seconds"):
            row["time_vs_chaja"] = round(row["seconds"] / base["seconds"], 2)
    return rows


# ---- generated large files, each reader in a fresh process ----------------------------

def make_pdf(path: Path, pages: int) -> None:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(TTFont("Nanum", str(FONT)))
    c = canvas.Canvas(str(path))
    for n in range(1, pages + 1):
        c.setFont("Nanum", 10)
        c.drawString(40, 810, "2024년 연차 보고서 · Annual report 2024")
        for line in range(40):
            c.drawString(40, 780 - 18 * line, f"{n}쪽 {line}행: 전기요금 단가와 누진 구간, the tariff per kilowatt-hour "
                                               f"and its bands, 항목 {n * 40 + line}")
        c.drawString(290, 30, str(n))
        c.showPage()
    c.save()


def make_sheet(path: Path, megabytes: float) -> int:
    """An .xlsx of about ``megabytes`` on disk (openpyxl write-only); its rows."""
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("단가표")
    ws.append(["품목", "규격", "단가", "수량", "공급사", "비고"])
    rows = int(megabytes * 1e6 / 42)          # about 42 bytes a row once compressed (measured)
    for r in range(rows):
        ws.append([f"사무용품 {r}", f"규격 {r % 97}", 1000 + r % 5000, r % 37, f"공급사 {r % 211}", f"note {r}"])
    wb.save(str(path))
    return rows


_CHILD = """
import sys, time, json
sys.path.insert(0, {bench!r})
import bench_readers as b
fn = b.READERS[{fmt!r}][{name!r}]
start = time.perf_counter()
text, units = fn(b.Path({path!r}))
seconds = time.perf_counter() - start
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(json.dumps({{"seconds": seconds, "units": units, "chars": len(text), "peak_rss_mb": hwm / 1024}}))
"""


def in_a_process(fmt: str, name: str, path: Path, timeout: float) -> dict:
    code = _CHILD.format(bench=str(Path(__file__).resolve().parent), fmt=fmt, name=name, path=str(path))
    try:
        got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"reader": name, "error": f"over {timeout:.0f} s"}
    if got.returncode != 0:
        return {"reader": name, "error": got.stderr.strip().splitlines()[-1][:200] if got.stderr else "failed"}
    out = json.loads(got.stdout.strip().splitlines()[-1])
    mb = path.stat().st_size / 1e6
    return {"reader": name, "seconds": round(out["seconds"], 2), "units": out["units"], "chars": out["chars"],
            "units_per_s": round(out["units"] / out["seconds"], 1), "mb_per_s": round(mb / out["seconds"], 2),
            "peak_rss_mb": round(out["peak_rss_mb"], 1)}


def large_files(pdf_pages: int, sheet_mb: float, timeout: float) -> dict:
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        if pdf_pages and FONT.is_file():
            pdf = Path(tmp) / "report.pdf"
            make_pdf(pdf, pdf_pages)
            out["pdf"] = {"pages": pdf_pages, "mb": round(pdf.stat().st_size / 1e6, 2),
                          "readers": [in_a_process("pdf", n, pdf, timeout) for n in READERS["pdf"]]}
            print(f"  {pdf_pages}-page PDF done", file=sys.stderr)
        if sheet_mb:
            sheet = Path(tmp) / "prices.xlsx"
            rows = make_sheet(sheet, sheet_mb)
            out["xlsx"] = {"rows": rows, "mb": round(sheet.stat().st_size / 1e6, 2),
                           "readers": [in_a_process("xlsx", n, sheet, timeout) for n in READERS["xlsx"]]}
            print(f"  {sheet_mb} MB sheet done", file=sys.stderr)
    for part in out.values():
        base = next((r for r in part["readers"] if r["reader"] == "chaja" and "seconds" in r), None)
        for r in part["readers"]:
            if base and "seconds" in r:
                r["time_vs_chaja"] = round(r["seconds"] / base["seconds"], 2)
                r["memory_vs_chaja"] = round(r["peak_rss_mb"] / base["peak_rss_mb"], 2)
    return out


# ---- report ---------------------------------------------------------------------------

def markdown(report: dict) -> str:
    m = report["machine"]
    lines = ["# Readers side by side", "",
             f"Machine: {line(m, python=True)}. "
             f"Seconds are the median of {report['rounds']} runs in one process; chaja's reader gives "
             "chaja's documents (sections, headings, marks), the others their library's plain text. "
             "CER: character error rate of the hand-checked excerpt against its best-matching span "
             "(with spaces as written / with spaces removed).", "",
             "| file | reader | s | units/s | MB/s | × chaja | chars | CER | CER no spaces |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in report["shared"]:
        if "error" in r:
            lines.append(f"| {r['file']} | {r['reader']} | error: {r['error'][:80]} | | | | | | |")
            continue
        lines.append(f"| {r['file']} | {r['reader']} | {r['seconds']:.3f} | {r['units_per_s']} | {r['mb_per_s']} | "
                     f"{r.get('time_vs_chaja', '')} | {r['chars']:,} | {r.get('cer', '')} | {r.get('cer_no_spaces', '')} |")
    for fmt, part in report["large"].items():
        size = f"{part['pages']} pages" if fmt == "pdf" else f"{part['rows']:,} rows"
        lines += ["", f"## Generated {fmt.upper()}: {size}, {part['mb']} MB, each reader in a fresh process", "",
                  "| reader | s | units/s | MB/s | peak RSS MB | × chaja time | × chaja memory |", "|---|---|---|---|---|---|---|"]
        for r in part["readers"]:
            if "error" in r:
                lines.append(f"| {r['reader']} | error: {r['error']} | | | | | |")
            else:
                lines.append(f"| {r['reader']} | {r['seconds']} | {r['units_per_s']} | {r['mb_per_s']} | "
                             f"{r['peak_rss_mb']} | {r.get('time_vs_chaja', '')} | {r.get('memory_vs_chaja', '')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pdf-pages", type=int, default=500)
    ap.add_argument("--sheet-mb", type=float, default=50.0)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds a reader may take on a generated file")
    ap.add_argument("--out", default="readers")
    args = ap.parse_args(argv)
    if not DOCUMENTS.is_dir():
        print(f"error: {DOCUMENTS} is absent (the shared office documents)", file=sys.stderr)
        return 2
    excerpts = json.loads(EXCERPTS.read_text(encoding="utf-8"))
    report = {"machine": describe(), "rounds": args.rounds, "shared": shared_files(args.rounds, excerpts),
              "large": large_files(args.pdf_pages, args.sheet_mb, args.timeout)}
    write_results(args.out, report, markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
