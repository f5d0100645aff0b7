"""Hostile files, generated here: each one is reported and skipped or read right, and
never hangs, aborts the run or loses another file's document."""
from __future__ import annotations

import os
import threading

import pytest

from chaja.cli import main
from chaja.loaders import LoadReport, load_paths


def load(folder):
    report = LoadReport()
    docs = {d.id: d for d in load_paths([folder], report)}
    return docs, report


def test_a_fifo_is_skipped_not_waited_on(tmp_path):
    (tmp_path / "ok.md").write_text("# 제목\n\n본문", encoding="utf-8")
    os.mkfifo(tmp_path / "f.md")
    got: dict = {}
    t = threading.Thread(target=lambda: got.update(zip(("docs", "report"), load(tmp_path))), daemon=True)
    t.start()
    t.join(30)
    assert not t.is_alive(), "loading blocked on the FIFO"
    assert list(got["docs"]) == ["ok"]
    assert any("not a regular file" in str(s) for s in got["report"].skipped)


def test_a_deeply_nested_jsonl_line_skips_that_line_only(tmp_path):
    (tmp_path / "x.jsonl").write_text(
        '{"id": "a", "text": "첫 줄"}\n' + "[" * 100_000 + "]" * 100_000 + '\n{"id": "b", "text": "셋째 줄"}\n',
        encoding="utf-8")
    docs, report = load(tmp_path)
    assert sorted(docs) == ["a", "b"]
    assert any(":2: JSON nested too deeply" in p for p in report.problems)


def test_files_with_the_same_stem_both_survive(tmp_path):
    (tmp_path / "good.txt").write_text("제목\n\n텍스트 파일의 본문", encoding="utf-8")
    (tmp_path / "good.html").write_text("<title>제목</title><p>HTML 파일의 본문</p>", encoding="utf-8")
    docs, report = load(tmp_path)
    assert sorted(docs) == ["good", "good.txt"]             # sorted walk: good.html first
    assert "텍스트" in docs["good.txt"].text and "HTML" in docs["good"].text
    assert any("is taken by good.html" in p for p in report.problems)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
def test_utf16_with_a_byte_order_mark_is_read(tmp_path, encoding):
    text = "보증 안내\n\n보증 기간은 2년입니다. Warranty: two years."
    data = text.encode(encoding)
    if encoding == "utf-16-be":
        data = b"\xfe\xff" + data
    (tmp_path / "w.txt").write_bytes(data)
    docs, report = load(tmp_path)
    assert docs["w"].title == "보증 안내" and docs["w"].text.strip() == text.split("\n\n")[1]
    assert not report.problems


def test_a_link_out_of_the_folder_is_not_followed(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("비밀", encoding="utf-8")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "inside.txt").write_text("안쪽 문서", encoding="utf-8")
    os.symlink(outside, folder / "leak.txt")
    os.symlink(folder / "inside.txt", folder / "alias.txt")     # a link that stays inside is read
    docs, report = load(folder)
    assert sorted(docs) == ["alias", "inside"]
    assert any("outside" in str(s) and "leak.txt" in str(s) for s in report.skipped)


