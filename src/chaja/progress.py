"""A dependency-free progress line on stderr: redrawn in place on a terminal,
printed every few seconds otherwise (logs, CI)."""
from __future__ import annotations

import sys
import time


class ProgressLine:
    def __init__(self, stream=None, interval: float = 5.0):
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.interval = interval
        self._last = 0.0
        self._width = 0

    def update(self, text: str, final: bool = False) -> None:
        now = time.monotonic()
        if self.tty:
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad + ("\n" if final else ""))
            self._width = len(text)
            self.stream.flush()
        elif final or now - self._last >= self.interval:
            self.stream.write(text + "\n")
            self.stream.flush()
            self._last = now


def bar(done: int, total: int, width: int = 24) -> str:
    frac = done / total if total else 1.0
    full = int(round(frac * width))
    return "[" + "#" * full + "." * (width - full) + f"] {done}/{total}"
