"""SQLite and PostgreSQL stores side by side on synthetic chunks.

Measures, for each corpus size: ingest throughput through ``put_document``
(chunks/s; for PostgreSQL as a bulk load, rows then one HNSW build, and then
incrementally, documents added one by one to the indexed store), keyword and vector candidate latency (p50/p95, n = 60 as in
production), end-to-end latency of both paths plus RRF and fetching the top 10
chunks, the PostgreSQL/SQLite ratios, and the HNSW recall@10 against the SQLite
store's exact vector search on the same queries; and PostgreSQL's three keyword engines
side by side (the postings a reader keeps, the postings the database keeps, ranking in
SQL), with each one's reader memory as a process of its own.

The corpus is synthetic: Korean-like text (words of 1-4 syllables drawn from a
fixed syllable set, Zipf-distributed, analysed into bigrams by chaja's own
analyser) and English-like text (a fixed vocabulary of made-up words, also Zipf),
10 chunks per document, 70 % Korean; vectors are unit vectors (dim 384) scattered
around 500 random topic centres, one per document, and each query vector is a
stored vector plus noise, so it has real neighbours.

PostgreSQL is a local server started with pgserver (as in the tests) unless
``--pg-dsn`` names one. Results go to ``benchmarks/results/stores.json``.

    python benchmarks/bench_stores.py                  # 10k and 100k chunks
    python benchmarks/bench_stores.py --sizes 2000 --queries 50   # a quick look
    python benchmarks/bench_stores.py --sizes 1000000 --maintenance-work-mem 3GB --out benchmarks/results/stores-1000000.json
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402

from chaja.analysis import bigram_terms, query_terms
from chaja.documents import Chunk, ChunkRecord, Document, Section

DIM = 384
CHUNKS_PER_DOC = 10
N_CANDIDATES = 60
TOP_K = 10
RRF_K = 60
KO_SHARE = 0.7
N_TOPICS = 500
TOPIC_SPREAD = 1.0  # noise norm relative to the centre: cosine to the centre about 0.7
# Syllables for Korean-like words (common in real text, so bigrams repeat as they do).
SYLLABLES = list(
    "가각간감강개거건결경계고공과관구국권금기나내년노다단대도동두등라래로류리마만매명모무문물미바"
    "반발방배법변보본부분비사산상생서선설성세소속수시식신실안야양어업여연영예오외요용우운원위유의"
    "이인일자작장재저전정제조종주증지진차처천체초최추출치코타통투특파판평표품하한할합해행현형화회"
)


# ---- synthetic corpus ----------------------------------------------------------

class Corpus:
    """A fixed vocabulary; ``seed`` drives the sampling, so a corpus can be replayed."""

    def __init__(self, seed: int = 20240601):
        r = np.random.default_rng(7)
        self.rng = np.random.default_rng(seed)
        self.ko_words = ["".join(r.choice(SYLLABLES, size=r.integers(1, 5))) for _ in range(6000)]
        letters = list("abcdefghijklmnopqrstuvwxyz")
        self.en_words = list(dict.fromkeys(
            "".join(r.choice(letters, size=r.integers(3, 10))) for _ in range(4000)))
        # Topic centres: chunk vectors scatter around their document's centre, as
        # embeddings of related text do (uniformly random vectors have no structure
        # and are the worst case for an approximate index).
        c = r.standard_normal((N_TOPICS, DIM))
        self.centres = (c / np.linalg.norm(c, axis=1, keepdims=True)).astype(np.float32)
        self._p = {}

    def _zipf(self, words: list[str], k: int, skip: int = 0) -> list[str]:
        key = (id(words), skip)
        if key not in self._p:
            ranks = np.arange(1, len(words) + 1, dtype=np.float64)
            p = 1.0 / ranks**1.05
            p[:skip] = 0.0
            self._p[key] = p / p.sum()
        idx = self.rng.choice(len(words), size=k, p=self._p[key])
        return [words[i] for i in idx]

    def text(self, lang: str, k: int, skip: int = 0) -> str:
        return " ".join(self._zipf(self.ko_words if lang == "ko" else self.en_words, k, skip))

    def documents(self, n_chunks: int, prefix: str = "doc"):
        """Yield (Document, [ChunkRecord]) until ``n_chunks`` chunks were made."""
        r = self.rng
        made = 0
        d = 0
        while made < n_chunks:
            lang = "ko" if r.random() < KO_SHARE else "en"
            count = min(CHUNKS_PER_DOC, n_chunks - made)
            doc_id = f"{prefix}{d:07d}"
            title = self.text(lang, int(r.integers(3, 8)), skip=20)
            heads = [(self.text(lang, int(r.integers(1, 4)), skip=20),) for _ in range(count)]
            body_len = (30, 70) if lang == "ko" else (60, 140)
            bodies = [self.text(lang, int(r.integers(*body_len))) for _ in range(count)]
            vecs = r.standard_normal((count, DIM)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            vecs = self.centres[int(r.integers(N_TOPICS))] + vecs * TOPIC_SPREAD
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            doc = Document(id=doc_id, title=title, lang=lang, source="synthetic", doc_type="note",
                           sections=[Section(h, b) for h, b in zip(heads, bodies)])
            title_terms = bigram_terms(title)
            recs = []
            for i in range(count):
                chunk = Chunk(id=f"{doc_id}#{i}", doc_id=doc_id, ordinal=i, title=title, heading_path=heads[i],
                              text=bodies[i], lang=lang, source="synthetic", doc_type="note")
                recs.append(ChunkRecord(chunk=chunk, title_terms=title_terms,
                                        heading_terms=bigram_terms(heads[i][0]),
                                        body_terms=bigram_terms(bodies[i]), vector=vecs[i]))
            yield doc, recs
            made += count
            d += 1

    def queries(self, n: int, stored: np.ndarray):
        """(terms, vector, lang) triples; vectors are noisy copies of stored ones."""
        r = self.rng
        out = []
        for _ in range(n):
            lang = "ko" if r.random() < KO_SHARE else "en"
            terms = query_terms(bigram_terms, self.text(lang, int(r.integers(2, 5)), skip=10))
            base = stored[int(r.integers(len(stored)))]
            v = base + r.standard_normal(DIM).astype(np.float32) * (0.8 / np.sqrt(DIM))
            out.append((terms, (v / np.linalg.norm(v)).astype(np.float32), lang))
        return out


# ---- measurement ---------------------------------------------------------------

def pct(values: list[float], p: float) -> float:
    return float(np.percentile(np.asarray(values), p))


def summary(ms: list[float]) -> dict:
    return {"p50_ms": round(pct(ms, 50), 3), "p95_ms": round(pct(ms, 95), 3),
            "mean_ms": round(statistics.fmean(ms), 3)}


def rrf(*lists) -> list[str]:
    scores: dict[str, float] = {}
    for hits in lists:
        for rank, h in enumerate(hits, start=1):
            scores[h.chunk_id] = scores.get(h.chunk_id, 0.0) + 1.0 / (RRF_K + rank)
    return [cid for cid, _ in sorted(scores.items(), key=lambda kv: -kv[1])[:TOP_K]]


def ingest(store, docs, vectors: list | None = None) -> dict:
    """Time ``put_document`` alone (making the synthetic documents is not counted)."""
    secs = 0.0
    chunks = 0
    for doc, recs in docs:
        t0 = time.perf_counter()
        store.put_document(doc, recs)
        secs += time.perf_counter() - t0
        chunks += len(recs)
        if vectors is not None:
            vectors.extend(r.vector for r in recs)
    return {"chunks": chunks, "seconds": round(secs, 2), "chunks_per_s": round(chunks / secs, 1)}


def search(store, queries, random_queries, warmup: int = 10) -> tuple[dict, list[list[str]], list[list[str]]]:
    t0 = time.perf_counter()
    store.vector(queries[0][1], N_CANDIDATES)  # SQLite loads its matrix here
    first_vector_ms = (time.perf_counter() - t0) * 1000
    for terms, vec, _ in queries[:warmup]:
        store.keyword(terms, N_CANDIDATES)
        store.vector(vec, N_CANDIDATES)
    kw, vc, e2e, kw_lang, vec_ids = [], [], [], [], []
    kw_hits = 0
    for terms, vec, lang in queries:
        t = time.perf_counter()
        hits = store.keyword(terms, N_CANDIDATES)
        kw.append((time.perf_counter() - t) * 1000)
        kw_hits += len(hits)
        t = time.perf_counter()
        vh = store.vector(vec, N_CANDIDATES)
        vc.append((time.perf_counter() - t) * 1000)
        vec_ids.append([h.chunk_id for h in vh[:TOP_K]])
        t = time.perf_counter()
        store.keyword(terms, N_CANDIDATES, lang=lang)
        kw_lang.append((time.perf_counter() - t) * 1000)
    for terms, vec, _ in queries:
        t = time.perf_counter()
        top = rrf(store.keyword(terms, N_CANDIDATES), store.vector(vec, N_CANDIDATES))
        store.chunks(top)
        e2e.append((time.perf_counter() - t) * 1000)
    far_ids = [[h.chunk_id for h in store.vector(q, N_CANDIDATES)[:TOP_K]] for q in random_queries]
    return ({"keyword": summary(kw), "keyword_lang_filter": summary(kw_lang), "vector": summary(vc),
             "end_to_end": summary(e2e), "first_vector_query_ms": round(first_vector_ms, 1),
             "mean_keyword_hits": round(kw_hits / len(queries), 1)}, vec_ids, far_ids)


def keyword_engines(pg, pg_dsn: str, schema: str, queries) -> dict:
    """The PostgreSQL store's three keyword engines on the same schema: the postings the
    reader keeps (built on its first search, then mapped from the cache by the next
    store object), the postings the database keeps (written by the first search of a
    ``stored`` store object, then fetched term by term), and ranking every match in SQL;
    queries interleaved, with top-10 agreement and the largest relative score difference
    against the reader's postings."""
    from chaja.stores.postgres import PostgresStore

    t = time.perf_counter()
    pg.keyword(queries[0][0], N_CANDIDATES)
    build_ms = (time.perf_counter() - t) * 1000
    again = PostgresStore(pg_dsn, schema=schema)
    stored = PostgresStore(pg_dsn, schema=schema, keyword_engine="stored")
    sql = PostgresStore(pg_dsn, schema=schema, keyword_engine="sql")
    try:
        t = time.perf_counter()
        again.keyword(queries[0][0], N_CANDIDATES)
        cached_ms = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        stored.keyword(queries[0][0], N_CANDIDATES)
        stored_build_ms = (time.perf_counter() - t) * 1000
        stored_bytes = stored.conn.execute(stored._q(
            "SELECT pg_total_relation_size('{s}.keyword_postings') + pg_total_relation_size('{s}.keyword_parts')"
        )).fetchone()[0]
        times: dict[str, list[float]] = {"postings": [], "stored": [], "sql": []}
        agree: dict[str, list[float]] = {"stored": [], "sql": []}
        worst = {"stored": 0.0, "sql": 0.0}
        for terms, _, _ in queries:
            lists = {}
            for name, store in (("postings", again), ("stored", stored), ("sql", sql)):
                t = time.perf_counter()
                lists[name] = store.keyword(terms, N_CANDIDATES)
                times[name].append((time.perf_counter() - t) * 1000)
            a = lists["postings"]
            for name in ("stored", "sql"):
                b = lists[name]
                agree[name].append(len({h.chunk_id for h in a[:TOP_K]} & {h.chunk_id for h in b[:TOP_K]})
                                   / max(1, min(TOP_K, len(b))))
                sb = {h.chunk_id: h.score for h in b}
                worst[name] = max([worst[name]] + [abs(h.score - sb[h.chunk_id]) / abs(sb[h.chunk_id])
                                                   for h in a if h.chunk_id in sb and sb[h.chunk_id]])
    finally:
        for store in (again, stored, sql):
            store.close()

    def paired(name: str, over: str = "postings") -> float:
        return round(pct([x / y for x, y in zip(times[name], times[over])], 50), 4)

    return {**{name: summary(ms) for name, ms in times.items()},
            "postings_over_sql_p50_paired": paired("postings", "sql"),
            "stored_over_postings_p50_paired": paired("stored"),
            "top10_agreement": round(statistics.fmean(agree["sql"]), 4),
            "stored_top10_agreement": round(statistics.fmean(agree["stored"]), 4),
            "max_relative_score_difference": worst["sql"],
            "stored_max_relative_score_difference": worst["stored"],
            "first_search_building_postings_ms": round(build_ms, 1),
            "first_search_from_cache_ms": round(cached_ms, 1),
            "first_stored_search_writing_postings_ms": round(stored_build_ms, 1),
            "stored_postings_bytes": int(stored_bytes)}


