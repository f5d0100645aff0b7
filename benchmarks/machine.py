"""What a benchmark ran on: CPU model and flags, cores, load, Python; every
benchmark in this folder writes this into its results (and some write them through
:func:`write_results`)."""
from __future__ import annotations

import json
import os
import platform
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


def write_results(stem: str, report: dict, markdown: str) -> None:
    """``report`` as ``results/<stem>.json`` and ``markdown`` as ``results/<stem>.md``, and
    the table on stdout."""
    out = Path(__file__).resolve().parent / "results" / f"{stem}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    out.with_suffix(".md").write_text(markdown)
    print(markdown)
