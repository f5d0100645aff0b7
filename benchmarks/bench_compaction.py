"""What a batch of writes costs a large store: its graphs updated in place against built anew.

    python benchmarks/bench_peers.py --size 100000 --systems chaja      # the store, once
    python benchmarks/bench_compaction.py --size 100000 --add 5000 --delete 1000

Copies the peers benchmark's chaja store of ``--size`` chunks to a scratch folder, deletes
``--delete`` of its documents and adds the next ``--add`` chunks of the same corpus
(:mod:`peer_corpus`, vectors given: no encoding), records the vector statistics as
``Index.add`` does, then compacts twice over the same rows: first as ``Index.add`` does
(each HNSW graph updated with the rows changed since it was written, :mod:`chaja.stores.sqlite_ann`),
then with ``full_graphs=True`` (every graph built anew). After each it measures every
graph's recall@10 against exact search for the benchmark's 200 queries (the searcher's
own query vectors: the e5 ones with the language direction projected out). Seconds per
step of each compaction, recall per field, the machine and load go to
``benchmarks/results/compaction-<size>.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import Steps, describe, write_results  # noqa: E402
import peer_corpus  # noqa: E402
from peer_systems import record_vector_statistics  # noqa: E402

REPO = HERE.parent
K = 10


def timed_compaction(store, **kwargs) -> tuple[float, dict[str, float]]:
    steps = Steps()
    t0 = time.perf_counter()
    store.compact(force=True, progress=steps, **kwargs)
    return time.perf_counter() - t0, steps.done()


def graph_recall(store, queries: list[dict]) -> dict[str, float]:
    """Per field with a graph: mean recall@10 of ``store.vector`` against exact search."""
    from chaja.language_means import META_KEY, project_out, store_basis
    from chaja.stores import sqlite_ann

    basis = store_basis(store.get_meta(META_KEY))
    out = {}
    for field in ("chunk", "heading", "aligned", "aligned_heading"):
        if store._graph(field) is None:
            continue
        mat, ids, _ = store._vectors(field)
        got = []
        for q in queries:
            v = np.asarray(q["aligned_vector" if field.startswith("aligned") else "vector"], np.float32)
            if field in sqlite_ann.PROJECTED_FIELDS and basis.size:
                v = project_out(v, basis).astype(np.float32)
            scores = mat @ v
            top = np.argpartition(-scores, K - 1)[:K]
            want = {ids[i] for i in top}
            got.append(len({h.chunk_id for h in store.vector(v, K, field=field)} & want) / K)
        out[field] = round(float(np.mean(got)), 4)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--add", type=int, default=5_000)
    ap.add_argument("--delete", type=int, default=1_000)
    ap.add_argument("--work", type=Path, default=REPO / "runs" / "peers")
    ap.add_argument("--sources", nargs="+", type=Path,
                    default=[REPO / "runs" / "quality" / f"{s}.chaja" for s in ("korquad", "scifact", "react")])
    args = ap.parse_args()
    source = args.work / str(args.size) / "chaja"
    queries_file = args.work / "queries-200.json"
    if not (source / "peers.chaja").exists() or not queries_file.exists():
        print(f"no peers store at {source}: build it once with\n"
              f"  python benchmarks/bench_peers.py --size {args.size} --systems chaja", file=sys.stderr)
        return 2
    from chaja.stores.sqlite import SqliteStore

    queries = json.loads(queries_file.read_text())
    pool = peer_corpus.read_pool(args.sources)
    machine = describe()
    with tempfile.TemporaryDirectory(dir=args.work) as scratch:
        folder = Path(scratch)
        for f in source.iterdir():
            shutil.copy(f, folder / f.name)
        store = SqliteStore(folder / "peers.chaja")
        t0 = time.perf_counter()
        for i in range(0, args.size, max(args.size // max(args.delete, 1), 1))[: args.delete]:
            store.delete_document(f"c{i}")
        store.put_documents([peer_corpus.document_of(peer_corpus.chunk_at(pool, i))
                             for i in range(args.size, args.size + args.add)])
        writes = time.perf_counter() - t0
        t0 = time.perf_counter()
        record_vector_statistics(store)
        statistics = time.perf_counter() - t0
        updated_s, updated_steps = timed_compaction(store)
        updated_recall = graph_recall(store, queries)
        rebuilt_s, rebuilt_steps = timed_compaction(store, full_graphs=True)
        rebuilt_recall = graph_recall(store, queries)
        chunks = store.stats().chunks
        store.close()
    report = {"benchmark": "compaction", "size": args.size, "added": args.add, "deleted": args.delete,
              "chunks_after": chunks, "machine": machine, "load_after": list(os.getloadavg()),
              "writes_s": round(writes, 2), "statistics_s": round(statistics, 2),
              "updated": {"seconds": round(updated_s, 2), "steps_s": updated_steps, "recall10": updated_recall},
              "rebuilt": {"seconds": round(rebuilt_s, 2), "steps_s": rebuilt_steps, "recall10": rebuilt_recall}}
    write_results(f"compaction-{args.size}", report, render(report))
    return 0


def render(r: dict) -> str:
    graph_s = {k: sum(v for step, v in r[k]["steps_s"].items() if step.startswith("graph")) for k in ("updated", "rebuilt")}
    lines = [f"# A batch of writes to {r['size']:,} chunks: graphs updated or built anew", "",
             f"{r['deleted']:,} documents deleted and {r['added']:,} chunks added (vectors given), then compacted "
             f"twice over the same {r['chunks_after']:,} rows. Machine: {r['machine']['cpu']}, {r['machine']['cores']} cores, "
             f"load {r['machine']['load_average']} before, {r['load_after']} after. Writes {r['writes_s']} s, "
             f"vector statistics {r['statistics_s']} s.", "",
             "| compaction | seconds | of which graphs | recall@10 against exact (chunk / heading / aligned / aligned heading) |",
             "|---|---|---|---|"]
    for name, label in (("updated", "graphs updated in place (the default)"), ("rebuilt", "graphs built anew")):
        rec = r[name]["recall10"]
        cells = " / ".join(f"{rec[f]:.3f}" if f in rec else "—" for f in ("chunk", "heading", "aligned", "aligned_heading"))
        lines.append(f"| {label} | {r[name]['seconds']:.1f} | {graph_s[name]:.1f} | {cells} |")
    lines += ["", "Steps (s): updated " + json.dumps(r["updated"]["steps_s"], ensure_ascii=False),
              "", "rebuilt " + json.dumps(r["rebuilt"]["steps_s"], ensure_ascii=False)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
