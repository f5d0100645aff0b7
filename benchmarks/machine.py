"""What a benchmark ran on: CPU model and flags, cores, load, Python; every
benchmark in this folder writes this into its results."""
from __future__ import annotations

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
