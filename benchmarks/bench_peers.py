"""chaja beside bm25s (+ numpy or usearch), tantivy and LanceDB, on the same chunks,
the same vectors and the same real questions, in one run (and numpy alone, exact vector
search, the recall reference where bm25s does not fit in memory).

    pip install -e '.[bench]'                       # the peers (benchmark extras only)
    python benchmarks/bench_quality.py --sets korquad,scifact,react   # the source stores, once
    python benchmarks/bench_peers.py --size 100000  # 10000, 100000, 1000000, ...

The corpus (:mod:`peer_corpus`) cycles the source stores' chunks with variations up to
``--size``; the queries are real KorQuAD questions and SciFact claims with their terms and
query vectors computed once. For each system a fresh process builds its index. Ingest
chunks/s excludes encoding (every system gets the vectors; of chaja's translation lexicon,
``lexicon_s``, only the aligned encoder's seconds, ``lexicon_encoding_s``, are left out) and
the making of the corpus itself (``corpus_s``, the same for every system), and is given twice:
until the chunks are searchable, and with the approximate vector index built too
(``ann_index_s``: usearch's graph, LanceDB's IVF-PQ, chaja's graphs and its lexicon's
nearest-word tables, which a bulk load defers to ``chaja optimize``). Then a second fresh process
opens it and serves (open time: open plus the first keyword and vector query; peak RSS of
that process). Queries are interleaved: query by query, each system answers each of its
lists in turn (keyword, vector, hybrid; timed inside the serving process, so the pipe is
not counted), after one untimed warm-up pass (chaja forgets the word translations it
remembers between searches before each timed one, so none is answered from the warm-up).
Every system, chaja included, is given the query vectors, so no serving process loads an
encoder; ``chaja-e2e`` serves the same chaja store from a process of its own that encodes
each question with the real encoders (``e2e``), whose memory holds them. Reported per
system and list: p50 and p95 in ms, chaja's paired
ratio (median over queries of chaja's time / the peer's), and top-10 agreement with chaja
(keyword: the share of chaja's top 10 the peer also returns; vector: recall@10 against
exact search). Results go to ``benchmarks/results/peers-<size>.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import describe, write_results  # noqa: E402
import peer_corpus  # noqa: E402
import peer_systems  # noqa: E402

REPO = HERE.parent
SYSTEMS = ("chaja", "chaja-e2e", "bm25s+numpy", "bm25s+usearch", "tantivy", "lancedb")
OPS = {"chaja": ("keyword", "vector", "hybrid"), "chaja-e2e": ("e2e",),
       "bm25s+numpy": ("keyword", "vector", "hybrid"), "bm25s+usearch": ("keyword", "vector", "hybrid"),
       "tantivy": ("keyword",),
       "lancedb": ("keyword", "vector", "hybrid"), "numpy": ("vector",)}
K = 10


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def rss_parts_mb() -> dict[str, float]:
    """This process's resident memory now, by kind (Linux's ``RssAnon``: its own heap and
    private pages; ``RssFile``: pages of mapped files, which the kernel can drop and read
    again; ``RssShmem``); empty where /proc does not tell."""
    names = {"RssAnon:": "anon_mb", "RssFile:": "file_mb", "RssShmem:": "shmem_mb"}
    try:
        lines = Path("/proc/self/status").read_text().splitlines()
    except OSError:
        return {}
    return {names[p[0]]: int(p[1]) / 1024 for p in map(str.split, lines) if p and p[0] in names}


def peak_rss_mb() -> float:
    """This process's peak resident memory: VmHWM where Linux gives it (``ru_maxrss``
    carries the forking parent's peak across exec, so a worker spawned by a parent that
    had loaded the encoders would report at least the parent's size)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class TimedCorpus:
    """The corpus's chunks, one at a time, and the seconds spent making them (``seconds``)."""

    def __init__(self, pool: list[dict], size: int):
        self.pool, self.size, self.seconds = pool, size, 0.0

    def __iter__(self):
        for i in range(self.size):
            t = time.perf_counter()
            chunk = peer_corpus.chunk_at(self.pool, i)
            self.seconds += time.perf_counter() - t
            yield chunk


