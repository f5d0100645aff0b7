"""What one-byte term frequencies cost and save the keyword lists (chaja.stores.tf_codes).

    python benchmarks/bench_peers.py --size 100000 --systems chaja   # builds runs/peers/100000/chaja
    python benchmarks/bench_tf_codes.py --sizes 100000 1000000 [--rounds 5]

For each store bench_peers builds, its keyword file is read once and held two ways in one
process: as written (each posting's frequencies one code, mapped from the file) and with the
frequencies decoded into the ``uint16 [postings, 3]`` array the file kept before. The 200
peer questions' keyword lists (their terms, the 60 best rows, title and heading weights as a
search gives them) run on both, alternating per question, ``--rounds`` times: per question the
median of each, their ratio and whether the two lists are the same (rows, scores to the last
bit, order). Also the file's bytes in both forms (the old one as the 16-bit arrays would take
them). Results: ``benchmarks/results/tf-codes.json`` and ``.md``.
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
from machine import describe, line, write_results  # noqa: E402

REPO = HERE.parent
N = 60
WEIGHTS = {"title_weight": 2.0, "heading_weight": 1.5}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def paired_lists(coded, plain, queries: list[dict], rounds: int) -> dict:
    """The peer questions' keyword lists on two keyword segments that must give the same lists
    (one keeping postings coded, one plain), alternating per question, ``rounds`` times: per
    question the median of each; their medians, p95s and paired ratio, in ms, and the share of
    lists that came out the same."""
    from chaja.stores.bm25_segments import SegmentedBM25

    bm25 = (SegmentedBM25.of(coded), SegmentedBM25.of(plain))
    tokens = [SegmentedBM25.query_tokens(q["terms"]) for q in queries]
    tokens = [t for t in tokens if t]
    for t in tokens:                                   # warm-up: pages in, slots found
        for b in bm25:
            b.search(t, N, **WEIGHTS)
    times: tuple[list, list] = ([[] for _ in tokens], [[] for _ in tokens])
    same = 0
    for r in range(rounds):
        for i, t in enumerate(tokens):
            got = [None, None]
            for k in ((0, 1) if (i + r) % 2 == 0 else (1, 0)):
                t0 = time.perf_counter()
                got[k] = bm25[k].search(t, N, **WEIGHTS)
                times[k][i].append(time.perf_counter() - t0)
            same += got[0] == got[1]
    coded_ms, plain_ms = ([1000 * statistics.median(x) for x in per] for per in times)
    return {"questions": len(tokens), "rounds": rounds, "same_lists": same / (rounds * len(tokens)),
            "coded_p50_ms": statistics.median(coded_ms), "coded_p95_ms": pct(coded_ms, 0.95),
            "plain_p50_ms": statistics.median(plain_ms), "plain_p95_ms": pct(plain_ms, 0.95),
            "ratio_median": statistics.median(c / p for c, p in zip(coded_ms, plain_ms))}


def timing_cells(r: dict) -> str:
    """The table's timing columns of one store's result (:func:`paired_lists`)."""
    return (f"{r['plain_p50_ms']:.2f} / {r['plain_p95_ms']:.2f} | {r['coded_p50_ms']:.2f} / "
            f"{r['coded_p95_ms']:.2f} | {r['ratio_median']:.3f} | {r['same_lists']:.3f} |")


def measure(path: Path, queries: list[dict], rounds: int) -> dict:
    from dataclasses import replace

    from chaja.stores import postings

    coded_seg = postings.load(path)
    tf = coded_seg.tf
    plain_seg = replace(coded_seg, tf=np.asarray(tf), _slots={}, scratch=[])
    postings_n = int(coded_seg.rows.shape[0])
    return {
        "chunks": coded_seg.n_rows, "postings": postings_n, "spilled_postings": int(len(tf.spill_at)),
        "file_mb": path.stat().st_size / 1e6,
        "file_mb_with_16_bit_frequencies": (path.stat().st_size - tf.codes.nbytes - tf.spill_at.nbytes
                                            - tf.spill.nbytes + postings_n * 6) / 1e6,
        **paired_lists(coded_seg, plain_seg, queries, rounds),
    }


def table(report: dict, title: str, held: str, kept: str, extra: str, cells) -> str:
    """The results page: ``held`` says how each keyword file was held, ``kept`` names the plain
    form in the headers, ``extra`` the second column; ``cells(r)`` gives a row's first cells."""
    m = report["machine"]
    lines = [f"# {title}: the keyword file and the keyword lists", "",
             f"Machine: {line(m)}. Per store: its keyword file held "
             f"{held}, in one process; the peer questions' keyword lists ({N} rows, title 2.0, heading 1.5) "
             f"alternating per question, {report['rounds']} rounds, ms per list (median over questions of each "
             "one's median).", "",
             f"| chunks | {extra} | file MB: {kept} → coded | p50 / p95 ms: {kept} | p50 / p95 ms: coded "
             "| paired ratio, median | same lists |", "|---|---|---|---|---|---|---|"]
    lines += [f"| {int(size):,} | {cells(r)} | " + timing_cells(r) for size, r in report["sizes"].items()]
    return "\n".join(lines) + "\n"


def render(report: dict) -> str:
    return table(report, "One-byte term frequencies",
                 "as written (one code a posting) and decoded into the 16-bit array it kept before", "16-bit",
                 "postings (spilled)", lambda r: f"{r['postings']:,} ({r['spilled_postings']:,}) | "
                 f"{r['file_mb_with_16_bit_frequencies']:,.1f} → {r['file_mb']:,.1f}")


def main(measure=measure, render=render, out: str = "tf-codes", doc: str = __doc__) -> int:
    """Measure each size's keyword file with ``measure`` (also bench_row_codes's)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--sizes", nargs="+", type=int, default=[100_000])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--work", type=Path, default=REPO / "runs" / "peers")
    ap.add_argument("--queries", type=Path, default=REPO / "runs" / "peers" / "queries-200.json")
    ap.add_argument("--out", default=out)
    args = ap.parse_args()
    queries = json.loads(args.queries.read_text())
    report = {"machine": describe(), "rounds": args.rounds, "sizes": {}}
    for size in args.sizes:
        path = args.work / str(size) / "chaja" / "peers.chaja-keywords"
        if not path.exists():
            print(f"no keyword file at {path}: build the store with bench_peers.py --size {size} first",
                  file=sys.stderr)
            return 2
        report["sizes"][str(size)] = measure(path, queries, args.rounds)
        print(json.dumps(report["sizes"][str(size)]), flush=True)
    write_results(args.out, report, render(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
