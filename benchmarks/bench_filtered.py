"""Filtered searches on the store bench_peers builds: recall and time, against the same
search unfiltered.

    python benchmarks/bench_peers.py --size 100000       # builds runs/peers/100000/chaja
    python benchmarks/bench_filtered.py --size 100000
    python benchmarks/bench_filtered.py --size 1000000 --filters none,lang=ko --tag half   # some filters

A filtered vector search scores the rows that pass, or, where a wider walk of the field's
graph costs less (``sqlite_search.walk_width``: a filter passing many rows of a large
field), walks the graph and keeps its passing candidates, scoring the passing rows after
all when the walk holds too few. Each query's e5 vector list (60 candidates) and its whole
hybrid search are timed with no filter, with ``lang=ko`` and with ``doc_id_prefix`` filters
that pass about 11%, 1.1% and 0.11% of the chunks (the corpus's ids are ``c<n>``: ``c1``
holds c1, c10–c19, c100–c199 …), each filtered vector list three ways, interleaved query by
query: scoring every row and masking the rest (``SCORE_EVERY_ROW_ABOVE`` = 0, no walk),
scoring only the passing rows (no walk), and the default (a walk where it costs less); the
hybrid search without the filtered walk and with it. Recall@10 of the filtered vector list
(passing rows scored, and the default) is taken against exact float32 search over the
passing rows of the corpus's own vectors. Results: ``benchmarks/results/filtered-<size>.json``
and ``.md``.
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
    ap.add_argument("--filters", default=",".join(FILTERS),
                    help=f"which filters to time (comma-separated, of {', '.join(FILTERS)})")
    ap.add_argument("--tag", default="", help="results go to filtered-<size>-<tag>.json and .md")
    ap.add_argument("--sources", nargs="+", type=Path, help="the source stores the peers corpus was made from "
                    "(default: those the build recorded, else bench_peers.py's defaults); other sources make "
                    "another corpus, and the recall reference wrong")
    args = ap.parse_args()
    chosen = [f for f in args.filters.split(",") if f]
    unknown = [f for f in chosen if f not in FILTERS]
    if unknown or not chosen:
        print(f"unknown filters {unknown}: choose from {', '.join(FILTERS)}", file=sys.stderr)
        return 2
    wanted = {name: f for name, f in FILTERS.items() if name in chosen}     # in FILTERS' order
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
               for name, f in wanted.items()}
    filters = {name: None if f is None else Filters(**f) for name, f in wanted.items()}

    default_every, default_price = sqlite_search.SCORE_EVERY_ROW_ABOVE, sqlite_search.ROWS_PER_WALK_CANDIDATE
    #: how each filtered vector list is searched: (SCORE_EVERY_ROW_ABOVE, ROWS_PER_WALK_CANDIDATE)
    modes = {"every row": (0.0, float("inf")), "passing rows": (default_every, float("inf")),
             "default": (default_every, default_price)}

    def use(mode):
        sqlite_search.SCORE_EVERY_ROW_ABOVE, sqlite_search.ROWS_PER_WALK_CANDIDATE = modes[mode]

    def vector(q, where, mode):
        use(mode)
        t = time.perf_counter()
        hits = store.vector(np.asarray(q["vector"], np.float32), N, where=where)
        return time.perf_counter() - t, hits

    def hybrid(q, where, mode):
        use(mode)
        system._forget_translations(system.idx)
        t = time.perf_counter()
        system.idx.search(q["text"], K, filters=where)
        return time.perf_counter() - t

    for q in queries:                                  # warm-up: pages in, lexicon read, allowed rows cached
        for name in wanted:
            vector(q, filters[name], "default")
            hybrid(q, filters[name], "default")
    times: dict[str, dict[str, list[float]]] = {name: {f"vector {m}": [] for m in modes} | {
        "hybrid passing rows": [], "hybrid default": []} for name in wanted}
    recall: dict[str, dict[str, list[float]]] = {name: {"passing rows": [], "default": []} for name in wanted}
    for i, q in enumerate(queries):
        for name in (list(wanted)[i % len(wanted):] + list(wanted)[:i % len(wanted)]):
            where = filters[name]
            rows = np.flatnonzero(passing[name])
            exact = rows[np.argsort(-(floats[rows] @ np.asarray(q["vector"], np.float32)), kind="stable")[:K]]
            for mode in (modes if where is not None else ["default"]):
                seconds, hits = vector(q, where, mode)
                times[name][f"vector {mode}"].append(seconds)
                if mode in recall[name]:
                    got = {int(h.chunk_id[1:].split("#")[0]) for h in hits[:K]}
                    recall[name][mode].append(len(got & set(exact.tolist())) / max(1, min(K, rows.size)))
            for mode in (("passing rows", "default") if where is not None else ("default",)):
                times[name][f"hybrid {mode}"].append(hybrid(q, where, mode))
    use("default")
    report = {"machine": describe(), "size": args.size, "queries": len(queries), "n": N,
              "score_every_row_above": default_every, "rows_per_walk_candidate": default_price,
              "walk_margin": sqlite_search.WALK_MARGIN, "walk_head": sqlite_search.WALK_HEAD, "filters": {}}
    for name in wanted:
        entry = {"share": float(passing[name].mean()),
                 **{f"recall@10 {m}": statistics.mean(v) for m, v in recall[name].items() if v}}
        for what, values in times[name].items():
            if values:
                ms = [1000 * v for v in values]
                entry[what] = {"p50_ms": statistics.median(ms), "p95_ms": pct(ms, 0.95)}
        report["filters"][name] = entry
    none = report["filters"].get("none")

    def cell(e, what):
        t = e.get(what)
        return f"{t['p50_ms']:.2f} / {t['p95_ms']:.2f}" if t else "—"

    lines = [f"# Filtered searches at {args.size:,} chunks", "",
             (f"{len(queries)} queries (KorQuAD questions and SciFact claims), query vectors given; the e5 vector "
             f"list ({N} candidates) and the whole hybrid search, interleaved query by query. Recall@10 of the "
             f"filtered vector list against exact float32 search over the rows that pass. Machine: "
             f"{report['machine']['cpu']}, {report['machine']['cores']} cores, load "
             f"{report['machine']['load_average']}."), "",
             ("| filter | share of chunks | vector list recall@10: passing rows scored / default | vector list p50 / p95 ms: "
              "every row scored | passing rows scored | default (a walk where cheaper) | hybrid p50 / p95 ms: passing "
              "rows scored | default |"), "|---|---|---|---|---|---|---|---|"]
    for name, e in report["filters"].items():
        scored = e.get("recall@10 passing rows")
        lines.append(f"| {name} | {e['share']:.2%} | "
                     + (f"{scored:.3f} / " if scored is not None else "— / ") + f"{e['recall@10 default']:.3f} | "
                     + " | ".join(cell(e, f"vector {m}") for m in modes) + " | "
                     + cell(e, "hybrid passing rows") + " | " + cell(e, "hybrid default") + " |")
    if none is not None:
        lines += ["", (f"Unfiltered, the vector list walks the graph ({none['vector default']['p50_ms']:.2f} ms, "
                       f"recall@10 {none['recall@10 default']:.3f}); a filtered one scores the rows that pass, or "
                       f"walks the graph where that costs less.")]
    write_results(f"filtered-{args.size}" + (f"-{args.tag}" if args.tag else ""), report, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