def worker(args) -> int:
    queries = json.loads(Path(args.queries_file).read_text())
    for q in queries:       # float32 arrays, not lists of Python floats: 5 MB of every serving process's peak
        for key in ("vector", "aligned_vector"):
            if key in q:
                q[key] = np.asarray(q[key], np.float32)
    folder = Path(args.work) / f"{args.size}" / args.worker.replace("+", "-")
    system = peer_systems.make(args.worker, folder, queries, args.encoder_name)
    if args.build:
        pool = peer_corpus.read_pool([Path(s) for s in args.sources])
        corpus = TimedCorpus(pool, args.size)
        t0 = time.perf_counter()
        info = system.build(iter(corpus))
        seconds = time.perf_counter() - t0
        # encoding done during the build, and making the corpus, are not ingest
        ingest = seconds - info.get("excluded_s", 0.0) - corpus.seconds
        built = {"build_s": seconds, "corpus_s": corpus.seconds,
                 "chunks_per_s": args.size / (ingest - info.get("ann_index_s", 0.0)),
                 "with_ann_chunks_per_s": args.size / ingest, **info,
                 "disk_mb": folder_size(folder) / 2**20, "build_rss_mb": peak_rss_mb(),
                 "helper_rss_mb": peer_systems.helper_peak_mb(),
                 "sources": [str(s) for s in args.sources]}       # what bench_filtered.py makes its reference of
        (folder.parent / f"{folder.name}.build.json").write_text(json.dumps(built))
        print(json.dumps(built), flush=True)
        return 0
    t0 = time.perf_counter()
    system.open()
    system.keyword(queries[0], K)
    if hasattr(system, "vector"):
        system.vector(queries[0], K)
    opened = {"open_s": time.perf_counter() - t0, "open_rss_mb": peak_rss_mb()}
    if hasattr(system, "prepare"):      # untimed work before the first timed query
        system.prepare()
    print(json.dumps(opened), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["op"] == "stats":
            print(json.dumps({"serve_rss_mb": peak_rss_mb(), "serve_rss_end": rss_parts_mb()}), flush=True)
            continue
        q = queries[cmd["i"]]
        t = time.perf_counter()
        top = getattr(system, cmd["op"])(q, K)
        ms = (time.perf_counter() - t) * 1000
        print(json.dumps({"ms": ms, "top": top}), flush=True)
    return 0


def spawn(args, name: str, *, build: bool) -> subprocess.Popen:
    cmd = [sys.executable, __file__, "--worker", name, "--size", str(args.size), "--work", str(args.work),
           "--queries-file", str(args.queries_file), "--encoder-name", args.encoder_name,
           "--sources", *map(str, args.sources)] + (["--build"] if build else [])
    env = {**os.environ, "RUST_LOG": "error", "LANCE_LOG": "error"}   # LanceDB warns once per query
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)


def ask(proc: subprocess.Popen, cmd: dict) -> dict:
    proc.stdin.write(json.dumps(cmd) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError(f"a worker stopped (exit {proc.wait()})")
    return json.loads(line)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--work", type=Path, default=REPO / "runs" / "peers")
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("CHAJA_DATA_DIR", REPO.parent / "shared" / "data")))
    ap.add_argument("--sources", nargs="+", type=Path,
                    default=[REPO / "runs" / "quality" / f"{s}.chaja" for s in ("korquad", "scifact", "react")])
    ap.add_argument("--reuse", action="store_true", help="serve what an earlier run built at this size")
    ap.add_argument("--rebuild", default="", help="with --reuse: build these systems (comma-separated) afresh, "
                                                  "reuse the others' builds")
    ap.add_argument("--tag", default="", help="results go to peers-<size>-<tag>.json and .md")
    ap.add_argument("--worker"), ap.add_argument("--build", action="store_true")
    ap.add_argument("--queries-file"), ap.add_argument("--encoder-name", default="")
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    names = [s for s in args.systems.split(",") if s]
    unknown = [n for n in names if n not in peer_systems.NEEDS]
    if unknown:
        print(f"unknown systems: {', '.join(unknown)} (known: {', '.join(peer_systems.NEEDS)})", file=sys.stderr)
        return 2
    absent = peer_systems.missing_modules(names)
    if absent:
        print(f"the peers need {', '.join(absent)}, which are not installed: pip install -e '.[bench]'",
              file=sys.stderr)
        return 2
    missing = [s for s in args.sources if not s.exists()]
    if missing:
        print(f"missing source stores: {', '.join(map(str, missing))}\n"
              "build them once with: python benchmarks/bench_quality.py --sets korquad,scifact,react", file=sys.stderr)
        return 2
    import sqlite3
    args.encoder_name = sqlite3.connect(f"file:{args.sources[0]}?mode=ro", uri=True).execute(
        "SELECT value FROM meta WHERE key = 'encoder'").fetchone()[0]
    args.queries_file = args.work / f"queries-{args.queries}.json"
    queries = peer_corpus.encoded_queries(args.data, args.queries, args.queries_file)
    machine = describe()
    builds: dict[str, dict] = {}
    for name in names:
        if name == "chaja-e2e":         # serves the chaja store: nothing of its own to build
            builds[name] = {}
            continue
        if args.reuse and name not in args.rebuild.split(","):
            saved = args.work / f"{args.size}" / f"{name.replace('+', '-')}.build.json"
            builds[name] = json.loads(saved.read_text()) if saved.exists() else {}
            continue
        print(f"building {name} at {args.size:,} chunks ...", file=sys.stderr, flush=True)
        proc = spawn(args, name, build=True)
        out, _ = proc.communicate()
        if proc.returncode:
            raise SystemExit(f"{name} build failed (exit {proc.returncode})")
        builds[name] = json.loads(out.strip().splitlines()[-1])
        print(f"  {builds[name]}", file=sys.stderr, flush=True)
    servers = {}
    opened = {}
    for name in names:
        servers[name] = spawn(args, name, build=False)
        opened[name] = json.loads(servers[name].stdout.readline())
    times = {n: {op: [] for op in OPS[n]} for n in names}
    tops = {n: {op: [] for op in OPS[n]} for n in names}
    for timed in (False, True):
        for i in range(len(queries)):
            for name in names:
                for op in OPS[name]:
                    r = ask(servers[name], {"op": op, "i": i})
                    if timed:
                        times[name][op].append(r["ms"])
                        tops[name][op].append(r["top"])
        print("warm-up done" if not timed else "timed pass done", file=sys.stderr, flush=True)
    stats = {}
    for name, proc in servers.items():
        stats[name] = ask(proc, {"op": "stats"})
        proc.stdin.close()
        proc.wait()
    exact = next((tops[n]["vector"] for n in ("bm25s+numpy", "numpy") if n in tops), None)   # the exact reference
    report = {"size": args.size, "queries": len(queries), "machine": machine, "load_after": list(os.getloadavg()),
              "systems": {}}
    for name in names:
        row = {**builds.get(name, {}), **opened[name], **stats[name], "lists": {}}
        for op in OPS[name]:
            ms = times[name][op]
            entry = {"p50_ms": statistics.median(ms), "p95_ms": pct(ms, 95)}
            if name != "chaja" and op in OPS["chaja"]:
                entry["chaja_ratio"] = statistics.median(a / b for a, b in zip(times["chaja"][op], ms) if b > 0)
            if op == "keyword" and name != "chaja":
                entry["top10_agreement"] = statistics.mean(
                    len(set(a) & set(b)) / max(len(a), 1) for a, b in zip(tops["chaja"]["keyword"], tops[name][op]) if a)
            if op == "vector" and exact is not None:
                entry["recall10"] = statistics.mean(len(set(a) & set(b)) / max(len(b), 1)
                                                    for a, b in zip(tops[name][op], exact))
            row["lists"][op] = entry
        report["systems"][name] = row
    write_results(f"peers-{args.size}{'-' + args.tag if args.tag else ''}", report, render(report))
    return 0