_READER = """
import json, sys
from chaja.stores.postgres import PostgresStore

def memory():
    fields = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
    return {k: round(int(fields[k].split()[0]) / 1024, 1) for k in ("VmHWM", "RssAnon", "RssFile")}

dsn, schema, engine, path = sys.argv[1:5]
queries = json.load(open(path))
store = PostgresStore(dsn, schema=schema, keyword_engine=engine)
opened = memory()
for terms in queries:
    store.keyword(terms, 60)
print(json.dumps({"opened_mib": opened, "after_queries_mib": memory()}))
"""


#: the queries a reader that ranks in SQL asks in the memory measurement
SQL_MEMORY_QUERIES = 20


def reader_memory(pg_dsn: str, schema: str, queries) -> dict:
    """Each keyword engine's reader as a process of its own: its memory (MiB, from
    /proc/self/status: peak resident, private and file-backed pages) once the store is
    open and after the keyword lists of every query (:data:`SQL_MEMORY_QUERIES` of them
    for the SQL engine), the postings engine mapping the cache file the runs before wrote."""
    import subprocess

    out = {}
    for engine in ("postings", "stored", "sql"):
        # ranked in SQL, a list holds nothing in the reader, and takes seconds at a million
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump([terms for terms, _, _ in queries][:SQL_MEMORY_QUERIES if engine == "sql" else None], f)
        try:
            run = subprocess.run([sys.executable, "-c", _READER, pg_dsn, schema, engine, f.name],
                                 capture_output=True, text=True, check=True)
        finally:
            os.unlink(f.name)
        out[engine] = json.loads(run.stdout.strip().splitlines()[-1])
    return out


