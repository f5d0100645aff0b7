"""What else a large field's vectors could be kept as: recall@10 and time of each form
against the store's exact search, with the bytes each form keeps a vector.

    python benchmarks/bench_peers.py --size 100000     # builds runs/peers/100000/chaja
    python benchmarks/bench_vector_forms.py --sizes 100000 1000000 [--pca 192]

On the chunk field of each store ``bench_peers.py`` built (its 200 questions, their e5
vectors as given, no language projection), side by side:

- **graph + int8 file** (today): the store's own vector search, an HNSW walk over the
  graph's int8 copy of each row, its candidates rescored from the int8 file
  (one scale a dimension); bytes: the graph file and the vector file;
- **graph copy alone**: the graph's own copy of each row (usearch's int8: ``round(127 ·
  x/|x|)`` of the lifted row) as the only vectors, every row ranked by it (the best any
  walk over it could give, a walk's misses not counted); bytes: the graph file;
- **binary first pass**: one bit a dimension (the sign of ``v − μ``, μ the field's mean),
  every row's Hamming distance to the query's bits (``q − μ``), the best ``K`` rescored from
  the int8 file; bytes: the bits and the int8 file;
- **graph over PCA** (``--pca d``): a graph over the rows' first ``d`` principal
  components (uncentred), its 256 best rescored from the int8 file; bytes: that graph
  and the int8 file. Builds a graph: minutes at 100,000 rows.

The reference is the store's exact search: every row of the int8 file scored. Results:
``benchmarks/results/vector-forms.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import line, write_results  # noqa: E402
import peer_systems  # noqa: E402

K = 10
BINARY_CANDIDATES = (512, 2048)
#: the walk width of a PCA graph, as the store's graphs (sqlite_ann.EXPANSION_SEARCH)
PCA_WALK = 256


def best_rows(floats: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Each query's ``K`` best rows by ``floats @ q``, best first (queries in blocks)."""
    out = []
    for at in range(0, queries.shape[0], 50):
        scores = floats @ queries[at:at + 50].T
        top = np.argpartition(-scores, K, axis=0)[:K]
        order = np.argsort(-np.take_along_axis(scores, top, axis=0), axis=0, kind="stable")
        out.append(np.take_along_axis(top, order, axis=0).T)
    return np.concatenate(out)


def recall(found: list[np.ndarray], reference: np.ndarray) -> float:
    return float(np.mean([len(set(f.tolist()) & set(r.tolist())) / K for f, r in zip(found, reference)]))


def timed(search, queries: np.ndarray) -> tuple[list[np.ndarray], float]:
    """Each query's top rows by ``search``, and the median milliseconds a query."""
    search(queries[0])
    found, ms = [], []
    for q in queries:
        t = time.perf_counter()
        found.append(search(q))
        ms.append((time.perf_counter() - t) * 1000)
    return found, statistics.median(ms)


def rescored(rows: np.ndarray, matrix, q: np.ndarray) -> np.ndarray:
    """The best ``K`` of ``rows`` by the int8 file's scores."""
    scores = np.asarray(matrix[np.sort(rows)], np.float32) @ q
    return np.sort(rows)[np.argsort(-scores, kind="stable")[:K]]


def graph_copy(floats: np.ndarray) -> np.ndarray:
    """The rows as a usearch int8 graph over lifted rows keeps them, back as floats."""
    from chaja.stores.sqlite_ann import lifted

    out = np.empty_like(floats)
    for at in range(0, floats.shape[0], 65_536):
        lift = lifted(floats[at:at + 65_536])
        norm = np.linalg.norm(lift, axis=1, keepdims=True)
        codes = np.clip(np.rint(127 * lift / norm), -127, 127)
        out[at:at + 65_536] = codes[:, :-1] / 127 * norm
    return out


def binary_form(floats: np.ndarray, matrix, queries: np.ndarray) -> dict:
    mean = floats.mean(axis=0)
    bits = np.packbits(floats > mean, axis=1)
    words = bits.view(np.uint64) if bits.shape[1] % 8 == 0 else bits
    out = {"bytes_per_vector": bits.shape[1]}
    for k in BINARY_CANDIDATES:
        def search(q, k=k):
            qb = np.packbits(q > mean).view(words.dtype)
            distance = np.bitwise_count(words ^ qb).sum(axis=1, dtype=np.int32)
            return rescored(np.argpartition(distance, k)[:k], matrix, q)
        out[str(k)] = timed(search, queries)
    return out


