"""One large text file indexed two ways: staged a batch at a time (the default) and in
one transaction (the way before staging), side by side, at two sizes.

Each run is a fresh process that indexes one generated ``.txt`` (Korean and English
paragraphs) into a new store with the real encoders and reports its peak resident
memory (``ru_maxrss``) and its time. "one transaction" is the same code with the
store's staging methods taken away, so the ingest falls back to holding the whole
document's records before its one write. Staging should keep the peak flat as the
file grows; the one-transaction peak grows with the file.

    python benchmarks/bench_large_document.py                 # 0.4 and 1.2 MB
    python benchmarks/bench_large_document.py --sizes 0.2,0.6

Results: ``benchmarks/results/large-document.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, line  # noqa: E402

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, resource, sys, time
import chaja
from chaja.stores.sqlite import SqliteStore
path, store, mode = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "one transaction":
    for name in ("stage_chunks", "resume_staged", "put_staged"):
        delattr(SqliteStore, name)
t = time.perf_counter()
with chaja.open(store) as idx:
    report = idx.add([path])
    chunks = idx.store.stats().chunks
print(json.dumps({"seconds": round(time.perf_counter() - t, 1), "chunks": chunks,
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""

WORDS = ("보증 기간 배수 펌프 필터 청소 전원 전구 교체 점검 기록 자기주식 소각 결정 공시 "
         "warranty drain pump filter bulb power inspection record buyback cancellation filing").split()


def write_text(path: Path, megabytes: float, seed: int = 7) -> int:
    rng = random.Random(seed)
    target = int(megabytes * 1_000_000)
    parts, size = [], 0
    while size < target:
        para = " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 120))) + "."
        parts.append(para)
        size += len(para.encode("utf-8")) + 2
    path.write_text("\n\n".join(parts), encoding="utf-8")
    return path.stat().st_size


def run(path: Path, mode: str, folder: Path) -> dict:
    store = folder / f"{mode.replace(' ', '-')}-{path.stem}.chaja"
    done = subprocess.run([sys.executable, "-c", CHILD, str(path), str(store), mode],
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise SystemExit(f"{mode} on {path.name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def markdown(out: dict) -> str:
    lines = ["# One large document: staged against one transaction", "",
             f"Machine: {line(out['machine'], python=True)}. Each run is a fresh process indexing one generated .txt "
             "into a new store with the real encoders (int8 e5 and the aligned encoder); peak resident memory of that "
             "process (`ru_maxrss`), models included.", "",
             "| file | chunks | mode | peak memory MB | seconds |", "|---|---|---|---|---|"]
    for r in out["runs"]:
        lines.append(f"| {r['megabytes']:.1f} MB | {r['chunks']} | {r['mode']} | {r['peak_rss_mb']} | {r['seconds']} |")
    lines += ["", "Growth of the peak from the smaller file to the larger one: "
              + ", ".join(f"{m} +{g} MB" for m, g in out["growth_mb"].items()) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0.4,1.2", help="file sizes in MB, comma-separated")
    ap.add_argument("--out", default=str(HERE / "results" / "large-document.json"))
    args = ap.parse_args(argv)
    sizes = [float(s) for s in args.sizes.split(",")]
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for mb in sizes:
            src = folder / f"log-{mb:g}mb"
            src.mkdir()
            write_text(src / "log.txt", mb)
            for mode in ("staged", "one transaction"):      # one at a time: two cores
                got = run(src / "log.txt", mode, folder)
                runs.append({"megabytes": mb, "mode": mode, **got})
                print(f"{mb:g} MB, {mode}: {got['chunks']} chunks, peak {got['peak_rss_mb']} MB, "
                      f"{got['seconds']} s", flush=True)
    growth = {}
    for mode in ("staged", "one transaction"):
        peaks = [r["peak_rss_mb"] for r in runs if r["mode"] == mode]
        growth[mode] = round(peaks[-1] - peaks[0], 1)
    out = {"machine": describe(), "sizes_mb": sizes, "runs": runs, "growth_mb": growth}
    Path(args.out).write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    Path(args.out).with_suffix(".md").write_text(markdown(out), encoding="utf-8")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
