"""A reranker against none, on the public stores, judged the way the reranker evaluation
judges: pools of 50 from chaja's own retrieval, fixed-depth tables, the paired noise
test, and latency at depth 10, 20 and 50.

    python benchmarks/bench_quality.py --sets react,react-natural-dev,react-natural-test,korquad,scifact  # stores, once
    python benchmarks/bench_rerank.py --reranker e5-windows [--sets ...] [--limit 300] [--latency 40]
    python benchmarks/bench_rerank.py --reranker http:http://127.0.0.1:8080 --set rerank.model=BAAI/bge-reranker-v2-m3

For each set two runs of depth 50 go under ``--work/rerank/<set>/``: ``none`` and the
reranker at ``rerank.depth = 50`` (runs already there are reused). Depths 10 and 20
are replayed from the depth-50 run's records (:mod:`chaja.eval.replay`), so every
depth sees the same candidates. Per set: nDCG@10 and MRR with the paired test against
none, and the pool tables (:mod:`chaja.eval.pools`). Latency: ``--latency`` questions
of the React natural dev split, each searched twice at each depth; the second pass
is reported (reranker alone on the same 10/20/50 candidates, and the whole search).
The score mapping is fit on the ``--calibrate-on`` set's reranked run (the React natural
dev split) and every set's depths are replayed with it, so the selected prefixes of the
other sets are held-out checks of that fit.
Results: ``benchmarks/results/rerank-<reranker>.json`` and ``.md``, with the machine.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from pathlib import Path

import chaja
from chaja.config import Config, RerankConfig
from chaja.eval.beir import load_beir
from chaja.eval.calibrate import fit
from chaja.eval.canonical import build_canonical
from chaja.eval.noise import compare_runs
from chaja.eval.pools import format_pools, pool_summary
from chaja.eval.questions import read_questions
from chaja.eval.replay import replay
from chaja.eval.report import question_metrics, read_records
from chaja.eval.runner import evaluate
from chaja.eval.squad import load_squad
from chaja.rerank import passage_text

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from machine import describe  # noqa: E402

DEPTHS = (10, 20, 50)
SETS = ("react-natural-dev", "react-natural-test", "react", "korquad", "scifact")


def question_sets(data: Path, work: Path, wanted: list[str]):
    natural = REPO / "benchmarks/questions/natural"
    for name in wanted:
        if name.startswith("react-natural-"):
            yield name, work / "react.chaja", read_questions(natural / f"{name}.jsonl")
        elif name == "react":
            yield name, work / "react.chaja", build_canonical(data)[0]
        elif name == "korquad":
            yield name, work / "korquad.chaja", load_squad(data / "korquad-v1-dev" / "KorQuAD_v1.0_dev.json").questions
        elif name == "scifact":
            yield name, work / "scifact.chaja", load_beir(data / "scifact").questions
        else:
            raise SystemExit(f"unknown set {name!r}; have {', '.join(SETS)}")


def slug(spec: str) -> str:
    """A file name for the reranker: a folder's last part, a served reranker's host and path."""
    if spec.startswith("http:"):
        spec = "http-" + spec.partition("//")[2]
    elif ":" in spec:
        spec = spec.rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", spec).strip("-")


def run(store: Path, questions, out: Path, settings: list[str]) -> None:
    if (out / "summary.json").exists():
        return
    cfg = Config().override(settings + ["search.top_k=50", "rerank.depth=50"])
    with chaja.open(store, cfg) as idx:
        t = time.perf_counter()
        evaluate(idx, questions, out, depth=50, stream=sys.stderr, progress_every=50)
        print(f"  {out}: {time.perf_counter() - t:.0f} s", file=sys.stderr)


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[max(0, int(round(p / 100 * len(values))) - 1)]


def latency(store: Path, questions, spec: str, n: int, settings: list[str]) -> dict:
    """Second-pass reranker and search times at each depth, ms."""
    out: dict[str, dict] = {}
    cfg = Config().override(settings + ["search.top_k=50"])
    with chaja.open(store, cfg) as idx:
        pools = []
        for q in questions[:n]:
            res = idx.search(q.text, top_k=50)
            pools.append((q.text, [passage_text(d.best.chunk) for d in res.documents]))
        reranker = idx.reranker(spec)
        for depth in DEPTHS:
            idx.config.search.reranker, idx.config.rerank.depth = spec, depth
            for _pass in (1, 2):
                alone, whole = [], []
                for text, passages in pools:
                    t = time.perf_counter()
                    reranker.score(text, passages[:depth])
                    alone.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    idx.search(text, top_k=10)
                    whole.append((time.perf_counter() - t) * 1000)
            out[str(depth)] = {"rerank_p50": statistics.median(alone), "rerank_p95": pct(alone, 95),
                               "search_p50": statistics.median(whole), "search_p95": pct(whole, 95)}
        idx.config.search.reranker = "none"
        for _pass in (1, 2):
            plain = []
            for text, _ in pools:
                t = time.perf_counter()
                idx.search(text, top_k=10)
                plain.append((time.perf_counter() - t) * 1000)
        out["none"] = {"search_p50": statistics.median(plain), "search_p95": pct(plain, 95)}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reranker", required=True,
                    help="a search.reranker value (e5-windows, onnx:<folder>, http:<base URL>, ...)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a [rerank] setting for the reranked runs (rerank.model=..., rerank.api=tei); repeatable")
    ap.add_argument("--data", default=os.environ.get("CHAJA_DATA_DIR", str(REPO.parent / "shared" / "data")))
    ap.add_argument("--work", default=str(REPO / "runs" / "quality"), help="where bench_quality.py built the stores")
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--limit", type=int, default=200,
                    help="questions of the canonical, KorQuAD and SciFact sets (the first N; 0 = all)")
    ap.add_argument("--latency", type=int, default=40, help="questions for the latency table (0 = none)")
    ap.add_argument("--out", default=None, help="results prefix (default benchmarks/results/rerank-<reranker>)")
    ap.add_argument("--calibrate-on", default="react-natural-dev",
                    help="the set whose reranked run fits rerank.scale and rerank.shift for every set's prefix")
    args = ap.parse_args()
    work, data, name = Path(args.work), Path(args.data), slug(args.reranker)
    machine_before = describe()
    results: dict = {"reranker": args.reranker, "machine": machine_before, "sets": {}}
    md = [f"# Reranker `{args.reranker}` against none", ""]
    mapping: dict = {}
    for set_name, store, questions in question_sets(data, work, args.sets.split(",")):
        if not store.exists():
            raise SystemExit(f"{store} is missing: build it with benchmarks/bench_quality.py --sets {set_name}")
        if args.limit and not set_name.startswith("react-natural-"):    # the natural splits are used whole
            questions = questions[: args.limit]
        base = work / "rerank" / set_name
        run(store, questions, base / "none", [])
        run(store, questions, base / name, [*args.set, f"search.reranker={args.reranker}"])
        meta, _ = read_records(base / name)
        rc = meta["config"]["rerank"]
        if not mapping and set_name == args.calibrate_on:
            fitted = fit(base / name, rc["scale"], rc["shift"])
            mapping = {"scale": fitted["scale"], "shift": fitted["shift"]}
            results["mapping"] = {"fit_on": set_name, **fitted}
            md += [f"Score mapping fit on {set_name} (`chaja eval calibrate`): p = σ({fitted['scale']:.4g}·s "
                   f"{fitted['shift']:+.4g}); log loss {fitted['before']['log_loss']:.3f} → "
                   f"{fitted['after']['log_loss']:.3f}. Every set's selected prefix below uses it.", ""]
        dirs = {"none": base / "none"}
        for depth in DEPTHS:        # replayed with the fitted mapping: the rankings are the run's, the prefix moves
            d = base / f"{name}@{depth}"
            replay(base / name, d, RerankConfig(**{**rc, **mapping, "depth": depth}))
            dirs[f"depth {depth}"] = d
        none = question_metrics(dirs["none"])
        row: dict = {"questions": len(questions), "runs": {}}
        md += [f"## {set_name} ({len(questions)} questions)", "",
               "| run | nDCG@10 | MRR | R@5 | nDCG@10 vs none [95% CI] | verdict |", "|---|---|---|---|---|---|"]
        for label, d in dirs.items():
            s = json.loads((d / "summary.json").read_text())["metrics"]
            entry = {"nDCG@10": s["nDCG@10"], "MRR": s["MRR"], "R@5": s["R@5"]}
            cell, verdict = "", ""
            if label != "none":
                c = compare_runs(none, question_metrics(d), ["nDCG@10"])[0]
                entry["vs_none"] = {"diff": c.diff, "ci": [c.ci_low, c.ci_high], "p": c.p, "verdict": c.verdict}
                cell, verdict = f"{c.diff:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}]", c.verdict
            row["runs"][label] = entry
            md.append(f"| {label} | {s['nDCG@10']:.3f} | {s['MRR']:.3f} | {s['R@5']:.2f} | {cell} | {verdict} |")
        pools = [pool_summary(dirs["none"]), pool_summary(dirs["depth 50"])]
        row["pools"] = pools
        md += ["", format_pools(pools, "answerable"), "", format_pools(pools, "all"), ""]
        results["sets"][set_name] = row
    if args.latency:
        store = work / "react.chaja"
        qs = read_questions(REPO / "benchmarks/questions/natural/react-natural-dev.jsonl")
        lat = latency(store, qs, args.reranker, args.latency, args.set)
        results["latency"] = lat
        md += [f"## Latency ({args.latency} React natural dev questions, second pass, ms)", "",
               "| depth | reranker p50 | reranker p95 | search p50 | search p95 |", "|---|---|---|---|---|",
               f"| none | — | — | {lat['none']['search_p50']:.1f} | {lat['none']['search_p95']:.1f} |"]
        md += [f"| {d} | {lat[str(d)]['rerank_p50']:.1f} | {lat[str(d)]['rerank_p95']:.1f} | "
               f"{lat[str(d)]['search_p50']:.1f} | {lat[str(d)]['search_p95']:.1f} |" for d in DEPTHS]
    results["machine_after"] = describe()
    m = results["machine"]
    md += ["", f"Machine: {m['cpu']}, {m['cores']} cores, load {m['load_average']} before, "
               f"{results['machine_after']['load_average']} after."]
    prefix = Path(args.out) if args.out else REPO / "benchmarks" / "results" / f"rerank-{name}"
    prefix.with_suffix(".json").write_text(json.dumps(results, ensure_ascii=False, indent=2) + "\n")
    prefix.with_suffix(".md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