def run_size(n: int, n_queries: int, n_extra: int, sqlite_dir: Path, pg_dsn: str,
             maintenance_work_mem: str = "1GB") -> dict:
    from chaja.stores.postgres import PostgresStore
    from chaja.stores.sqlite import SqliteStore

    result: dict = {"chunks": n, "queries": n_queries, "incremental_chunks": n_extra}
    # The same documents for both stores: the corpus is replayed from its seed
    # rather than held in memory (100k chunks of term lists would take gigabytes).
    sq = SqliteStore(sqlite_dir / f"bench-{n}.db")
    vectors: list = []
    result["sqlite"] = {"ingest": ingest(sq, Corpus(seed=n).documents(n), vectors)}
    queries = Corpus(seed=n + 1).queries(n_queries, np.stack(vectors))
    del vectors
    rq = np.random.default_rng(n + 3).standard_normal((n_queries, DIM)).astype(np.float32)
    random_queries = list(rq / np.linalg.norm(rq, axis=1, keepdims=True))
    print(f"[{n}] sqlite ingest {result['sqlite']['ingest']}", flush=True)
    res, sq_ids, sq_far = search(sq, queries, random_queries)
    result["sqlite"].update(res, size_bytes=sq.stats().size_bytes)
    result["sqlite"]["ingest_incremental"] = ingest(sq, Corpus(seed=n + 2).documents(n_extra, "extra"))
    sq.close()
    print(f"[{n}] sqlite search done", flush=True)

    schema = f"bench_{n}_{uuid.uuid4().hex[:6]}"
    pg = PostgresStore(pg_dsn, schema=schema, dim=DIM)
    try:
        # Bulk: rows first, then one HNSW build (PostgresStore.bulk_load).
        t0 = time.perf_counter()
        bulk = pg.bulk_load(maintenance_work_mem=maintenance_work_mem)
        bulk.__enter__()
        start_s = time.perf_counter() - t0
        rows = ingest(pg, Corpus(seed=n).documents(n))
        t1 = time.perf_counter()
        bulk.__exit__(None, None, None)
        build_s = time.perf_counter() - t1
        total = start_s + rows["seconds"] + build_s
        rows.update(rows_seconds=rows.pop("seconds"), rows_chunks_per_s=rows.pop("chunks_per_s"),
                    index_build_seconds=round(build_s, 2), seconds=round(total, 2),
                    chunks_per_s=round(rows["chunks"] / total, 1))
        result["postgres"] = {"ingest": rows}
        print(f"[{n}] postgres bulk ingest {rows}", flush=True)
        pg.conn.execute(pg._q("ANALYZE {s}.chunks"))
        engines = keyword_engines(pg, pg_dsn, schema, queries)
        engines["reader_memory"] = reader_memory(pg_dsn, schema, queries)
        print(f"[{n}] postgres keyword engines {engines}", flush=True)
        res, pg_ids, pg_far = search(pg, queries, random_queries)
        res["keyword_engines"] = engines
        result["postgres"].update(res, size_bytes=pg.stats().size_bytes)
        print(f"[{n}] postgres search done", flush=True)
        # Incremental: documents added one by one to the indexed store.
        result["postgres"]["ingest_incremental"] = ingest(pg, Corpus(seed=n + 2).documents(n_extra, "extra"))
        print(f"[{n}] postgres incremental {result['postgres']['ingest_incremental']}", flush=True)
    finally:
        pg.conn.execute(pg._q("DROP SCHEMA {s} CASCADE"))
        pg.close()

    def recall(approx, exact):
        return round(statistics.fmean(len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(approx, exact)), 4)

    # Against the SQLite store's exact search: queries near stored chunks, and
    # uniformly random queries (no close neighbours: the hard case for HNSW).
    result["postgres"]["hnsw_recall_at_10_vs_exact"] = recall(pg_ids, sq_ids)
    result["postgres"]["hnsw_recall_at_10_vs_exact_random_queries"] = recall(pg_far, sq_far)
    s, p = result["sqlite"], result["postgres"]
    result["ratio_pg_over_sqlite"] = {
        "ingest_bulk_chunks_per_s": round(p["ingest"]["chunks_per_s"] / s["ingest"]["chunks_per_s"], 3),
        "ingest_incremental_chunks_per_s": round(
            p["ingest_incremental"]["chunks_per_s"] / s["ingest_incremental"]["chunks_per_s"], 3),
        **{f"{k}_{q}": round(p[k][f"{q}_ms"] / s[k][f"{q}_ms"], 3)
           for k in ("keyword", "keyword_lang_filter", "vector", "end_to_end") for q in ("p50", "p95")},
        "size_bytes": round(p["size_bytes"] / s["size_bytes"], 3),
    }
    return result


