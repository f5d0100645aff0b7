"""The PostgreSQL store's aligned vector lists: exact scan against their HNSW index.

A bilingual store searches two aligned lists (passages and section names, 512-d) beside
the e5 lists. This builds one PostgreSQL schema of N synthetic chunks (the stores
benchmark's corpus, with 512-d aligned vectors scattered around one topic centre per
document and one section-name vector per document), then answers the same queries from
two store objects on it, interleaved: one that scans exactly (``exact_below`` above N)
and one that uses the HNSW index (the default above 20,000 rows). Reports p50/p95, the
paired ratio and recall@10 against the exact list, with the machine, in
``benchmarks/results/postgres-aligned.json``.

    python benchmarks/bench_postgres_aligned.py --chunks 100000
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stores import Corpus, pct, postgres_and_folder, summary  # noqa: E402
from machine import describe  # noqa: E402

ALIGNED_DIM = 512
N_CANDIDATES = 60


def with_aligned(docs, seed: int):
    """The corpus's documents with aligned vectors: a topic centre per document, the
    passages around it, and one section-name vector shared by the document's chunks."""
    rng = np.random.default_rng(seed)
    for doc, recs in docs:
        centre = rng.standard_normal(ALIGNED_DIM).astype(np.float32)
        name = centre + 0.5 * rng.standard_normal(ALIGNED_DIM).astype(np.float32)
        for r in recs:
            v = centre + 0.8 * rng.standard_normal(ALIGNED_DIM).astype(np.float32)
            r.aligned_vector = v / np.linalg.norm(v)
            r.aligned_heading_vector = name / np.linalg.norm(name)
        yield doc, recs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--pg-dsn", help="an existing PostgreSQL with pgvector (default: start one with pgserver)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "postgres-aligned.json")
    args = ap.parse_args(argv)
    from chaja.stores.postgres import PostgresStore

    with postgres_and_folder(args.pg_dsn) as (dsn, _):
        schema = f"bench_aligned_{uuid.uuid4().hex[:6]}"
        store = PostgresStore(dsn, schema=schema, dim=384)
        t0 = time.perf_counter()
        with store.bulk_load():
            vectors = []
            for doc, recs in with_aligned(Corpus(seed=args.chunks).documents(args.chunks), seed=1):
                store.put_document(doc, recs)
                if len(vectors) < 5000:
                    vectors.extend(r.aligned_vector for r in recs)
        load_s = time.perf_counter() - t0
        store.conn.execute(store._q("ANALYZE {s}.chunk_aligned"))
        print(f"loaded {args.chunks} chunks with aligned vectors in {load_s:.0f} s", flush=True)
        rng = np.random.default_rng(2)
        base = np.stack(vectors)
        queries = []
        for _ in range(args.queries):   # near a stored passage, so there are real neighbours
            v = base[int(rng.integers(len(base)))] + rng.standard_normal(ALIGNED_DIM).astype(np.float32) * (0.8 / np.sqrt(ALIGNED_DIM))
            queries.append((v / np.linalg.norm(v)).astype(np.float32))
        exact = PostgresStore(dsn, schema=schema, exact_below=10 * args.chunks)
        indexed = PostgresStore(dsn, schema=schema)
        out: dict = {"benchmark": "postgres-aligned", "chunks": args.chunks, "queries": args.queries,
                     "candidates": N_CANDIDATES, "load_s_incl_indexes": round(load_s, 1),
                     "machine": {**describe(), "loadavg_at_start": list(os.getloadavg())}, "fields": {}}
        for field in ("aligned", "aligned_heading"):
            for q in queries[:5]:
                exact.vector(q, N_CANDIDATES, field=field), indexed.vector(q, N_CANDIDATES, field=field)
            te, ti, recall = [], [], []
            for q in queries:
                t = time.perf_counter()
                a = exact.vector(q, N_CANDIDATES, field=field)
                te.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                b = indexed.vector(q, N_CANDIDATES, field=field)
                ti.append((time.perf_counter() - t) * 1000)
                # section names repeat within a document: compare scores, not ids, at the 10th place
                cut = a[min(9, len(a) - 1)].score
                recall.append(sum(h.score >= cut - 1e-6 for h in b[:10]) / 10)
            out["fields"][field] = {"exact": summary(te), "hnsw": summary(ti),
                                    "hnsw_over_exact_p50_paired": round(pct([i / e for i, e in zip(ti, te)], 50), 4),
                                    "recall_at_10": round(statistics.fmean(recall), 4)}
            print(field, json.dumps(out["fields"][field]), flush=True)
        out["machine"]["loadavg_at_end"] = list(os.getloadavg())
        for s in (exact, indexed):
            s.close()
        store.conn.execute(store._q("DROP SCHEMA {s} CASCADE"))
        store.close()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