def render(r: dict) -> str:
    lines = [f"# chaja and its peers at {r['size']:,} chunks", "",
             f"{r['queries']} queries (KorQuAD questions and SciFact claims), medians and p95 in ms; "
             f"ratio = median over queries of chaja's time / the peer's. Machine: {r['machine']['cpu']}, "
             f"{r['machine']['cores']} cores, load {r['machine']['load_average']} before, {r['load_after']} after.", "",
             "Ingest: chunks/s until searchable, and in brackets with the approximate vector index built "
             "(chaja's graphs and translation tables are deferred by a bulk load and built by `chaja optimize`); "
             "encoding excluded.", "",
             "Bytes per chunk: on disk, and of the serving process's peak memory. Every serving process "
             "is given the query vectors; chaja-e2e is chaja's store served by a process of its own that "
             "encodes each question with the real encoders, and its memory holds them.", "",
             "| system | ingest chunks/s | open s | disk MB | disk B/chunk | serve RSS MB | RSS B/chunk "
             "| keyword p50 / p95 | vector p50 / p95 | hybrid p50 / p95 | e2e p50 / p95 |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, s in r["systems"].items():
        cells = []
        for op in ("keyword", "vector", "hybrid", "e2e"):
            e = s["lists"].get(op)
            if e is None:
                cells.append("—")
                continue
            extra = []
            if "chaja_ratio" in e:
                extra.append(f"chaja {e['chaja_ratio']:.2f}×")
            if "top10_agreement" in e:
                extra.append(f"top-10 agree {e['top10_agreement']:.2f}")
            if "recall10" in e:
                extra.append(f"R@10 {e['recall10']:.3f}")
            cells.append(f"{e['p50_ms']:.1f} / {e['p95_ms']:.1f}" + (f" ({', '.join(extra)})" if extra else ""))
        ingest = f"{s['chunks_per_s']:,.0f}" if "chunks_per_s" in s else "—"
        if s.get("ann_index_s"):
            ingest += f" ({s['with_ann_chunks_per_s']:,.0f})"
        disk = f"{s['disk_mb']:.0f} | {s['disk_mb'] * 2**20 / r['size']:,.0f}" if "disk_mb" in s else "— | —"
        rss = f"{s['serve_rss_mb']:.0f} | {s['serve_rss_mb'] * 2**20 / r['size']:,.0f}"
        lines.append(f"| {name} | {ingest} | {s['open_s']:.2f} | {disk} | {rss} | " + " | ".join(cells) + " |")
    parts = [f"{name} {p['anon_mb']:,.0f} + {p['file_mb']:,.0f}" for name, p in
             ((n, r["systems"][n].get("serve_rss_end") or {}) for n in r["systems"]) if "anon_mb" in p]
    if parts:
        lines += ["", "Serving memory after the last query, MB: private (the heap, `RssAnon`) + mapped files "
                  "(`RssFile`: pages of the store's files the process has touched, which the kernel can drop "
                  "and read again): " + "; ".join(parts) + "."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
