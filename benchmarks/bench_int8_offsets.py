"""int8 codes with a per-dimension offset against symmetric ones: how much of an exact
search's top 10 the codes keep.

The vectors are the peer corpus's (``peer_corpus.py``: the e5 passage vectors and the
aligned encoder's passage vectors of the quality stores, with near-copies beyond the
pool's 13,495 chunks), the queries the peers benchmark's 200 (KorQuAD questions and
SciFact claims). For each size and field:

- ``float32``: the exact top 10 (the reference);
- ``symmetric``: codes ``round(v / s)``, ``s_d = max |V_id| / 127`` (chaja before the offsets);
- ``centred``: codes ``round((v − o) / s)`` over each dimension's own range
  (:class:`chaja.stores.quantized.ScaledInt8` today);
- ``... grown``: the same codes built as a store that grows does, 1,000 rows at a time
  (each batch appended to the codes, widening their ranges when it must; the symmetric
  rows rebuild the old widening, scales only), at the first size only.

Recall@10 is the share of the float32 top 10 that the codes' exact top 10 holds, a mean
over the queries; the score error the RMS of the codes' score against float32's over each
query's exact top 100; the step is the median of the dimensions' scales against the
symmetric codes'. No timing: any machine gives the same numbers.

    python benchmarks/bench_int8_offsets.py [--sizes 100000 1000000]
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import peer_corpus  # noqa: E402
from machine import describe, write_results  # noqa: E402

from chaja.stores import quantized  # noqa: E402
from chaja.stores.quantized import LEVELS, ScaledInt8  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
FIELDS = {"vector": "e5 passages (384-d)", "aligned_vector": "aligned passages (512-d)"}
BATCH = 1_000


def symmetric(matrix: np.ndarray, scales: np.ndarray | None = None) -> ScaledInt8:
    if scales is None:
        scales = np.maximum(np.abs(matrix).max(axis=0) / LEVELS, quantized.TINY).astype(np.float32)
    codes = np.clip(np.rint(matrix / scales), -LEVELS, LEVELS).astype(np.int8)
    return ScaledInt8(codes, scales)


def symmetric_grown(matrix: np.ndarray) -> ScaledInt8:
    """The symmetric codes as a growing store kept them: scales widened to each batch's
    largest |v|, the codes held rounded again to them."""
    m = symmetric(matrix[:BATCH])
    for at in range(BATCH, matrix.shape[0], BATCH):
        rows = matrix[at:at + BATCH]
        scales = np.maximum(m.scales, np.abs(rows).max(axis=0) / LEVELS).astype(np.float32)
        held = m.codes if np.array_equal(scales, m.scales) else symmetric(np.asarray(m), scales).codes
        m = ScaledInt8(np.concatenate([held, symmetric(rows, scales).codes]), scales)
    return m


def centred_grown(matrix: np.ndarray) -> ScaledInt8:
    m = ScaledInt8.quantize(matrix[:BATCH])
    for at in range(BATCH, matrix.shape[0], BATCH):
        m = quantized.append(m, matrix[at:at + BATCH])
    return m


def field_matrix(pool: list[dict], size: int, field: str) -> np.ndarray:
    """The ``field`` vectors of the corpus's first ``size`` chunks (those that have one),
    one chunk at a time: a million chunks' four fields at once would take 7 GB."""
    rows = (peer_corpus.chunk_at(pool, i)[field] for i in range(size))
    return np.stack([v for v in rows if v is not None]).astype(np.float32)


def top10(queries: np.ndarray, matrix) -> np.ndarray:
    scores = np.empty((queries.shape[0], len(matrix)), np.float32)
    for at in range(0, len(matrix), 100_000):
        part = np.asarray(matrix[at:at + 100_000], dtype=np.float32)
        scores[:, at:at + part.shape[0]] = queries @ part.T
    return np.argpartition(-scores, 10, axis=1)[:, :10]


