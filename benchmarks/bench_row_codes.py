"""What two-byte posting rows cost and save the keyword lists (chaja.stores.row_codes).

    python benchmarks/bench_peers.py --size 100000 --systems chaja   # builds runs/peers/100000/chaja
    python benchmarks/bench_row_codes.py --sizes 100000 1000000 [--rounds 5]

For each store bench_peers builds, its keyword file is read once and held two ways in one
process: with each posting's row as an ``int32`` (the layout before) and coded (``uint16`` low
halves and runs of a common high half). The 200 peer questions' keyword lists (their terms,
the 60 best rows, title and heading weights as a search gives them) run on both, alternating
per question, ``--rounds`` times: per question the median of each, their ratio and whether the
two lists are the same. Also the file's bytes both ways, each as written. Results:
``benchmarks/results/row-codes.json`` and ``.md``.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import bench_tf_codes  # noqa: E402
from bench_tf_codes import paired_lists  # noqa: E402


def measure(path: Path, queries: list[dict], rounds: int) -> dict:
    from dataclasses import replace

    from chaja.stores import array_file, postings
    from chaja.stores.row_codes import CodedRows, DecodedMemo

    mapped = postings.load(path)
    rows = np.asarray(mapped.rows).astype(np.int32)
    coded_rows = mapped.rows if isinstance(mapped.rows, CodedRows) else CodedRows.encode(rows)
    plain_seg = replace(mapped, rows=rows, _slots={}, scratch=[])
    # (no decoded rows kept between searches: each list pays its decoding, as a search's first read does)
    coded_seg = replace(mapped, rows=coded_rows, _slots={}, scratch=[], _decoded=DecodedMemo(0))
    with tempfile.TemporaryDirectory() as tmp:
        coded_file = Path(tmp) / "coded"
        postings.save(coded_seg, coded_file, mapped.header)
        coded_mb = coded_file.stat().st_size / 1e6
        arrays, meta = array_file.load(coded_file, postings.MAGIC)
        for name in ("row_low", "row_run_start", "row_run_high"):
            del arrays[name]
        arrays["rows"] = rows
        array_file.save(Path(tmp) / "plain", postings.MAGIC_PLAIN_ROWS, arrays, meta)
        plain_mb = (Path(tmp) / "plain").stat().st_size / 1e6
    return {
        "chunks": mapped.n_rows, "postings": int(rows.size), "runs": int(coded_rows.run_start.size),
        "file_mb_plain_rows": plain_mb, "file_mb_coded_rows": coded_mb,
        **paired_lists(coded_seg, plain_seg, queries, rounds),
    }


def render(report: dict) -> str:
    return bench_tf_codes.table(
        report, "Two-byte posting rows",
        "with int32 rows and with coded rows (uint16 low halves, runs of a common high half)", "int32 rows",
        "postings (runs)", lambda r: f"{r['postings']:,} ({r['runs']:,}) | "
        f"{r['file_mb_plain_rows']:,.1f} → {r['file_mb_coded_rows']:,.1f}")


if __name__ == "__main__":
    sys.exit(bench_tf_codes.main(measure, render, "row-codes", __doc__))
