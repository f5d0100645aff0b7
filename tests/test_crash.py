"""Crash safety: a real ``chaja index`` killed with SIGKILL, or interrupted with SIGINT
(Ctrl-C), at random points, again and again, never leaves a store that ``chaja check``
finds less than whole, never loses a document a finished run stored, and a reader beside
a writer never sees half a document."""
from __future__ import annotations

import json
import random
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from chaja.stores.sqlite import SqliteStore

KILLS = 8


def corpus(folder, n: int = 60) -> None:
    folder.mkdir()
    rng = random.Random(5)
    words = "보증 기간 배수 펌프 필터 청소 전원 전구 교체 warranty drain pump filter bulb power".split()
    with (folder / "many.jsonl").open("w", encoding="utf-8") as fh:
        for i in range(n):
            body = "\n\n".join(" ".join(rng.choice(words) for _ in range(rng.randint(40, 160))) for _ in range(3))
            fh.write(json.dumps({"id": f"doc-{i:03d}", "title": f"문서 {i}", "text": body}, ensure_ascii=False) + "\n")


def stored(store) -> int:
    """Documents a store holds, read without opening it as chaja would (0 before it exists)."""
    if not store.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT count(*) FROM documents").fetchone()[0]
    except sqlite3.OperationalError:                 # created but no tables yet
        return 0


def index_cmd(folder, store) -> list[str]:
    return [sys.executable, "-m", "chaja.cli", "index", str(folder), "--store", str(store), "--quiet",
            "--set", "encoder.batch_size=2"]