def score_error(queries: np.ndarray, matrix: np.ndarray, codes: ScaledInt8) -> float:
    """Root mean square of a score's error (codes against float32) over each query's exact
    top 100: the error where it decides a top 10, a finer measure than recall."""
    errors = []
    for q in queries:
        near = np.argpartition(-(matrix @ q), 100)[:100]
        errors.append(codes[near] @ q - matrix[near] @ q)
    return float(np.sqrt(np.mean(np.square(errors))))


def recall(found: np.ndarray, exact: np.ndarray) -> float:
    return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(found.tolist(), exact.tolist())]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[100_000, 1_000_000])
    ap.add_argument("--sources", nargs="+", type=Path,
                    default=[REPO / "runs" / "quality" / f"{s}.chaja" for s in ("korquad", "scifact", "react")])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("CHAJA_DATA_DIR", REPO.parent / "shared" / "data")))
    ap.add_argument("--queries", type=Path, default=REPO / "runs" / "peers" / "queries-200.json")
    args = ap.parse_args()
    missing = [s for s in args.sources if not s.exists()]
    if missing:
        print(f"skipped: {', '.join(map(str, missing))} missing (benchmarks/bench_quality.py builds them)")
        return 0
    queries = peer_corpus.encoded_queries(args.data, 200, args.queries)
    pool = peer_corpus.read_pool(args.sources)
    report = {"machine": describe(), "queries": len(queries), "batch": BATCH, "sizes": {}}
    for n, size in enumerate(args.sizes):
        row = report["sizes"][str(size)] = {}
        for field in FIELDS:
            matrix = field_matrix(pool, size, field)
            q = np.array([x["aligned_vector" if field.startswith("aligned") else "vector"] for x in queries],
                         np.float32)
            exact = top10(q, matrix)
            sym, cen = symmetric(matrix), ScaledInt8.quantize(matrix)
            got = {"rows": int(matrix.shape[0]), "symmetric": recall(top10(q, sym), exact),
                   "centred": recall(top10(q, cen), exact),
                   "symmetric_rms": score_error(q, matrix, sym), "centred_rms": score_error(q, matrix, cen),
                   "median_step_ratio": float(np.median(cen.scales / sym.scales)),
                   "mean_norm": float(np.linalg.norm(matrix.mean(axis=0)))}
            if n == 0:
                got["symmetric_grown"] = recall(top10(q, symmetric_grown(matrix)), exact)
                got["centred_grown"] = recall(top10(q, centred_grown(matrix)), exact)
            row[field] = got
            print(size, field, got, file=sys.stderr, flush=True)
    write_results("int8-offsets", report, render(report))
    return 0


def render(r: dict) -> str:
    lines = ["# int8 codes: a per-dimension offset against symmetric codes", "",
             f"Recall@10 of an exact search of the codes against float32's, mean over {r['queries']} queries "
             "(KorQuAD questions, SciFact claims) on the peer corpus (`bench_int8_offsets.py`). "
             f"'grown': built {r['batch']:,} rows at a time, as a growing store widens its codes. "
             f"Machine: {r['machine']['cpu']} (the numbers do not depend on it).", "",
             "| chunks | field | mean vector's norm | centred step / symmetric (median) | symmetric | centred "
             "| symmetric, grown | centred, grown | score error (RMS), symmetric / centred |",
             "|---|---|---|---|---|---|---|---|---|"]
    for size, fields in r["sizes"].items():
        for field, g in fields.items():
            grown = (f"{g['symmetric_grown']:.4f} | {g['centred_grown']:.4f}" if "centred_grown" in g else "— | —")
            lines.append(f"| {int(size):,} | {FIELDS[field]} | {g['mean_norm']:.2f} | {g['median_step_ratio']:.2f} "
                         f"| {g['symmetric']:.4f} | **{g['centred']:.4f}** | {grown} "
                         f"| {g['symmetric_rms']:.5f} / {g['centred_rms']:.5f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
