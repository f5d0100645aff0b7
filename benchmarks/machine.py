"""What a benchmark ran on: CPU model and flags, cores, load, Python; every
benchmark in this folder writes this into its results (and some write them through
:func:`write_results`)."""
from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path


def cpuinfo_field(name: str) -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(name):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def describe() -> dict:
    flags = cpuinfo_field("flags").split()
    return {
        "cpu": cpuinfo_field("model name") or platform.processor() or "unknown",
        "cores": os.cpu_count(),
        "avx512_vnni": "avx512_vnni" in flags,
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def line(m: dict, python: bool = False) -> str:
    """The machine of :func:`describe` in one phrase for a report: CPU, cores (and Python with
    ``python``), and the load average at the start, in two decimals."""
    load = ", ".join(f"{x:.2f}" for x in m.get("load_average") or [])
    version = f", Python {m['python']}" if python else ""
    return f"{m['cpu']}, {m['cores']} cores{version}, load average {load} at the start"


def write_results(stem: str, report: dict, markdown: str) -> None:
    """``report`` as ``results/<stem>.json`` and ``markdown`` as ``results/<stem>.md``, and
    the table on stdout."""
    out = Path(__file__).resolve().parent / "results" / f"{stem}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown)
    print(markdown)


class Steps:
    """Seconds of each step of long work, for a ``progress(step)`` callback told each step
    as it begins (``SqliteStore.compact``): call :meth:`done` when the work ends."""

    def __init__(self, echo: str = ""):
        self.seconds: dict[str, float] = {}
        self.echo, self._step, self._began = echo, None, 0.0

    def __call__(self, step: str | None) -> None:
        now = time.perf_counter()
        if self._step is not None:
            self.seconds[self._step] = round(now - self._began, 2)
        self._step, self._began = step, now
        if step is not None and self.echo:
            print(f"  {self.echo}: {step}", file=sys.stderr, flush=True)

    def done(self) -> dict[str, float]:
        self(None)
        return self.seconds
