"""Progress of long work on stderr, drawn by tqdm.

On a terminal the bar is redrawn in place a few times a second; where stderr is a file
or a pipe (logs, CI) it is written at most every ``log_interval`` seconds, in ASCII.
``quiet`` draws nothing. The callers' progress reports (:class:`chaja.ingest.Progress`)
carry counts done and total; :meth:`Progress.show` takes them as they come.
"""
from __future__ import annotations

import sys


class Progress:
    def __init__(self, desc: str, unit: str = "doc", *, quiet: bool = False, stream=None,
                 log_interval: float = 5.0):
        from tqdm import tqdm

        stream = stream or sys.stderr
        tty = hasattr(stream, "isatty") and stream.isatty()
        self._bar = tqdm(desc=desc, unit=unit, file=stream, disable=quiet, leave=True, dynamic_ncols=tty,
                         ascii=not tty, mininterval=0.2 if tty else log_interval)

    def show(self, done: int, total: int | None = None, *, now: bool = False, **postfix) -> None:
        """Move the bar to ``done`` of ``total``, with ``postfix`` fields beside it; ``now``
        draws it at once (a new step), not at the next interval."""
        if total is not None and total != self._bar.total:
            self._bar.total = total
        if postfix:
            self._bar.set_postfix(postfix, refresh=False)
        self._bar.update(done - self._bar.n)
        if now:
            self._bar.refresh()

    def close(self, note: str | None = None) -> None:
        """Draw the final state (and ``note`` beside it) and leave the line."""
        if note:
            self._bar.set_postfix_str(note, refresh=False)
        self._bar.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def indexing(desc: str = "indexing", *, quiet: bool = False, stream=None):
    """A callback for ``Index.add(progress=...)`` drawing documents done, chunks and passages/s,
    then each finishing step as it begins (``step=...``, drawn at once), and the
    :class:`Progress` behind it (close it when the work ends)."""
    bar = Progress(desc, "doc", quiet=quiet, stream=stream)

    def report(p) -> None:
        stage = getattr(p, "stage", "encoding")
        fields = {"chunks": p.chunks_done, "passages_per_s": f"{p.encode_rate:.1f}"}
        if stage != "encoding":
            fields["step"] = stage
        bar.show(p.documents_done, p.documents_total, now=stage != "encoding", **fields)

    return report, bar


def reading(*, quiet: bool = False, stream=None, min_units: int | None = None):
    """A callback for ``Index.add(read_progress=...)``: a bar per file of at least
    ``min_units`` pages (slides, sheets), so a long PDF shows how far it is read: 20 on
    a terminal, 200 where stderr is a log (where each bar costs lines)."""
    state: dict = {}
    if min_units is None:
        out = stream or sys.stderr
        min_units = 20 if hasattr(out, "isatty") and out.isatty() else 200

    def report(path: str, done: int, total: int) -> None:
        if quiet or total < min_units:
            return
        if state.get("path") != path:
            if state.get("bar") is not None:
                state["bar"].close()
            state["path"], state["bar"] = path, Progress(f"reading {path}", "page", stream=stream)
        state["bar"].show(done, total)
        if done >= total:
            state["bar"].close()
            state["bar"] = None

    return report
