"""A bulk load until searchable, this checkout beside another version, step by step.

    python benchmarks/bench_bulk_load.py --base HEAD~1 [--size 100000] [--rounds 2] [--out bulk-load]

Each round builds chaja's store of the peers benchmark's corpus (:mod:`peer_corpus`,
``--size`` chunks, vectors given: no encoding) twice, once with this checkout's ``src``
and once with ``--base``'s (a git ref, checked out into a temporary worktree), in
alternating order, each in a fresh process (``bench_peers.py``'s build worker, graphs
deferred as it builds them). Per version: the median over rounds of each step's seconds
(``rows_s``: the documents written; ``statistics_s``; ``keyword_index_s``: the
compaction that writes the postings and vector files; ``lexicon_s`` less its encoding),
chunks/s until searchable, the store's size on disk and the build's peak memory; and the
ratio of this checkout's seconds to the base's. Results: ``benchmarks/results/<out>.json``
and ``.md`` (``--out``, default ``bulk-load``).
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
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import describe, line, write_results  # noqa: E402

REPO = HERE.parent
STEPS = ("rows_s", "statistics_s", "keyword_index_s", "lexicon_s")
#: each step as the report names it
STEP_NAMES = {"rows_s": "rows", "statistics_s": "statistics", "keyword_index_s": "postings and vector files",
              "lexicon_s": "lexicon (its encoding left out)", "until_searchable_s": "until searchable"}


def build(src: Path, work: Path, size: int, sources: list[Path], queries: Path, encoder: str) -> dict:
    shutil.rmtree(work / str(size), ignore_errors=True)
    cmd = [sys.executable, str(HERE / "bench_peers.py"), "--worker", "chaja", "--build", "--size", str(size),
           "--work", str(work), "--queries-file", str(queries), "--encoder-name", encoder,
           "--sources", *map(str, sources)]
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(cmd, env=env, cwd=REPO, capture_output=True, text=True, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    got["lexicon_s"] = got.get("lexicon_s", 0.0) - got.get("lexicon_encoding_s", 0.0)
    return got


def copies(stores: list[Path], folder: Path) -> list[Path]:
    """Copies of the ``stores`` (each SQLite file with every file beside it named after it) in ``folder``."""
    folder.mkdir(parents=True)
    for store in stores:
        for f in store.parent.glob(store.name + "*"):
            shutil.copy2(f, folder / f.name)
    return [folder / s.name for s in stores]


def render(report: dict) -> str:
    m, v = report["machine"], report["versions"]
    lines = ["# A bulk load until searchable, step by step", "",
             f"Machine: {line(m)}. {report['size']:,} chunks of the "
             f"peers corpus, vectors given (no encoding), graphs deferred; {report['rounds']} round{'s' * (report['rounds'] != 1)}, the two "
             f"versions alternating, each build in a fresh process; medians. Base: `{report['base']}`.", "",
             "| | base | this checkout | ratio |", "|---|---|---|---|"]
    for key in (*STEPS, "until_searchable_s"):
        b, t = v["base"][key], v["this"][key]
        lines.append(f"| {STEP_NAMES[key]}, s | {b:.1f} | {t:.1f} | {t / b:.2f} |")
    for key, label in (("chunks_per_s", "chunks/s until searchable"), ("disk_mb", "on disk, MB"),
                       ("build_rss_mb", "peak memory, MB"),
                       ("helper_rss_mb", "peak memory of a process it started, MB")):
        b, t = v["base"][key], v["this"][key]
        lines.append(f"| {label} | {b:,.0f} | {t:,.0f} | {f'{t / b:.2f}' if b else '—'} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", required=True)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default="bulk-load", help="results name under results/ (default: bulk-load)")
    ap.add_argument("--work", type=Path, default=REPO / "runs" / "bulk-load")
    ap.add_argument("--queries", type=Path, default=REPO / "runs" / "peers" / "queries-200.json")
    ap.add_argument("--sources", nargs="+", type=Path,
                    default=[REPO / "runs" / "quality" / f"{s}.chaja" for s in ("korquad", "scifact", "react")])
    args = ap.parse_args()
    missing = [p for p in (args.queries, *args.sources) if not p.exists()]
    if missing:
        print(f"missing: {', '.join(map(str, missing))} (python benchmarks/bench_quality.py --sets "
              "korquad,scifact,react, then benchmarks/bench_peers.py once)", file=sys.stderr)
        return 2
    encoder = sqlite3.connect(f"file:{args.sources[0]}?mode=ro", uri=True).execute(
        "SELECT value FROM meta WHERE key = 'encoder'").fetchone()[0]
    runs: dict[str, list[dict]] = {"base": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), args.base], cwd=REPO, check=True,
                       capture_output=True)
        try:
            srcs = {"base": tree / "src", "this": REPO / "src"}
            # each version reads its own copy of the source stores: a newer version's open
            # would move the originals to a schema the older one does not read
            sources = {name: copies(args.sources, Path(tmp) / f"sources-{name}") for name in srcs}
            for r in range(args.rounds):
                for name in (("base", "this") if r % 2 == 0 else ("this", "base")):
                    got = build(srcs[name], args.work / name, args.size, sources[name], args.queries, encoder)
                    got["until_searchable_s"] = args.size / got["chunks_per_s"]
                    runs[name].append(got)
                    print(f"round {r + 1} {name}: {got['chunks_per_s']:,.0f} chunks/s", file=sys.stderr, flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True)
    keys = (*STEPS, "until_searchable_s", "chunks_per_s", "disk_mb", "build_rss_mb", "helper_rss_mb")
    report = {"machine": describe(), "base": args.base, "size": args.size, "rounds": args.rounds, "runs": runs,
              "versions": {n: {k: statistics.median(x.get(k, 0.0) for x in rs) for k in keys}
                           for n, rs in runs.items()}}
    write_results(args.out, report, render(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
