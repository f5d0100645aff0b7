"""Where a hybrid search's time goes, stage by stage, on the stores bench_peers builds.

    python benchmarks/bench_peers.py --size 100000     # builds runs/peers/100000/chaja
    python benchmarks/bench_stages.py --sizes 10000 100000

Each store is opened as bench_peers serves it (the query vectors given, so encoding is
near nothing and what is left is the search's own cost), every question is searched once
untimed, then ``--rounds`` times with :mod:`chaja.search.stage_costs` recording. Per stage:
the median over questions of its milliseconds per search (each question's median over the
rounds), its p95, and its share of the median search. Stages nest: ``context`` holds the
``context: ...`` rows, ``lists gathered`` the ``lists: ...`` ones (the keyword lists run in
this thread while the store walks its vector graphs in another, inside ``lists: vector``).
Results: ``benchmarks/results/stages.json`` and ``.md``.
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import line, write_results  # noqa: E402
import peer_systems  # noqa: E402

REPO = HERE.parent
K = 10


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure(folder: Path, queries: list[dict], rounds: int) -> dict:
    from chaja.search.stage_costs import recording

    system = peer_systems.Chaja(folder, queries)
    system.open()
    system.prepare()
    for q in queries:                                   # warm-up: pages in, lexicon read
        system.hybrid(q, K)
    per_query: list[list[dict[str, float]]] = [[] for _ in queries]
    for _ in range(rounds):
        for i, q in enumerate(queries):
            with recording() as costs:
                t0 = time.perf_counter()
                system.hybrid(q, K)
                costs["search"] = time.perf_counter() - t0
            per_query[i].append(costs)
    names = sorted({n for runs in per_query for c in runs for n in c})
    stages = {}
    for name in names:
        ms = [1000 * statistics.median(c.get(name, 0.0) for c in runs) for runs in per_query]
        stages[name] = {"p50_ms": statistics.median(ms), "p95_ms": pct(ms, 0.95)}
    whole = stages["search"]["p50_ms"]
    for entry in stages.values():
        entry["share"] = entry["p50_ms"] / whole if whole else 0.0
    return {"chunks": system.store.stats().chunks, "stages": stages}


def render(report: dict) -> str:
    m = report["machine"]
    lines = ["# A hybrid search, stage by stage", "",
             f"{report['queries']} questions (KorQuAD and SciFact), query vectors given, {report['rounds']} rounds; "
             f"ms per search, the median over questions (p95 beside), and the share of the median search. "
             f"Machine: {line(m)}.", ""]
    sizes = list(report["sizes"])
    lines.append("| stage | " + " | ".join(f"{int(s):,} chunks: p50 / p95 ms (share)" for s in sizes) + " |")
    lines.append("|---|" + "---|" * len(sizes))
    names = sorted({n for s in sizes for n in report["sizes"][s]["stages"]},
                   key=lambda n: (n != "search", -report["sizes"][sizes[-1]]["stages"].get(n, {"p50_ms": 0})["p50_ms"]))
    for name in names:
        cells = []
        for s in sizes:
            e = report["sizes"][s]["stages"].get(name)
            cells.append("—" if e is None else f"{e['p50_ms']:.2f} / {e['p95_ms']:.2f} ({e['share']:.0%})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    args = peer_systems.store_arguments(__doc__, [10_000, 100_000], REPO / "runs" / "peers")
    report = peer_systems.measured_stores(args.work, args.sizes, args.queries,
                                          lambda folder, queries: measure(folder, queries, args.rounds))
    if report is None:
        return 1
    report["rounds"] = args.rounds
    write_results("stages", report, render(report))
    print(render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