def check(store) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "chaja.cli", "check", "--store", str(store)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_sigkill_at_random_points_leaves_a_whole_store(tmp_path):
    folder, store = tmp_path / "docs", tmp_path / "crash.chaja"
    corpus(folder)
    rng = random.Random(11)
    stored_before: set[str] = set()
    partial = 0
    for _ in range(KILLS):
        proc = subprocess.Popen(index_cmd(folder, store), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        give_up = time.monotonic() + 300
        while proc.poll() is None and stored(store) <= len(stored_before) and time.monotonic() < give_up:
            time.sleep(0.05)                         # until this run has written something (whatever the speed)
        time.sleep(rng.uniform(0.0, 1.0))            # then somewhere further in the writes
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if not store.exists():
            continue
        with SqliteStore(store) as s:
            assert s.check() == []
            now = set(s.fingerprints())
        assert stored_before <= now                  # nothing a killed run had stored went missing
        partial += now != stored_before and len(now) < 60
        stored_before = now
    assert partial >= 2                              # kills landed in the middle of the writes
    done = subprocess.run(index_cmd(folder, store), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    got = check(store)
    assert got.returncode == 0 and "whole: 60 documents" in got.stdout, got.stdout + got.stderr


INTERRUPTS = 4


def ctrl_c_as_in_a_terminal() -> None:
    """In the child before it starts: SIGINT as a terminal gives it (a run started in the
    background of a shell without job control inherits SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def interrupted(proc: subprocess.Popen) -> str:
    """Wait for an interrupted ``chaja index``; assert it ended as Ctrl-C should end it
    (exit 130, one sentence, no traceback) and left a store ``chaja check`` calls whole."""
    err = proc.communicate(timeout=120)[1]
    err = err.decode(errors="replace") if isinstance(err, bytes) else err
    assert proc.returncode == 130 and "interrupted: every document stored before the stop is kept" in err, err
    assert "Traceback" not in err, err
    return err


def whole(store) -> set[str]:
    got = check(store)
    assert got.returncode == 0 and "fault" not in got.stdout, got.stdout + got.stderr
    with SqliteStore(store) as s:
        return set(s.fingerprints())


@pytest.mark.slow
def test_sigint_at_random_points_rolls_back_the_step_and_leaves_check_whole(tmp_path):
    """Ctrl-C at random points while documents are written, and in the finishing steps
    after the last is stored (statistics, keyword postings, vector files): exit 130 with a
    sentence, the step under way rolled back, ``chaja check`` whole (exit 0), every
    earlier document kept; the next run finishes."""
    folder, store = tmp_path / "docs", tmp_path / "ctrl-c.chaja"
    corpus(folder)
    rng = random.Random(17)
    stored_before: set[str] = set()
    partial = 0
    for _ in range(INTERRUPTS):
        proc = subprocess.Popen(index_cmd(folder, store), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                preexec_fn=ctrl_c_as_in_a_terminal)
        give_up = time.monotonic() + 300
        while proc.poll() is None and stored(store) <= len(stored_before) and time.monotonic() < give_up:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 1.0))
        proc.send_signal(signal.SIGINT)
        interrupted(proc)
        now = whole(store)
        assert stored_before <= now
        partial += now != stored_before and len(now) < 60
        stored_before = now
    assert partial >= 2
    # in the finishing steps: Ctrl-C as soon as the progress line names one; each try
    # that finishes first gets five new documents to write, so the next has steps to stop
    for attempt in range(8):
        cmd = [c for c in index_cmd(folder, store) if c != "--quiet"]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=ctrl_c_as_in_a_terminal)
        seen = b""
        while b"step=" not in seen and (chunk := proc.stderr.read1(4096)):
            seen += chunk
        if proc.poll() is None:
            time.sleep(rng.uniform(0.0, 0.05))
            proc.send_signal(signal.SIGINT)
        proc.wait(120)
        if proc.returncode == 130:
            rest = proc.stderr.read().decode(errors="replace")
            assert "interrupted: every document stored before the stop is kept" in rest, rest
            assert "Traceback" not in rest, rest
            assert stored_before <= whole(store)
            break
        # finished first; a Ctrl-C that lands while the finished run's interpreter shuts down
        # ends it by the signal itself (Python re-raises an unhandled SIGINT), its work stored
        assert proc.returncode in (0, -signal.SIGINT), proc.stderr.read()
        stored_before = whole(store)
        assert len(stored_before) == 60 + 5 * attempt
        with (folder / f"more-{attempt}.jsonl").open("w", encoding="utf-8") as fh:
            for i in range(5):
                fh.write(json.dumps({"id": f"more-{attempt}-{i}", "text": f"추가 문서 {attempt} {i} 필터 청소"},
                                    ensure_ascii=False) + "\n")
    else:
        pytest.fail("no Ctrl-C landed in a finishing step in 8 tries")
    done = subprocess.run(index_cmd(folder, store), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    got = check(store)
    assert got.returncode == 0 and "note" not in got.stdout and "fault" not in got.stdout, got.stdout
    with SqliteStore(store) as s:
        assert len(s.fingerprints()) == 60 + 5 * attempt


@pytest.mark.slow
def test_a_reader_never_sees_half_a_document(tmp_path):
    folder, store = tmp_path / "docs", tmp_path / "live.chaja"
    corpus(folder, n=30)
    SqliteStore(store).close()
    writer = subprocess.Popen(index_cmd(folder, store), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seen_counts = set()
    with SqliteStore(store) as reader:
        while writer.poll() is None:
            assert reader.check() == []               # every document it can see has all its chunks
            seen_counts.add(reader.stats().documents)
            time.sleep(0.05)
    assert writer.returncode == 0, writer.stderr.read()
    assert len(seen_counts) > 2                       # it looked while documents were arriving


def staged_rows(store) -> int:
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            return db.execute("SELECT count(*) FROM staged_chunks").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_sigkill_while_a_long_document_streams_shows_none_of_it_and_the_next_run_finishes_it(tmp_path):
    folder, store = tmp_path / "docs", tmp_path / "long.chaja"
    folder.mkdir()
    rng = random.Random(3)
    words = "보증 기간 배수 펌프 필터 청소 전원 전구 교체 warranty drain pump filter bulb power".split()
    text = "\n\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(120))
    (folder / "log.txt").write_text(text, encoding="utf-8")
    cmd = index_cmd(folder, store) + ["--set", "index.chunk_chars=100"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    give_up = time.monotonic() + 300
    while proc.poll() is None and staged_rows(store) < 16 and time.monotonic() < give_up:
        time.sleep(0.05)                                 # two batches staged
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert staged_rows(store) >= 16 and stored(store) == 0   # staged, and not shown in part
    got = check(store)                               # whole, and it says what is staged
    assert got.returncode == 0 and "whole: 0 documents" in got.stdout, got.stdout + got.stderr
    assert re.search(r"note: \d+ chunks of 'log' are staged by an interrupted run", got.stdout)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    got = check(store)
    assert got.returncode == 0 and "whole: 1 documents" in got.stdout, got.stdout + got.stderr
    from chaja.chunking import chunk_document
    from chaja.loaders import load_paths
    expected = len(chunk_document(next(iter(load_paths([folder]))), 100))
    with SqliteStore(store) as s:
        assert s.stats().chunks == expected and s.staged() == {}
