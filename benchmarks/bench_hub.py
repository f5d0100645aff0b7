"""The hub under load, on loopback, beside the library called directly.

On a copy of a store (by default the React docs store that ``make demo`` builds),
with 200 fixed questions (the first 200 of the natural dev set, all four language
pairs), in one run:

1. **direct**: ``Index.search`` in this process, the 200 questions twice; the
   second pass's median and p95 (the hub is started only afterwards);
2. **replay** (the reranker evaluation's way of reporting serving latency): one
   client sends the 200 questions twice through ``POST /v1/search``; second-pass
   median and p95, and the hub's overhead as the ratio to direct;
3. **load**: 1, 4 and 16 closed-loop clients (each a thread with its own
   keep-alive connection, cycling through the questions from its own offset), for a
   fixed time each, without and with an ingest beside them (a client that posts
   batches of 10 new documents, built from the store's own chunks, as fast as the
   hub takes them); p50 / p95 / p99, requests/s, errors (any answer but 200, or no
   answer). The ingested documents are pruned between windows, so every window
   starts from the same store;
4. **interactive load**: the same windows with clients that pause between questions
   (exponential, mean ``--think-ms``, 500 ms by default), as people at a search box
   do; closed-loop windows measure the hub's capacity, these its latency below it.

The hub runs in its own process (``chaja serve``), the clients in this one; both
share the machine's cores, which the results state.

    python benchmarks/bench_hub.py                          # --store runs/react-docs.chaja
    python benchmarks/bench_hub.py --seconds 10 --clients 1,4

Results: ``benchmarks/results/hub-load.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import http.client
import json
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402
import hub_process  # noqa: E402

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "questions" / "natural" / "react-natural-dev.jsonl"
WRITE_KEY = "bench-write-key"


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))] if s else float("nan")


def summary(ms: list[float]) -> dict:
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 2) if ms else None,
            "p95_ms": round(pct(ms, 95), 2), "p99_ms": round(pct(ms, 99), 2),
            "mean_ms": round(statistics.fmean(ms), 2) if ms else None}


def copy_store(src: Path, dst: Path) -> None:
    """A consistent copy (SQLite's backup of the main file), compacted as this version
    of chaja compacts a store after indexing it (keyword and vector files beside it)."""
    from chaja.stores.sqlite import SqliteStore

    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    with SqliteStore(dst) as store:
        store.compact(force=True)


class Connection:
    """One keep-alive HTTP connection to the hub."""

    def __init__(self, host: str, port: int, key: str | None = None):
        self.conn = http.client.HTTPConnection(host, port, timeout=120)
        self.headers = {"Content-Type": "application/json"}
        if key:
            self.headers["Authorization"] = f"Bearer {key}"

    def post(self, path: str, body: dict) -> tuple[int, bytes]:
        try:
            self.conn.request("POST", path, json.dumps(body, ensure_ascii=False).encode(), self.headers)
            resp = self.conn.getresponse()
            return resp.status, resp.read()
        except (OSError, http.client.HTTPException):
            self.conn.close()
            return 0, b""


def start_hub(store: Path, log: Path, readers: int, settings: list[str]) -> tuple[subprocess.Popen, str, int]:
    options = ["--set", f"hub.write_keys={WRITE_KEY}", "--set", f"hub.readers={readers}"]
    for s in settings:
        options += ["--set", s]
    return hub_process.start_hub(store, log, options)


def window(host: str, port: int, questions: list[str], clients: int, seconds: float, ingest_docs: list[dict] | None,
           warmup: float = 2.0, think_ms: float = 0.0) -> dict:
    """``clients`` searchers for ``warmup`` + ``seconds``; only the last ``seconds`` count.
    With ``think_ms`` each client waits a random time (exponential, that mean) between
    an answer and its next question, as a person would; without, it asks at once."""
    stop = threading.Event()
    lat: list[list[float]] = [[] for _ in range(clients)]
    errors = [0] * clients
    counting = threading.Event()
    ingested = {"documents": 0, "requests": 0, "errors": 0, "seconds": 0.0}

    def searcher(i: int) -> None:
        conn = Connection(host, port)
        at = (i * 13) % len(questions)
        pause = random.Random(i)
        while not stop.is_set():
            if think_ms:
                stop.wait(pause.expovariate(1000.0 / think_ms))
            t = time.perf_counter()
            status, _ = conn.post("/v1/search", {"query": questions[at]})
            ms = (time.perf_counter() - t) * 1000
            if counting.is_set():
                if status == 200:
                    lat[i].append(ms)
                else:
                    errors[i] += 1
            if status == 0:
                conn = Connection(host, port)
            at = (at + 1) % len(questions)

    def ingester() -> None:
        conn = Connection(host, port, WRITE_KEY)
        at = 0
        began = time.perf_counter()
        while not stop.is_set() and at < len(ingest_docs):
            batch = ingest_docs[at:at + 10]
            status, _ = conn.post("/v1/documents", {"documents": batch})
            if counting.is_set():
                ingested["requests"] += 1
                if status == 200:
                    ingested["documents"] += len(batch)
                else:
                    ingested["errors"] += 1
            at += len(batch)
        ingested["seconds"] = round(time.perf_counter() - began, 2)

    threads = [threading.Thread(target=searcher, args=(i,)) for i in range(clients)]
    if ingest_docs is not None:
        threads.append(threading.Thread(target=ingester))
    for t in threads:
        t.start()
    time.sleep(warmup)
    counting.set()
    began = time.perf_counter()
    time.sleep(seconds)
    stop.set()
    counting.clear()
    elapsed = time.perf_counter() - began
    for t in threads:
        t.join()
    ms = [x for per in lat for x in per]
    out = {"clients": clients, "ingest": ingest_docs is not None, "think_ms": think_ms, "seconds": round(elapsed, 2),
           **summary(ms), "requests_per_s": round(len(ms) / elapsed, 1), "errors": sum(errors)}
    if ingest_docs is not None:
        out["ingest_documents"] = ingested["documents"]
        out["ingest_errors"] = ingested["errors"]
    return out


def add_ratios(windows: list[dict]) -> None:
    """Each window's p95 over the single-client p95: that of one closed-loop client with
    no ingest (the unloaded service, and the window with the most samples), else of one
    client in the window's own mode."""
    for w in windows:
        base = ([x for x in windows if x["clients"] == 1 and not x["ingest"] and not x["think_ms"]]
                or [x for x in windows if x["clients"] == 1 and not x["ingest"] and x["think_ms"] == w["think_ms"]])
        w["p95_over_single_client_p95"] = round(w["p95_ms"] / base[0]["p95_ms"], 2) if base else None


def prune(host: str, port: int, keep: list[str]) -> None:
    status, body = Connection(host, port, WRITE_KEY).post("/v1/prune", {"keep": keep})
    if status != 200:
        raise SystemExit(f"prune failed: {status} {body[:300]!r}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", default="runs/react-docs.chaja", help="the store to copy and serve")
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--seconds", type=float, default=20.0, help="measured seconds per window")
    ap.add_argument("--readers", type=int, default=0, help="hub.readers (0: one per core)")
    ap.add_argument("--think-ms", type=float, default=500.0,
                    help="mean pause between a client's questions in the interactive windows (0: none)")
    ap.add_argument("--modes", default="closed,interactive", help="closed, interactive or both")
    ap.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="a setting for the hub (repeatable)")
    ap.add_argument("--out", default=str(HERE / "results" / "hub-load.json"))
    ap.add_argument("--markdown-from", metavar="JSON", help="only write the .md of an earlier run's JSON")
    args = ap.parse_args(argv)
    if args.markdown_from:
        src = Path(args.markdown_from)
        got = json.loads(src.read_text(encoding="utf-8"))
        add_ratios(got["windows"])
        src.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        src.with_suffix(".md").write_text(markdown(got), encoding="utf-8")
        return 0
    src = Path(args.store)
    if not src.exists():
        print(f"error: no store at {src}: build it with `make demo` or pass --store", file=sys.stderr)
        return 2
    questions = [json.loads(line)["text"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines()
                 if line.strip()][:200]
    import chaja

    machine = describe()
    with tempfile.TemporaryDirectory(prefix="chaja-hub-bench-") as tmp:
        store = Path(tmp) / "served.chaja"
        copy_store(src, store)
        # 1. direct
        with chaja.open(store) as idx:
            for q in questions:
                idx.search(q)
            direct = []
            for q in questions:
                t = time.perf_counter()
                idx.search(q)
                direct.append((time.perf_counter() - t) * 1000)
            keep = sorted(idx.store.fingerprints())
            rows = idx.store.chunks([f"{d}#0" for d in keep])
            encoder = idx.encoder_name
        ingest_docs = [{"id": f"bench-ingest/{n}", "title": c.title, "text": c.text, "lang": c.lang}
                       for n, c in enumerate(list(rows.values()) * 20)]
        proc, host, port = start_hub(store, Path(tmp) / "hub.log", args.readers, args.set)
        try:
            # 2. replay
            conn = Connection(host, port)
            passes = []
            for _ in range(2):
                ms = []
                for q in questions:
                    t = time.perf_counter()
                    status, _ = conn.post("/v1/search", {"query": q})
                    if status != 200:
                        raise SystemExit(f"search failed with {status}")
                    ms.append((time.perf_counter() - t) * 1000)
                passes.append(ms)
            replay = summary(passes[1])
            # 3. load
            windows = []
            modes = ([0.0] if "closed" in args.modes else []) + (
                [args.think_ms] if args.think_ms and "interactive" in args.modes else [])
            for think, clients, with_ingest in [(t, int(c), i) for t in modes for c in args.clients.split(",")
                                            for i in (False, True)]:
                w = window(host, port, questions, clients, args.seconds, ingest_docs if with_ingest else None,
                           think_ms=think)
                windows.append(w)
                print(f"{'think ' + str(int(think)) + ' ms, ' if think else 'closed loop, '}"
                      f"{clients:>2} clients{' + ingest' if with_ingest else '         '}: "
                      f"p50 {w['p50_ms']:.1f} ms, p95 {w['p95_ms']:.1f} ms, p99 {w['p99_ms']:.1f} ms, "
                      f"{w['requests_per_s']} req/s, errors {w['errors']}"
                      + (f", ingested {w['ingest_documents']} documents" if with_ingest else ""), flush=True)
                if with_ingest:
                    prune(host, port, keep)
        finally:
            proc.terminate()
            proc.wait(30)
    direct_s = summary(direct)
    add_ratios(windows)
    result = {
        "benchmark": "hub-load", "description": " ".join(__doc__.split("\n\n")[1].split()),
        "machine": machine | {"load_average_after": list(__import__("os").getloadavg())},
        "store": {"path": str(src), "documents": len(keep), "encoder": encoder},
        "questions": len(questions), "settings": {"seconds": args.seconds, "readers": args.readers, "hub": args.set},
        "direct_second_pass": direct_s, "hub_replay_second_pass": replay,
        "hub_overhead_p50_ratio": round(replay["p50_ms"] / direct_s["p50_ms"], 2),
        "hub_overhead_p95_ratio": round(replay["p95_ms"] / direct_s["p95_ms"], 2),
        "windows": windows,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    out.with_suffix(".md").write_text(markdown(result), encoding="utf-8")
    print(f"direct p50 {direct_s['p50_ms']} ms; hub replay p50 {replay['p50_ms']} ms "
          f"(×{result['hub_overhead_p50_ratio']}); written to {out}")
    return 0


def markdown(r: dict) -> str:
    m = r["machine"]
    lines = [
        "# The hub under load (loopback)", "",
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; the hub and the clients share it. "
        f"Store: {r['store']['documents']} documents ({r['store']['encoder']}); {r['questions']} natural questions; "
        f"readers: {r['settings']['readers'] or 'one per core'}; {r['settings']['seconds']:g} s per window after 2 s "
        "of warm-up. The clients run in the benchmark's own process, on the same cores as the hub.", "",
        "| | p50 ms | p95 ms |", "|---|---|---|",
        f"| `Index.search` in process (second pass) | {r['direct_second_pass']['p50_ms']} | {r['direct_second_pass']['p95_ms']} |",
        f"| hub, one client, replayed twice (second pass) | {r['hub_replay_second_pass']['p50_ms']} | {r['hub_replay_second_pass']['p95_ms']} |",
        f"| hub ÷ in process | ×{r['hub_overhead_p50_ratio']} | ×{r['hub_overhead_p95_ratio']} |", "",
        "Closed loop: each client asks its next question as soon as it has an answer (the hub's capacity). "
        "Interactive: each client pauses a random time between questions (exponential, the mean given). "
        "The ratio column divides by the p95 of one closed-loop client with no ingest (the unloaded service, "
        "measured on the most requests).", "",
        "| clients | pause between questions | ingest beside | p50 ms | p95 ms | p99 ms | requests/s | errors "
        "| p95 ÷ 1-client p95 | documents ingested |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in r["windows"]:
        pause = f"{w['think_ms']:g} ms" if w["think_ms"] else "none (closed loop)"
        lines.append(f"| {w['clients']} | {pause} | {'yes' if w['ingest'] else 'no'} | {w['p50_ms']} | {w['p95_ms']} | {w['p99_ms']} | "
                     f"{w['requests_per_s']} | {w['errors']} | ×{w['p95_over_single_client_p95']} | "
                     f"{w.get('ingest_documents', '')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
