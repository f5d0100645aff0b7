"""What MaxScore pruning saves the keyword lists, and the hybrid search around them.

    python benchmarks/bench_peers.py --size 1000000 --systems chaja   # builds runs/peers/1000000/chaja
    python benchmarks/bench_keyword_pruning.py --sizes 1000000 [--rounds 3]

On each store bench_peers builds (opened as it serves them: query vectors given), every
question is searched once as a hybrid search and each keyword list it asks for (the
question's own and its translated one) is recorded with its arguments. Then, ``--rounds``
times, each recorded keyword list runs twice: every hit row scored and summed by
``bincount`` into an array the size of the segment, as before pruning
(:data:`chaja.stores.bm25_maxscore.PRUNE_FROM` out of reach, :data:`chaja.stores.bm25_segments.SPARSE` 0),
and as by default (pruned, and few postings summed in a lent array),
in an order that alternates: per call the two times, their ratio and whether the two
results are the same (rowids, scores to the last bit, order). Then whole hybrid searches,
the two ways alternating question by question. Reported: medians, p90/p95 and the median
of the paired ratios. Results: ``benchmarks/results/keyword-pruning.json`` and ``.md``.
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
EVERY_ROW = 10**15


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def summary(full: list[float], pruned: list[float], q: float) -> dict:
    return {"every_row_p50_ms": 1000 * statistics.median(full), "pruned_p50_ms": 1000 * statistics.median(pruned),
            f"every_row_p{int(q * 100)}_ms": 1000 * pct(full, q), f"pruned_p{int(q * 100)}_ms": 1000 * pct(pruned, q),
            "every_row_mean_ms": 1000 * statistics.mean(full), "pruned_mean_ms": 1000 * statistics.mean(pruned),
            "median_ratio": statistics.median(b / a for a, b in zip(full, pruned) if a > 0)}


def measure(folder: Path, queries: list[dict], rounds: int) -> dict:
    from chaja.stores import bm25_maxscore, bm25_segments
    from chaja.stores.bm25_segments import SegmentedBM25

    default, sparse = bm25_maxscore.PRUNE_FROM, bm25_segments.SPARSE

    def use(way: int) -> None:
        bm25_maxscore.PRUNE_FROM = way
        bm25_segments.SPARSE = 0 if way == EVERY_ROW else sparse
    system = peer_systems.Chaja(folder, queries)
    system.open()
    system.prepare()
    calls = []
    search = SegmentedBM25.search

    def recorded(self, tokens, n, **kw):
        calls.append((self, tokens, n, kw))
        return search(self, tokens, n, **kw)

    SegmentedBM25.search = recorded
    try:
        for q in queries:
            system.hybrid(q, K)
    finally:
        SegmentedBM25.search = search
    full, pruned, same = [], [], 0
    for r in range(rounds):
        for i, (bm25, tokens, n, kw) in enumerate(calls):
            got = {}
            for way in ((EVERY_ROW, default) if (i + r) % 2 else (default, EVERY_ROW)):
                use(way)
                t = time.perf_counter()
                got[way] = bm25.search(tokens, n, **kw)
                (full if way == EVERY_ROW else pruned).append(time.perf_counter() - t)
            same += got[EVERY_ROW] == got[default]
    hybrid_full, hybrid_pruned = [], []
    for r in range(rounds):
        for i, q in enumerate(queries):
            for way in ((EVERY_ROW, default) if (i + r) % 2 else (default, EVERY_ROW)):
                use(way)
                t = time.perf_counter()
                system.hybrid(q, K)
                (hybrid_full if way == EVERY_ROW else hybrid_pruned).append(time.perf_counter() - t)
    use(default)
    return {"chunks": system.store.stats().chunks, "keyword_calls": len(calls), "rounds": rounds,
            "same_results": same, "compared": len(full),
            "keyword_list": summary(full, pruned, 0.9), "hybrid": summary(hybrid_full, hybrid_pruned, 0.95)}


def render(report: dict) -> str:
    m = report["machine"]
    lines = ["# Keyword lists with MaxScore pruning", "",
             f"Machine: {line(m)}. {report['queries']} questions "
             "(KorQuAD and SciFact) on the stores bench_peers builds, query vectors given; each recorded keyword "
             "list and each hybrid search run both ways, alternating; ms.", "",
             "| chunks | keyword lists | same results | keyword list p50 (every row → pruned) | p90 | mean "
             "| median ratio | hybrid p50 | hybrid p95 | median ratio |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for size, r in report["sizes"].items():
        k, h = r["keyword_list"], r["hybrid"]
        lines.append(f"| {int(size):,} | {r['keyword_calls']} × {r['rounds']} | {r['same_results']} of {r['compared']} "
                     f"| {k['every_row_p50_ms']:.2f} → {k['pruned_p50_ms']:.2f} "
                     f"| {k['every_row_p90_ms']:.2f} → {k['pruned_p90_ms']:.2f} "
                     f"| {k['every_row_mean_ms']:.2f} → {k['pruned_mean_ms']:.2f} | {k['median_ratio']:.2f} "
                     f"| {h['every_row_p50_ms']:.1f} → {h['pruned_p50_ms']:.1f} "
                     f"| {h['every_row_p95_ms']:.1f} → {h['pruned_p95_ms']:.1f} | {h['median_ratio']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    args = peer_systems.store_arguments(__doc__, [1_000_000], REPO / "runs" / "peers")
    report = peer_systems.measured_stores(args.work, args.sizes, args.queries,
                                          lambda folder, queries: measure(folder, queries, args.rounds))
    if report is None:
        return 1
    write_results("keyword-pruning", report, render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
