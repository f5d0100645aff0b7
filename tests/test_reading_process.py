"""Files read in a child process within a time budget (chaja.reading_process): a file
over its budget, or whose reader dies, is named and skipped and the next file read; what
a child reads is what this process reads; children end with the process that started
them. The slow file is a real scanned page of the shared documents (OCR takes seconds),
the budget half a second (the page takes about 4 s)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from chaja.loaders import LoadReport, load_paths, read_file, reading_process
from chaja.reading_process import ReadingProcess

from tests.readers.shared_files import needs_ocr, shared_file

SCAN = "scan-linn-sequencer-brochure.pdf"       # one scanned page: about 4 s of OCR


def gone(pid: int, within_s: float) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        if Path(f"/proc/{pid}/stat").is_file() and Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            return True              # ended, not yet reaped by its parent
        time.sleep(0.05)
    return False


@needs_ocr
def test_a_file_over_its_budget_is_named_and_skipped_and_the_next_is_read(tmp_path):
    scan = shared_file(SCAN)
    (tmp_path / "a-scan.pdf").write_bytes(scan.read_bytes())
    (tmp_path / "b-notes.md").write_text("# 회의록\n\n다음 회의는 목요일 오후 3시에 열린다.\n", encoding="utf-8")
    report = LoadReport()
    began = time.monotonic()
    docs = list(load_paths([tmp_path], report, ocr="always", read_timeout_s=0.5))
    took = time.monotonic() - began
    assert [d.id for d in docs] == ["b-notes"]
    assert [s.path for s in report.skipped] == [str(tmp_path / "a-scan.pdf")]
    reason = report.skipped[0].reason
    assert "budget of 0.5 s" in reason and "index.read_timeout_s" in reason
    assert report.unreadable == {str(tmp_path / "a-scan.pdf")}      # so a prune keeps its documents
    assert took < 15, f"the run waited {took:.1f} s for a file with a budget of 0.5 s"
    # the budget, not the file, stopped it: with time enough the page is read
    report = LoadReport()
    docs = list(load_paths([tmp_path / "a-scan.pdf"], report, ocr="always", read_timeout_s=120))
    assert len(docs) == 1 and len(docs[0].text) > 500 and not report.skipped


@pytest.mark.parametrize("name", ["nikl-work-plan-2022.pdf", "tika-intro-ko.hwp", "public-data-standard-2023.hwpx",
                                  "ai-glossary-ko.docx", "langchain-tutorial-ko.pptx", "irish-budget-examples.xlsx",
                                  "legal-dong-codes-cp949.txt"])
def test_a_child_reads_what_this_process_reads(name):
    path = shared_file(name)
    here, there = LoadReport(), LoadReport()
    expected = list(read_file(path, "doc", here))
    with ReadingProcess(120) as reading:
        got = reading.read(path, "doc", there)
    assert got == expected and got
    assert (there.files, there.formats, there.problems, there.encodings, there.partial, there.skipped) == \
           (here.files, here.formats, here.problems, here.encodings, here.partial, here.skipped)


def test_progress_crosses_from_the_child_page_by_page():
    path = shared_file("nikl-work-plan-2022.pdf")
    told: list[tuple[str, int, int]] = []
    docs = list(load_paths([path], progress=lambda p, done, total: told.append((p, done, total))))
    assert docs and told
    total = told[-1][2]
    assert total > 5 and [t[1] for t in told] == list(range(1, total + 1)) and {t[0] for t in told} == {str(path)}


@needs_ocr
def test_a_reader_that_dies_names_its_file_and_the_next_file_is_read(tmp_path):
    scan = shared_file(SCAN)
    good = tmp_path / "good.md"
    good.write_text("# Parking\n\nVisitors park free for two hours.\n", encoding="utf-8")
    report = LoadReport()
    with ReadingProcess(120) as reading:
        got: list = []
        worker = threading.Thread(target=lambda: got.append(reading.read(scan, "scan", report, ocr="always")))
        worker.start()
        time.sleep(1.0)                                  # the child is OCRing the page
        os.kill(reading._child.popen.pid, signal.SIGKILL)
        worker.join(30)
        assert got == [[]]
        assert "killed by SIGKILL" in report.skipped[0].reason
        assert [d.id for d in reading.read(good, "good", report)] == ["good"]
    assert report.files == 1


def test_a_child_is_kept_for_the_next_run_and_a_busy_one_is_not(tmp_path):
    note = tmp_path / "note.txt"
    note.write_text("A short note about the library's opening hours.\n", encoding="utf-8")
    with ReadingProcess(60) as first:
        first.read(note, "note", LoadReport())
        pid = first._child.popen.pid
    with ReadingProcess(60) as second:
        second.read(note, "note", LoadReport())
        assert second._child.popen.pid == pid              # the idle child was taken again
        second._busy = True                              # as if a run were interrupted mid-file
    with ReadingProcess(60) as third:
        docs = third.read(note, "note", LoadReport())
        assert third._child.popen.pid != pid and [d.id for d in docs] == ["note"]
    assert gone(pid, 5)


def test_no_budget_reads_in_this_process():
    assert reading_process(0) is None
    with pytest.raises(ValueError, match="above 0"):
        ReadingProcess(0)


@needs_ocr
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table of Linux")
def test_the_reading_child_ends_with_a_killed_parent(tmp_path):
    scan = shared_file(SCAN)
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from chaja.loaders import LoadReport
        from chaja.reading_process import ReadingProcess
        reading = ReadingProcess(600)
        reading._child = __import__("chaja.reading_process", fromlist=["_take"])._take()
        print(reading._child.popen.pid, flush=True)
        reading.read(Path({str(scan)!r}), "scan", LoadReport(), ocr="always")
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(parent.stdout.readline())
        time.sleep(1.0)                                  # the child is OCRing the page
        parent.kill()
        parent.wait(10)
        assert gone(child, 5), "the reading child outlived its killed parent"
    finally:
        parent.kill()