def pca_form(floats: np.ndarray, matrix, queries: np.ndarray, dim: int) -> dict:
    from chaja.stores import sqlite_ann

    sample = floats[np.random.default_rng(0).choice(floats.shape[0], min(floats.shape[0], 50_000), replace=False)]
    basis = np.linalg.svd(sample, full_matrices=False)[2][:dim]
    index = sqlite_ann.usearch_module().Index(
        ndim=dim + 1, metric="ip", dtype=sqlite_ann.DTYPE, connectivity=sqlite_ann.CONNECTIVITY,
        expansion_add=sqlite_ann.EXPANSION_ADD, expansion_search=PCA_WALK)
    t = time.perf_counter()
    index.add(np.arange(floats.shape[0], dtype=np.uint64), sqlite_ann.lifted(floats @ basis.T))
    built = time.perf_counter() - t

    def search(q):
        walk = np.append(basis @ q, np.float32(0.0)).astype(np.float32)
        return rescored(np.asarray(index.search(walk, PCA_WALK).keys, np.int64), matrix, q)
    found, ms = timed(search, queries)
    with tempfile.TemporaryDirectory() as tmp:
        index.save(str(Path(tmp) / "pca.hnsw"))
        size = (Path(tmp) / "pca.hnsw").stat().st_size
    return {"dim": dim, "build_s": built, "graph_bytes": size, "found": found, "ms": ms}


def measure(folder: Path, questions: list[dict], pca: int | None) -> dict:
    from chaja.stores import sqlite_ann
    from chaja.stores.sqlite import SqliteStore

    store = SqliteStore(folder / "peers.chaja")
    matrix, ids, _ = store._vectors("chunk")
    rows = matrix.shape[0]
    graph = sqlite_ann.graph_path(folder / "peers.chaja", "chunk")
    if not graph.exists():          # below the store's ANN threshold: searched exactly, nothing to compare
        store.close()
        print(f"  {folder}: the chunk field has no graph ({rows:,} rows); skipped", flush=True)
        return {"rows": rows, "dim": int(matrix.shape[1]), "forms": {}}
    floats = np.asarray(matrix, np.float32)
    queries = np.array([q["vector"] for q in questions], np.float32)
    reference = best_rows(floats, queries)
    vector_file = sum(p.stat().st_size for p in folder.glob("peers.chaja-chunk.*.vectors"))
    graph_file = graph.stat().st_size
    row_of = {cid: i for i, cid in enumerate(ids)}

    def today(q):
        return np.array([row_of[h.chunk_id] for h in store.vector(q, K)], np.int64)
    found, ms = timed(today, queries)
    forms = {"graph + int8 file": {"recall": recall(found, reference), "p50_ms": ms,
                                   "bytes_per_vector": (graph_file + vector_file) / rows}}
    copy = graph_copy(floats)
    forms["graph copy alone"] = {"recall": recall(list(best_rows(copy, queries)), reference), "p50_ms": None,
                                 "bytes_per_vector": graph_file / rows}
    del copy
    binary = binary_form(floats, matrix, queries)
    for k in BINARY_CANDIDATES:
        found, ms = binary[str(k)]
        forms[f"binary first pass, {k:,} rescored"] = {
            "recall": recall(found, reference), "p50_ms": ms,
            "bytes_per_vector": binary["bytes_per_vector"] + vector_file / rows}
    if pca:
        p = pca_form(floats, matrix, queries, pca)
        forms[f"graph over {pca} principal components"] = {
            "recall": recall(p["found"], reference), "p50_ms": p["ms"], "build_s": p["build_s"],
            "bytes_per_vector": p["graph_bytes"] / rows + vector_file / rows}
    store.close()
    return {"rows": rows, "dim": int(floats.shape[1]), "forms": forms}


def render(report: dict) -> str:
    m = report["machine"]
    lines = ["# What a large field's vectors could be kept as", "",
             f"The chunk field of the peers stores, {report['queries']} questions (e5 vectors as given); "
             f"recall@10 against the store's exact search (every row of the int8 file scored), median ms a "
             f"query, bytes kept a vector. Machine: {line(m)}.", ""]
    for size, r in report["sizes"].items():
        lines += [f"## {int(size):,} chunks ({r['rows']:,} rows of {r['dim']} dimensions)", "",
                  "| form | recall@10 | p50 ms | bytes a vector |", "|---|---|---|---|"]
        if not r["forms"]:
            lines[-2:] = ["No graph at this size (the field is searched exactly): nothing to compare."]
        for name, f in r["forms"].items():
            ms = "—" if f["p50_ms"] is None else f"{f['p50_ms']:.2f}"
            lines.append(f"| {name} | {f['recall']:.3f} | {ms} | {f['bytes_per_vector']:,.0f} |")
        lines.append("")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--pca", type=int, default=0, help="also a graph over this many principal components")
    ap.add_argument("--work", type=Path, default=HERE.parent / "runs" / "peers")
    args = ap.parse_args()
    report = peer_systems.measured_stores(args.work, args.sizes, args.queries,
                                          lambda folder, questions: measure(folder, questions, args.pca or None))
    if report is None:
        return 1
    write_results("vector-forms", report, render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