def machine(pg_dsn: str) -> dict:
    import psycopg

    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        pg_version = conn.execute("SHOW server_version").fetchone()[0]
        pgv = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
        settings = dict(conn.execute(
            "SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name = ANY(%s)",
            (["shared_buffers", "work_mem", "maintenance_work_mem", "synchronous_commit", "fsync",
              "max_parallel_workers_per_gather", "effective_cache_size"],)).fetchall())
    from chaja.stores import postgres as pgmod

    return {
        **describe(), "memory_gib": mem, "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version, "psycopg": psycopg.__version__,
        "postgresql": pg_version, "pgvector": pgv[0] if pgv else None, "postgresql_settings": settings,
        "hnsw": {"m": pgmod.HNSW_M, "ef_construction": pgmod.HNSW_EF_CONSTRUCTION,
                 "ef_search": f"max({pgmod.HNSW_EF_SEARCH_MIN}, {pgmod.HNSW_EF_SEARCH_FACTOR}n) = "
                              f"{max(pgmod.HNSW_EF_SEARCH_MIN, pgmod.HNSW_EF_SEARCH_FACTOR * N_CANDIDATES)}"},
        "loadavg_at_start": list(os.getloadavg()),
    }


@contextlib.contextmanager
def postgres_and_folder(dsn: str | None):
    """(a PostgreSQL URL, a scratch folder): ``dsn`` if given, else a local server started
    with pgserver in the folder; the PostgreSQL readers' keyword cache goes there too, and
    both are removed afterwards."""
    work = Path(tempfile.mkdtemp(prefix="chaja-bench-"))
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    server = None
    try:
        if not dsn:
            import pgserver

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                server = pgserver.get_server(work / "pgdata", cleanup_mode="delete")
            dsn = server.get_uri()
        yield dsn, work
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--incremental", type=int, default=1000,
                    help="chunks added one document at a time after the bulk load")
    ap.add_argument("--pg-dsn", help="an existing PostgreSQL with pgvector (default: start one with pgserver)")
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "stores.json")
    ap.add_argument("--maintenance-work-mem", default="1GB",
                    help="PostgreSQL's memory for the HNSW build (a million 384-d vectors need about 2GB to build in memory)")
    args = ap.parse_args(argv)

    with postgres_and_folder(args.pg_dsn) as (dsn, work):
        started = time.perf_counter()
        out = {"benchmark": "stores", "description": __doc__.strip().split("\n\n")[1].replace("\n", " "),
               "settings": {"dim": DIM, "chunks_per_document": CHUNKS_PER_DOC, "candidates_per_path": N_CANDIDATES,
                            "top_k": TOP_K, "rrf_k": RRF_K, "korean_share": KO_SHARE,
                            "postgres_server": "external" if args.pg_dsn else "pgserver (local, Unix socket)",
                            "maintenance_work_mem": args.maintenance_work_mem},
               "machine": machine(dsn), "runs": []}
        for n in args.sizes:
            out["runs"].append(run_size(n, args.queries, args.incremental, work, dsn, args.maintenance_work_mem))
        out["machine"]["loadavg_at_end"] = list(os.getloadavg())
        import psycopg

        with psycopg.connect(dsn, autocommit=True) as conn:  # the extension exists by now
            row = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
            out["machine"]["pgvector"] = row[0] if row else None
        out["total_seconds"] = round(time.perf_counter() - started, 1)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(json.dumps(out["runs"], indent=2))
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
