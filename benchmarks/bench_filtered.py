"""Filtered searches on the store bench_peers builds: recall and time, against the same
search unfiltered.

    python benchmarks/bench_peers.py --size 100000       # builds runs/peers/100000/chaja
    python benchmarks/bench_filtered.py --size 100000

A filtered vector search never walks a graph: it scores the rows that pass exactly, so
its recall is that of exact search by construction. What a filter costs is the time:
each query's e5 vector list (60 candidates) and its whole hybrid search are timed with
no filter, with ``lang=ko`` and with ``doc_id_prefix`` filters that pass about 11%, 1.1%
and 0.11% of the chunks (the corpus's ids are ``c<n>``: ``c1`` holds c1, c10–c19,
c100–c199 …), each filtered vector list both ways: scoring every row and masking the
rest (``SCORE_EVERY_ROW_ABOVE`` = 0, the code before), and scoring only the rows that
pass (the default), interleaved query by query. Recall@10 of the filtered vector
list is taken against exact float32 search over the passing rows of the corpus's own
vectors. Results: ``benchmarks/results/filtered-<size>.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import peer_corpus
import peer_systems
from machine import describe, write_results

REPO = HERE.parent
K = 10
N = 60
FILTERS = {"none": None, "lang=ko": {"lang": "ko"}, "doc_id_prefix=c1": {"doc_id_prefix": "c1"},
           "doc_id_prefix=c12": {"doc_id_prefix": "c12"}, "doc_id_prefix=c123": {"doc_id_prefix": "c123"}}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--work", type=Path, default=REPO / "runs" / "peers")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--sources", nargs="+", type=Path, help="the source stores the peers corpus was made from "
                    "(default: those the build recorded, else bench_peers.py's defaults); other sources make "
                    "another corpus, and the recall reference wrong")
    args = ap.parse_args()
    folder = args.work / str(args.size) / "chaja"
    if args.sources is None:
        record = args.work / str(args.size) / "chaja.build.json"
        recorded = json.loads(record.read_text()).get("sources") if record.is_file() else None
        args.sources = [Path(s) for s in recorded] if recorded else \
            [REPO / "runs" / "quality" / f"{s}.chaja" for s in ("korquad", "scifact", "react")]
    queries_file = args.work / f"queries-{args.queries}.json"
    if not (folder / "peers.chaja").is_file() or not queries_file.is_file():
        print(f"no store at {folder} (or no {queries_file.name}): run bench_peers.py --size {args.size} first",
              file=sys.stderr)
        return 2

    from chaja.filters import Filters
    from chaja.stores import sqlite_search

    queries = json.loads(queries_file.read_text())
    system = peer_systems.Chaja(folder, queries)
    system.open()
    system.prepare()
    store = system.store
    # the corpus's own float32 vectors and each chunk's language: the recall reference
    pool = peer_corpus.read_pool(args.sources)
    corpus = [peer_corpus.chunk_at(pool, i) for i in range(args.size)]
    floats = np.stack([c["vector"] for c in corpus]).astype(np.float32)
    langs = np.array([c["lang"] for c in corpus])
    ids = np.array([f"c{i}" for i in range(args.size)])
    passing = {name: np.ones(args.size, dtype=bool) if f is None else
               (langs == f["lang"]) if "lang" in f else np.char.startswith(ids, f["doc_id_prefix"])
               for name, f in FILTERS.items()}
    filters = {name: None if f is None else Filters(**f) for name, f in FILTERS.items()}

    def vector(q, where, every_above):
        sqlite_search.SCORE_EVERY_ROW_ABOVE = every_above
        t = time.perf_counter()
        hits = store.vector(np.asarray(q["vector"], np.float32), N, where=where)
        return time.perf_counter() - t, hits

    def hybrid(q, where):
        system._forget_translations(system.idx)
        t = time.perf_counter()
        system.idx.search(q["text"], K, filters=where)
        return time.perf_counter() - t

    default = sqlite_search.SCORE_EVERY_ROW_ABOVE
    for q in queries:                                  # warm-up: pages in, lexicon read, allowed rows cached
        for name in FILTERS:
            vector(q, filters[name], default)
            hybrid(q, filters[name])
    times: dict[str, dict[str, list[float]]] = {name: {"vector all rows": [], "vector passing rows": [],
                                                        "hybrid": []} for name in FILTERS}
    recall: dict[str, list[float]] = {name: [] for name in FILTERS}
    for i, q in enumerate(queries):
        for name in (list(FILTERS)[i % len(FILTERS):] + list(FILTERS)[:i % len(FILTERS)]):
            where = filters[name]
            if where is not None:
                times[name]["vector all rows"].append(vector(q, where, 0.0)[0])
            seconds, hits = vector(q, where, default)
            times[name]["vector passing rows"].append(seconds)
            times[name]["hybrid"].append(hybrid(q, where))
            rows = np.flatnonzero(passing[name])
            exact = rows[np.argsort(-(floats[rows] @ np.asarray(q["vector"], np.float32)), kind="stable")[:K]]
            got = {int(h.chunk_id[1:].split("#")[0]) for h in hits[:K]}
            recall[name].append(len(got & set(exact.tolist())) / max(1, min(K, rows.size)))
    sqlite_search.SCORE_EVERY_ROW_ABOVE = default
    report = {"machine": describe(), "size": args.size, "queries": len(queries), "n": N, "score_every_row_above": default, "filters": {}}
    for name in FILTERS:
        entry = {"share": float(passing[name].mean()), "recall@10": statistics.mean(recall[name])}
        for what, values in times[name].items():
            if values:
                ms = [1000 * v for v in values]
                entry[what] = {"p50_ms": statistics.median(ms), "p95_ms": pct(ms, 0.95)}
        report["filters"][name] = entry
    none = report["filters"]["none"]
    lines = [f"# Filtered searches at {args.size:,} chunks", "",
             (f"{len(queries)} queries (KorQuAD questions and SciFact claims), query vectors given; the e5 vector "
             f"list ({N} candidates) and the whole hybrid search, interleaved query by query. Recall@10 of the "
             f"filtered vector list against exact float32 search over the rows that pass. Machine: "
             f"{report['machine']['cpu']}, {report['machine']['cores']} cores, load "
             f"{report['machine']['load_average']}."), "",
             ("| filter | share of chunks | vector list recall@10 | vector list p50 / p95 ms: every row scored "
              "| only the passing rows | hybrid p50 / p95 ms |"), "|---|---|---|---|---|---|"]
    for name, e in report["filters"].items():
        every = e.get("vector all rows")
        lines.append(f"| {name} | {e['share']:.2%} | {e['recall@10']:.3f} | "
                     + (f"{every['p50_ms']:.2f} / {every['p95_ms']:.2f}" if every else "— (the graph)") + " | "
                     + f"{e['vector passing rows']['p50_ms']:.2f} / {e['vector passing rows']['p95_ms']:.2f} | "
                     + f"{e['hybrid']['p50_ms']:.2f} / {e['hybrid']['p95_ms']:.2f} |")
    lines += ["", (f"Unfiltered, the vector list walks the graph ({none['vector passing rows']['p50_ms']:.2f} ms, "
                   f"recall@10 {none['recall@10']:.3f}); a filtered one scores the rows that pass exactly.")]
    write_results(f"filtered-{args.size}", report, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