def test_unsupported_files_are_counted_aloud(tmp_path, capsys):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# 문서\n\n본문입니다.", encoding="utf-8")
    (folder / "report.pdf").write_bytes(b"%PDF-1.4")        # cut off after its first line
    (folder / "b.docx").write_bytes(b"PK")
    (folder / "tool.exe").write_bytes(b"MZ\x90\x00\x03\x00\x00\x00\x04\x00")
    (folder / "data.bin").write_bytes(b"\x01\x02")
    assert main(["index", str(folder), "--store", str(tmp_path / "s.chaja"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "skipped 4 files: 1 of types chaja does not read (.bin 1), 3 could not be read" in err
    assert f"skipped: {folder / 'b.docx'}: is named .docx but is not a DOCX file" in err
    assert f"skipped: {folder / 'tool.exe'}: looks like a Windows executable, not a document" in err
    assert f"skipped: {folder / 'report.pdf'}: " in err


def test_jsonl_fields_of_the_wrong_type_are_errors_not_strings(tmp_path):
    (tmp_path / "r.jsonl").write_text("\n".join([
        '{"id": "ok", "text": "본문", "lang": "ko"}',
        '{"id": "n", "text": "본문", "lang": 7}',
        '{"id": "t", "text": "본문", "title": ["list", "title"]}',
        '{"id": true, "text": "본문"}',
        '{"id": 42, "text": "숫자 id"}',
        '{"id": "d", "text": "날짜가 틀린 문서", "date": "not-a-date"}',
        '{"id": "l", "text": "언어가 틀린 문서", "lang": "\\"ko"}',
        '{"id": "blank", "text": "   "}',
    ]) + "\n", encoding="utf-8")
    docs, report = load(tmp_path)
    assert sorted(docs) == ["42", "d", "l", "ok"]
    text = "\n".join(report.problems)
    assert ":2: 'lang' must be a string, not int" in text
    assert ":3: 'title' must be a string, not list" in text
    assert ":4: 'id' must be a string or a whole number" in text
    assert ":6: 'date' 'not-a-date' is not a date" in text and docs["d"].date is None
    assert ":7: 'lang' '\"ko' is not a language code" in text and docs["l"].lang == "ko"   # detected
    assert "no text; skipped" in text


def test_front_matter_with_a_broken_language_is_detected_instead(tmp_path):
    (tmp_path / "a.md").write_text('---\ntitle: 안내\nlang: "ko\n---\n\n한국어 본문입니다.\n', encoding="utf-8")
    (tmp_path / "empty.md").write_text("   \n\n  \n", encoding="utf-8")
    docs, report = load(tmp_path)
    assert docs["a"].lang == "ko" and "empty" not in docs
    assert any("is not a language code" in p for p in report.problems)
    assert any("empty.md: no text" in p for p in report.problems)


def test_html_page_furniture_is_not_indexed(tmp_path):
    (tmp_path / "p.html").write_text(
        "<html><head><title>보증 안내</title></head><body>"
        "<nav><a href='/'>홈</a> <a href='/shop'>쇼핑몰 메뉴</a></nav>"
        "<main><h1>보증 안내</h1><p>제품 보증 기간은 2년입니다.</p></main>"
        "<aside>광고: 오늘만 할인</aside><footer>© 회사 주소 연락처</footer></body></html>", encoding="utf-8")
    docs, _ = load(tmp_path)
    text = docs["p"].text
    assert "보증 기간은 2년" in text
    assert not any(w in text for w in ("쇼핑몰 메뉴", "오늘만 할인", "회사 주소"))


def test_a_file_that_would_stall_its_reader_holds_the_run_up_no_longer_than_its_budget(tmp_path):
    """180 KB of unclosed ``<a `` tags: the standard library's HTMLParser spends about five
    minutes on them before Python 3.11.13. ``chaja index`` (a subprocess, bounded) gives the file its
    budget of one second, names it, and indexes the note beside it; on a Python whose
    parser is linear the file is simply read."""
    import subprocess
    import sys
    import time

    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a-broken.html").write_text("<html><body><p>x</p>" + "<a " * 60_000, encoding="utf-8")
    (folder / "b-note.md").write_text("# 공지\n\n도서관은 월요일에 쉽니다.\n", encoding="utf-8")
    store = tmp_path / "s.chaja"
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "chaja.cli", "index", str(folder), "--store", str(store), "--quiet",
                           "--set", "index.read_timeout_s=1"], capture_output=True, text=True, timeout=300)
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert took < 60, f"the run took {took:.0f} s"
    assert "b-note" in subprocess.run([sys.executable, "-m", "chaja.cli", "search", "도서관 휴관일", "--store",
                                       str(store)], capture_output=True, text=True, timeout=300).stdout
    stalled = "a-broken.html: its reader went over its budget of 1 s" in done.stderr
    read = "files read: 2" in done.stdout
    assert stalled or read, done.stdout + done.stderr
