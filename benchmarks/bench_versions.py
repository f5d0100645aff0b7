"""This checkout's search beside another version's, paired, on the same stores.

For a change meant to leave search as it was (a refactor), or to make it faster:
``Index.search`` end to end (query encoding, the candidate lists, fusion, the steps
after it, the result) over synthetic SQLite stores of each ``--sizes`` (the corpus of
``bench_stores.py``: Korean-like and English-like chunks, vectors around topic
centres; the store records the default encoder, so queries are encoded for real), and
over ``--store`` when given (a real store, searched with the question texts of
``--questions``). The other version is checked out from ``--base`` (a git ref) into
a temporary worktree. Each round runs both versions, in alternating order, each in a
fresh process over the same store and the same queries; the report gives each
version's p50 and p95 (median over rounds), the paired ratio (the median over queries
of this checkout's time over the base's), and whether every query ranked the same
chunks in both.

    python benchmarks/bench_versions.py --base HEAD~5                  # 10k and 100k chunks
    python benchmarks/bench_versions.py --base v0.3 --sizes 10000 --rounds 5
    python benchmarks/bench_versions.py --base main --sizes --store runs/react.chaja --questions q.jsonl

Results: ``benchmarks/results/versions.json`` with the machine it ran on.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))
from bench_stores import Corpus, pct  # noqa: E402
from machine import describe  # noqa: E402

#: what each timing process runs: open the store, warm up, time every query
TIMING = """
import json, sys, time
import chaja
texts = json.loads(sys.stdin.read())
with chaja.open(sys.argv[1]) as idx:
    for t in texts[:10]:
        idx.search(t)
    ms, ranked = [], []
    for t in texts:
        began = time.perf_counter()
        r = idx.search(t)
        ms.append((time.perf_counter() - began) * 1000)
        ranked.append([c.chunk.id for c in r.chunks])
print(json.dumps({"ms": ms, "ranked": ranked, "code": chaja.__file__}))
"""


def synthetic_store(path: Path, n_chunks: int, n_queries: int) -> list[str]:
    """A store of ``n_chunks`` synthetic chunks that records the default encoder, and
    ``n_queries`` query texts drawn from its vocabulary."""
    from chaja.config import Config
    from chaja.encoders import get_encoder
    from chaja.stores.sqlite import SqliteStore

    corpus = Corpus()
    with SqliteStore(path) as store:
        batch = []
        for item in corpus.documents(n_chunks):
            batch.append(item)
            if len(batch) == 500:
                store.put_documents(batch)
                batch = []
        if batch:
            store.put_documents(batch)
        store.compact(force=True)
        store.set_meta("encoder", get_encoder(Config().encoder).name)
    rng = np.random.default_rng(3)
    return [corpus.text("ko" if rng.random() < 0.7 else "en", int(rng.integers(2, 6)), skip=10)
            for _ in range(n_queries)]


def timed(tree: Path, store: Path, texts: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    done = subprocess.run([sys.executable, "-c", TIMING, str(store)], input=json.dumps(texts), env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def compare(trees: dict[str, Path], store: Path, texts: list[str], rounds: int) -> dict:
    runs: dict[str, list[dict]] = {name: [] for name in trees}
    for r in range(rounds):
        for name in (list(trees) if r % 2 == 0 else list(reversed(trees))):
            runs[name].append(timed(trees[name], store, texts))
    out: dict = {}
    for name, got in runs.items():
        out[name] = {"p50_ms": round(statistics.median(pct(g["ms"], 50) for g in got), 2),
                     "p95_ms": round(statistics.median(pct(g["ms"], 95) for g in got), 2),
                     "rounds_p50_ms": [round(pct(g["ms"], 50), 2) for g in got], "code": got[0]["code"]}
    per_query = {name: np.median([g["ms"] for g in got], axis=0) for name, got in runs.items()}
    out["paired_ratio_head_to_base"] = round(float(np.median(per_query["head"] / per_query["base"])), 3)
    out["rankings_equal"] = all(g["ranked"] == runs["base"][0]["ranked"] for got in runs.values() for g in got)
    out["queries"] = len(texts)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the git ref to compare this checkout with")
    ap.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--store", type=Path, help="a real store to search as well")
    ap.add_argument("--questions", type=Path, help="JSON Lines with a text field, for --store")
    ap.add_argument("--out", type=Path, default=HERE / "results" / "versions.json")
    args = ap.parse_args(argv)
    results = {"machine": describe(), "base": args.base, "head": subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip(), "runs": {}}
    with tempfile.TemporaryDirectory(prefix="chaja-versions-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), args.base], cwd=REPO, check=True)
        try:
            trees = {"base": base, "head": REPO}
            for n in args.sizes:
                store = Path(tmp) / f"synthetic-{n}.chaja"
                texts = synthetic_store(store, n, args.queries)
                results["runs"][f"synthetic-{n}"] = got = compare(trees, store, texts, args.rounds)
                print(f"{n:>8} chunks  base p50 {got['base']['p50_ms']} ms  head p50 {got['head']['p50_ms']} ms  "
                      f"paired ratio {got['paired_ratio_head_to_base']}  rankings equal {got['rankings_equal']}",
                      flush=True)
            if args.store:
                texts = [json.loads(line)["text"] for line in args.questions.read_text(encoding="utf-8").splitlines()
                         if line.strip()][: args.queries]
                results["runs"][args.store.name] = got = compare(trees, args.store, texts, args.rounds)
                print(f"{args.store.name}  base p50 {got['base']['p50_ms']} ms  head p50 {got['head']['p50_ms']} ms  "
                      f"paired ratio {got['paired_ratio_head_to_base']}  rankings equal {got['rankings_equal']}")
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=REPO, check=False)
    results["machine"]["load_average_at_end"] = list(os.getloadavg())
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
