"""The whole ``chaja index`` command on a small store against the encoders' own time.

    python benchmarks/bench_index_command.py [--paragraphs 150] [--runs 3] [--baseline SRC]

Two small stores, written as text files from the public sets: ``korquad`` (the first
``--paragraphs`` KorQuAD paragraphs, one language) and ``mixed`` (half as many KorQuAD
paragraphs and SciFact abstracts, two languages). Each run indexes each into a fresh store
with ``chaja index`` in a new process (start-up, reading, chunking, encoding, writing,
statistics, lexicon, compaction: what a user waits for), then, in one process with the
encoders loaded, times encoding exactly what that store asked of them: every chunk's
passage and section name with e5, and with the aligned encoder where the store holds its
vectors. Reported per store: medians, and the command's time over the encoders'.
``--baseline SRC`` also times the command with another checkout's ``src`` first on
``PYTHONPATH`` (an earlier version), interleaved. Results go to
``benchmarks/results/index-command.json`` and ``.md`` with the machine.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from machine import describe  # noqa: E402


def write_corpus(folder: Path, docs: list[tuple[str, str, str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i, (title, text, _) in enumerate(docs):
        (folder / f"{i:04d}.txt").write_text(f"{title}\n\n{text}\n", encoding="utf-8")


def corpora(data: Path, n: int) -> dict[str, list[tuple[str, str, str]]]:
    from chaja.eval.beir import load_beir
    from chaja.eval.squad import load_squad

    kq = load_squad(data / "korquad-v1-dev" / "KorQuAD_v1.0_dev.json").documents
    sf = load_beir(data / "scifact").documents
    ko = [(d.title, "\n".join(s.text for s in d.sections), "ko") for d in kq]
    en = [(d.title, "\n".join(s.text for s in d.sections), "en") for d in sf]
    return {"korquad": ko[:n], "mixed": [x for pair in zip(ko[:n // 2], en[:n // 2]) for x in pair]}


def index_once(folder: Path, store: Path, env: dict | None) -> float:
    for old in store.parent.glob(f"{store.name}*"):
        old.unlink()
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "chaja.cli", "index", str(folder), "--store", str(store), "--quiet"],
                   check=True, capture_output=True, env=env)
    return time.perf_counter() - t


def encoders_time(store: Path) -> tuple[float, dict]:
    """Seconds to encode what ``store`` holds vectors of, with both encoders already loaded."""
    import chaja
    from chaja.config import Config

    with chaja.open(store, Config()) as idx:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        has_aligned = db.execute("SELECT COUNT(*) FROM chunks WHERE aligned_vector IS NOT NULL").fetchone()[0]
        ids = [r[0] for r in db.execute("SELECT id FROM chunks ORDER BY rowid")]
        db.close()
        chunks = list(idx.store.chunks(ids).values())
        passages = [c.passage_text() for c in chunks]
        headings = sorted({h for c in chunks if (h := c.heading_passage())})
        names = sorted({n for c in chunks if (n := c.aligned_name())})
        e5, aligned = idx.encoder, idx.aligned_encoder
        e5.encode_passages(["warm up"])
        if has_aligned and aligned is not None:
            aligned.encode_passages(["warm up"])
        t = time.perf_counter()
        for at in range(0, len(passages), 64):
            e5.encode_passages(passages[at:at + 64])
        if headings:
            e5.encode_passages(headings)
        if has_aligned and aligned is not None:
            for at in range(0, len(passages), 64):
                aligned.encode_passages(passages[at:at + 64])
            if names:
                aligned.encode_passages(names)
        took = time.perf_counter() - t
    return took, {"chunks": len(chunks), "aligned": bool(has_aligned), "headings": len(headings)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("CHAJA_DATA_DIR", REPO.parent / "shared" / "data")))
    ap.add_argument("--paragraphs", type=int, default=150)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline", type=Path, help="another checkout's src folder, timed beside this one")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "index-command.json")
    args = ap.parse_args()
    if not (args.data / "korquad-v1-dev").is_dir() or not (args.data / "scifact").is_dir():
        print(f"KorQuAD and SciFact are not in {args.data}; pass --data", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="chaja-index-command-"))
    versions = {"this version": None}
    if args.baseline is not None:
        versions["baseline"] = {**os.environ, "PYTHONPATH": str(args.baseline.resolve())}
    try:
        sets = corpora(args.data, args.paragraphs)
        for name, docs in sets.items():
            write_corpus(work / name, docs)
        results: dict = {"machine": describe(), "paragraphs": args.paragraphs, "runs": args.runs,
                         "baseline": str(args.baseline) if args.baseline else None, "stores": {}}
        for name in sets:
            index_once(work / name, work / f"{name}-warm.chaja", None)     # the model caches built, not timed
            took = {v: [] for v in versions}
            enc = []
            for _ in range(args.runs):
                for version, env in versions.items():
                    store = work / f"{name}-{version.split()[0]}.chaja"
                    took[version].append(index_once(work / name, store, env))
                    if env is None:
                        seconds, what = encoders_time(store)
                        enc.append(seconds)
            row = {"what": what, "encoders_s": statistics.median(enc),
                   "index_s": {v: statistics.median(t) for v, t in took.items()}, "all_index_s": took}
            row["ratio"] = {v: s / row["encoders_s"] for v, s in row["index_s"].items()}
            results["stores"][name] = row
            print(name, json.dumps({k: row[k] for k in ("what", "encoders_s", "index_s", "ratio")}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    m = results["machine"]
    lines = ["# `chaja index` on a small store against the encoders' own time", "",
             f"Machine: {m['cpu']}, {m['cores']} cores. {args.paragraphs} paragraphs a store, {args.runs} runs, "
             "medians; the encoders' time is encoding exactly what the store holds vectors of, models loaded.", "",
             "| store | chunks | aligned vectors | encoders s | " + " | ".join(f"index {v} s (ratio)" for v in versions)
             + " |", "|---|---|---|---|" + "---|" * len(versions)]
    for name, row in results["stores"].items():
        lines.append(f"| {name} | {row['what']['chunks']} | {'yes' if row['what']['aligned'] else 'no'} | "
                     f"{row['encoders_s']:.2f} | " + " | ".join(f"{row['index_s'][v]:.2f} ({row['ratio'][v]:.2f}×)"
                                                               for v in versions) + " |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
