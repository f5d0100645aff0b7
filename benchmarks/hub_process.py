"""A hub in its own process for the benchmarks that time it (bench_hub.py,
bench_search_page.py): started on a free port, its address read from its log, and
returned once ``/readyz`` answers 200."""
from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
import time
from pathlib import Path


def start_hub(store: Path, log: Path, options: list[str] = (), env: dict | None = None,
              budget_s: float = 180.0, cpus: set[int] | None = None) -> tuple[subprocess.Popen, str, int]:
    """``chaja serve --store STORE --port 0 --quiet OPTIONS``: (process, host, port) once ready;
    with ``cpus``, the hub and every thread it starts run on those CPUs only."""
    args = [sys.executable, "-m", "chaja.cli", "serve", "--store", str(store), "--port", "0", "--quiet", *options]
    proc = subprocess.Popen(args, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)
    if cpus:
        os.sched_setaffinity(proc.pid, cpus)     # before it starts any thread: they inherit it
    end = time.monotonic() + budget_s
    while True:
        m = re.search(r"chaja hub on http://([\d.]+):(\d+)", log.read_text(errors="replace"))
        if m:
            host, port = m.group(1), int(m.group(2))
            break
        if proc.poll() is not None or time.monotonic() > end:
            proc.kill()
            raise SystemExit(f"the hub did not start:\n{log.read_text(errors='replace')}")
        time.sleep(0.1)
    while time.monotonic() < end:
        c = http.client.HTTPConnection(host, port, timeout=5)
        try:
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                return proc, host, port
        except OSError:
            pass
        finally:
            c.close()
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the hub did not become ready")
