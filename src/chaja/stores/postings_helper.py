"""A second process that builds postings pages beside the first.

Building a store's postings from every row (:func:`chaja.stores.postings.build_paged`)
is Python numbering each stored token in a dictionary: at a million chunks about a
minute, on one core, the largest step of a bulk load. Its rows are independent, so
on a machine of two cores or more each page is split in two: a helper process builds one
half while the calling process builds the other, and the parts are merged as before, so
the segment is the same.

The helper is a plain ``python -m chaja.stores.postings_worker`` started by
:func:`chaja.lifeline.python_child` (not a :mod:`multiprocessing` child: a spawned one
imports the caller's ``__main__`` again, a forked one inherits the threads of the encoders
and the search pool); it ends with this process and leaves an interrupt to it, as a
file's reader does (:mod:`chaja.reading_process`). It reads pickled half pages on
standard input and answers each with its pickled segment; one is in flight at a time, so
each process holds half a page's tokens. A helper that cannot
start, dies or answers with an error costs nothing but time: the page is built in the
calling process.
"""
from __future__ import annotations

import os
import pickle
import subprocess

from chaja.lifeline import python_child

#: the helper is used only on a machine of at least this many cores
MIN_CORES = 2


class Helper:
    """One helper process; :meth:`submit` a page, :meth:`result` its segment (None: build it here)."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = python_child(
            ["-m", "chaja.stores.postings_worker", str(os.getpid())], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def submit(self, rows: list) -> bool:
        """Hand a page over; False where the helper is gone (build the page here)."""
        if self.proc is None:
            return False
        try:
            pickle.dump(rows, self.proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)
            self.proc.stdin.flush()
        except (OSError, ValueError, pickle.PicklingError):
            self.close()
            return False
        return True

    def result(self):
        """The segment of the page handed over, or None where the helper failed."""
        if self.proc is None:
            return None
        try:
            status, value = pickle.load(self.proc.stdout)
        except (OSError, EOFError, ValueError, pickle.UnpicklingError):
            status, value = "error", None
        if status != "ok":
            self.close()
            return None
        return value

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def start() -> Helper | None:
    """A helper, or None on a machine of one core or where none can start."""
    if (os.cpu_count() or 1) < MIN_CORES:
        return None
    try:
        return Helper()
    except OSError:
        return None
