"""Files read in a process of their own, each within a time budget.

One bad file must not hold a run up, nor the hub's writer: the standard library's
``HTMLParser`` is quadratic on unclosed tags before Python 3.11.13 (100 KB of ``<a ``
takes minutes), a malformed PDF can send a parser into a long search, OCR can grind on
a page, and a library's C code can crash the interpreter. :class:`ReadingProcess`
reads files one at a time in a child process and gives each file ``budget_s`` seconds
for every unit of progress its reader reports (a page, slide or sheet; the whole file
for a format without pages). Past it, the child is killed and the file named as
skipped with the reason (``index.read_timeout_s``); a child that dies names its file
the same way. The next file is read by a new child.

A child is a fresh interpreter (``python -c``), not a fork: a fork copies whatever
lock another thread held at that moment (a hub's, a library's) and can hang on it,
and multiprocessing's spawn would import the caller's ``__main__`` again. A child
starts in about 0.2 s, so children are kept between runs of one process (an idle
child waits on its pipe). A child ignores SIGINT (the run that started it decides
what an interrupt means) and ends with this process, SIGKILL included: it watches
its parent (:mod:`chaja.lifeline`) and its pipe. Reading in a child needs POSIX pipes;
elsewhere files are read in this process, without a budget.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING

from chaja.lifeline import python_child

if TYPE_CHECKING:
    from chaja.documents import Document
    from chaja.file_reading import LoadReport

#: whether files can be read in a child process here (pipes passed by descriptor)
AVAILABLE = os.name == "posix"

#: how long a new child may take to start reading (an interpreter's start-up, its imports)
START_S = 60.0


def serve(requests_fd: int, answers_fd: int, parent: int) -> None:
    """The child: read each ``(path, doc_id, ocr)`` that comes, saying when it begins
    (``("tell", 0, 0)``: the budget runs from there, not from the child's start-up) and
    how far it got (``("tell", done, total)``), and answer ``("done", documents, report)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    from chaja.file_reading import LoadReport, read_here
    from chaja.lifeline import die_with

    die_with(parent, death_signal=False)
    requests, answers = Connection(requests_fd, writable=False), Connection(answers_fd, readable=False)
    while True:
        try:
            path, doc_id, ocr = requests.recv()
        except (EOFError, OSError):
            return
        answers.send(("tell", 0, 0))
        report = LoadReport()
        docs = list(read_here(Path(path), doc_id, report, ocr=ocr,
                              progress=lambda _path, done, total: answers.send(("tell", done, total))))
        answers.send(("done", docs, report))


class _Child:
    """One reading process and this end of its two pipes."""

    def __init__(self):
        theirs_r, ours_w = os.pipe()
        ours_r, theirs_w = os.pipe()
        code = f"from chaja.reading_process import serve; serve({theirs_r}, {theirs_w}, {os.getpid()})"
        try:
            self.popen = python_child(["-c", code], pass_fds=(theirs_r, theirs_w), stdin=subprocess.DEVNULL)
        finally:
            os.close(theirs_r)
            os.close(theirs_w)
        self.requests = Connection(ours_w, readable=False)
        self.answers = Connection(ours_r, writable=False)

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self) -> int | None:
        """End the child, however it is, and say how it ended."""
        for conn in (self.requests, self.answers):
            conn.close()
        if self.popen.poll() is None:
            self.popen.kill()
        try:
            return self.popen.wait(5)
        except subprocess.TimeoutExpired:
            return None


_idle: list[_Child] = []
_idle_lock = threading.Lock()


def _take() -> _Child:
    with _idle_lock:
        while _idle:
            child = _idle.pop()
            if child.alive():
                return child
            child.stop()
    return _Child()


def _give_back(child: _Child) -> None:
    if child.alive():
        with _idle_lock:
            _idle.append(child)
    else:
        child.stop()


def _ended(code: int | None) -> str:
    if code is None:
        return "it did not end"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class ReadingProcess:
    """Reads files for this process in a child, each within ``budget_s`` seconds per
    unit of progress; the child is taken on the first file (an idle one, or a new
    one), replaced after a file that overran or killed it, and given back by
    :meth:`close` for the next run."""

    def __init__(self, budget_s: float):
        if not budget_s > 0:
            raise ValueError(f"a reading budget must be above 0 seconds, not {budget_s!r}")
        self.budget_s = float(budget_s)
        self._child: _Child | None = None
        self._busy = False        # a file was sent and its answer not yet taken

    def _lost(self) -> str:
        child, self._child, self._busy = self._child, None, False
        return _ended(child.stop()) if child is not None else "it never started"

    def read(self, path: Path, doc_id: str, report: LoadReport, *, ocr: str = "auto",
             progress: Callable[[int, int], None] | None = None) -> list[Document]:
        """The documents of one file (as :func:`chaja.file_reading.read_here` reads them, its
        notes merged into ``report``); none, and the file in ``report.skipped``, when the
        reader overran its budget or its process died."""
        if self._child is None or not self._child.alive():
            if self._child is not None:
                self._lost()
            self._child = _take()
        child = self._child
        self._busy = True
        try:
            child.requests.send((str(path), doc_id, ocr))
        except OSError:                     # the child died between two files
            report.skip(path, f"its reader process ended before reading it ({self._lost()}); skipped")
            return []
        began, deadline = False, time.monotonic() + START_S
        while True:
            try:
                left = deadline - time.monotonic()
                message = child.answers.recv() if left > 0 and child.answers.poll(left) else None
            except (EOFError, OSError):
                report.skip(path, f"its reader stopped without an answer ({self._lost()}); skipped")
                return []
            if message is None:
                self._lost()
                report.skip(path, f"its reader went over its budget of {self.budget_s:g} s for a page (for the "
                                  f"whole file, in a format without pages) and was stopped; raise "
                                  f"index.read_timeout_s to read it" if began else
                                  f"its reader process did not start within {START_S:g} s; skipped")
                return []
            if message[0] == "tell":
                began, deadline = True, time.monotonic() + self.budget_s
                if progress is not None and message[2]:
                    progress(message[1], message[2])
                continue
            _, docs, part = message
            self._busy = False
            report.merge(part)
            return docs

    def close(self) -> None:
        """Give the child back for the next run (it stays idle on its pipe); one still
        reading (the run was interrupted) is stopped."""
        if self._busy:
            self._lost()
        child, self._child, self._busy = self._child, None, False
        if child is not None:
            _give_back(child)

    def __enter__(self) -> ReadingProcess:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
