"""A new process's first result: ``chaja search`` from the command line, and the hub from
``chaja serve`` to ``/readyz`` answering 200, on a store ``bench_quality.py`` built.

    python benchmarks/bench_startup.py [--store runs/quality/react.chaja] [--runs 7] [--baseline SRC]

``chaja search, its resident answering`` is the command as its console script runs it
(``chaja.cli.launch``) once the store's resident process (:mod:`chaja.cli.resident`) holds
the index. ``--baseline SRC`` also times the same commands with another checkout's ``src`` folder
first on ``PYTHONPATH`` (an earlier version), interleaved with this one's.

Each run starts a fresh process; runs are interleaved with the floors beside them (``python
-c pass``, ``import numpy``, ``import chaja.cli``), so load from other work falls on all
alike. The model cache is warm (a first run builds it and is not timed). Stages of one
search come from a profile of the same command in one process. Results go to
``benchmarks/results/startup.json`` and ``.md`` with the machine they ran on; medians, and
chaja's ratio to the ``import chaja.cli`` floor.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from machine import describe  # noqa: E402

QUERY = "state 관리 useEffect"


def timed(cmd: list[str], env: dict | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - t


def with_src(src: Path | None) -> dict | None:
    return None if src is None else {**os.environ, "PYTHONPATH": str(src)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def hub_ready(store: Path, env: dict | None = None) -> float:
    """Seconds from starting ``chaja serve`` to ``/readyz`` answering 200."""
    port = free_port()
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "chaja.cli", "serve", "--store", str(store), "--port", str(port),
                             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        while time.perf_counter() - t < 120:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                    if r.status == 200:
                        return time.perf_counter() - t
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            time.sleep(0.02)
        raise RuntimeError("the hub was not ready in 120 s")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def stop_resident(store: Path, runtime: str) -> None:
    env = {**os.environ, "XDG_RUNTIME_DIR": runtime}
    code = ("import os, signal, sys; from chaja.cli import resident; s = resident.status(sys.argv[1]); "
            "s and os.kill(s['pid'], signal.SIGTERM)")
    subprocess.run([sys.executable, "-c", code, str(store)], env=env, capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, default=REPO / "runs" / "quality" / "react.chaja")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--baseline", type=Path, help="another checkout's src folder, timed beside this one")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "startup.json")
    args = ap.parse_args()
    if not args.store.exists():
        print(f"no store at {args.store}: run benchmarks/bench_quality.py --sets react first", file=sys.stderr)
        return 2
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "import numpy": [py, "-c", "import numpy"],
        "import chaja.cli": [py, "-c", "import chaja.cli"],
        "chaja search (first result)": [py, "-m", "chaja.cli", "search", QUERY, "--store", str(args.store), "-k", "3"],
    }
    # the command as its console script runs it, answered by the store's resident process
    resident_cmd = [py, "-m", "chaja.cli.launch", "search", QUERY, "--store", str(args.store), "-k", "3"]
    runtime = tempfile.mkdtemp(prefix="chaja-startup-")
    resident_env = {**os.environ, "XDG_RUNTIME_DIR": runtime, "CHAJA_RESIDENT": "600"}
    versions = {"": None} if args.baseline is None else {"": None, " (baseline)": args.baseline.resolve()}
    runs = [(name + tag, cmd, src) for name, cmd in commands.items() for tag, src in versions.items()
            if tag == "" or name.startswith(("chaja", "import chaja"))]
    for _, cmd, src in runs:
        if cmd[-1] == "3":
            timed(cmd, with_src(src))          # the model cache built, not timed
    servers = [f"chaja serve to /readyz{tag}" for tag in versions]
    answered = "chaja search, its resident answering"
    times: dict[str, list[float]] = {name: [] for name in [*(r[0] for r in runs), answered, *servers]}
    timed(resident_cmd, resident_env)                # runs here, then starts the resident
    deadline = time.time() + 120
    while time.time() < deadline and not list(Path(runtime).rglob("*.sock")):
        time.sleep(0.1)
    timed(resident_cmd, resident_env)                # (waits out the resident's warm-up)
    try:
        for _ in range(args.runs):
            for name, cmd, src in runs:
                times[name].append(timed(cmd, with_src(src)))
            times[answered].append(timed(resident_cmd, resident_env))
            for name, src in zip(servers, versions.values()):
                times[name].append(hub_ready(args.store, with_src(src)))
    finally:
        stop_resident(args.store, runtime)
    medians = {name: statistics.median(v) for name, v in times.items()}
    floor = medians["import chaja.cli"]
    results = {"machine": describe(), "store": str(args.store), "query": QUERY, "runs": args.runs,
               "baseline": str(args.baseline) if args.baseline else None,
               "seconds": times, "median_s": medians,
               "ratio_to_import": {name: m / floor for name, m in medians.items()}}
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    m = results["machine"]
    lines = ["# A new process's first result", "",
             f"Machine: {m['cpu']}, {m['cores']} cores. Store: `{args.store.name}`; query `{QUERY}`; "
             f"{args.runs} runs each, interleaved; medians.", "",
             "| process | median s | min s | ratio to `import chaja.cli` |", "|---|---|---|---|"]
    for name, v in times.items():
        lines.append(f"| {name} | {medians[name]:.3f} | {min(v):.3f} | {medians[name] / floor:.2f} |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
