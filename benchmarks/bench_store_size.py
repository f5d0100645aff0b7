"""Quality against store size: does search hold from a handful of chunks up?

    python benchmarks/bench_store_size.py [--sizes 20,100,1000] [--split dev]

Stores are sampled from the bilingual pair store (KorQuAD paragraphs in Korean,
SciFact abstracts in English, a chunk or two each; ``pair_store.py``): for a store of
N documents, N/2 questions of the chosen split are drawn (a fixed hash order, all four
kinds in turn) and their gold documents stored with N/2 others drawn from the rest.
Small sizes are drawn several times (``SAMPLES``), so each size scores a hundred
questions or more. Every store is searched keyword only, vector only and hybrid; each
sample is indexed a second time with the translation lexicon's former rule (only words
seen twice or more, whatever the store's size; :data:`chaja.search.lexicon.SMALL_SAMPLE`)
and searched hybrid, so the two rules are compared on the same documents and questions,
and searched hybrid with each ``--priors`` value of ``search.background_prior``. Beside
nDCG@10, each hybrid cell reports how well the results' probability of being relevant
(``chaja.search.relevance``) holds: log loss over the top ten, and the mean probability
of a first result that is the gold and of one that is not.
Results: ``benchmarks/results/store-size.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import chaja
from chaja.config import Config
from chaja.eval.noise import compare_runs
from chaja.eval.runner import evaluate
from chaja.eval.single import single_scores
from chaja.search import lexicon

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import pair_store  # noqa: E402
from machine import describe  # noqa: E402

#: stores drawn per size: each store of N documents asks N/2 questions
SAMPLES = {20: 10, 100: 3, 1000: 1}


def draw(docs, questions, size: int, seed: int):
    """(documents, questions) of one sampled store: ``size // 2`` questions taken in turn from
    each kind (hash order from ``seed``), their gold documents, and others up to ``size``."""
    by_kind: dict[str, list] = {}
    for q in sorted(questions, key=lambda q: pair_store.order_key(f"size:{seed}:{q.id}")):
        by_kind.setdefault(q.kind, []).append(q)
    asked, kinds = [], sorted(by_kind)
    while len(asked) < size // 2 and any(by_kind.values()):
        for kind in kinds:
            if by_kind[kind] and len(asked) < size // 2:
                asked.append(by_kind[kind].pop(0))
    gold = {g for q in asked for g in q.gold}
    rest = sorted((d for d in docs if d.id not in gold), key=lambda d: pair_store.order_key(f"size:{seed}:{d.id}"))
    chosen = [d for d in docs if d.id in gold] + rest[: max(0, size - len(gold))]
    return chosen, asked


def paired(records: list[dict]) -> dict[str, dict[str, float]]:
    """Per-question nDCG@10 keyed by sample and question (a question can be drawn in several samples)."""
    return {f"{r['sample']}:{r['id']}": {"nDCG@10": single_scores(r["rank"])["nDCG@10"]} for r in records}


def calibration(records: list[dict]) -> dict:
    """How well each result's probability of being relevant (``chaja.search.relevance``) is
    calibrated: the mean log loss over the top ten documents (the gold relevant, the rest
    not), and the mean probability of a first result that is the gold and of one that is
    not. Empty where the results carry no probability (keyword or vector only)."""
    pairs = [(d["probability"], d["doc_id"] in r["gold"]) for r in records for d in r["documents"][:10]
             if d.get("probability") is not None]
    if not pairs:
        return {}
    loss = -sum(math.log(max(p if y else 1 - p, 1e-12)) for p, y in pairs) / len(pairs)
    first = [(r["documents"][0]["probability"], r["documents"][0]["doc_id"] in r["gold"]) for r in records
             if r["documents"] and r["documents"][0].get("probability") is not None]
    hit = [p for p, y in first if y]
    miss = [p for p, y in first if not y]
    return {"log_loss": loss, "p_first_gold": sum(hit) / max(len(hit), 1), "p_first_other": sum(miss) / max(len(miss), 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("CHAJA_DATA_DIR", REPO.parent / "shared" / "data")))
    ap.add_argument("--sizes", default="20,100,1000")
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--priors", type=lambda v: [float(x) for x in v.split(",")], default=[0.0, 100.0],
                    help="search.background_prior values searched hybrid besides the default (default: 0,100)")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "store-size.json")
    args = ap.parse_args()
    if not (args.data / "korquad-v1-dev").is_dir() or not (args.data / "scifact").is_dir():
        print(f"KorQuAD and SciFact are not under {args.data}; pass --data", file=sys.stderr)
        return 2
    docs, questions = pair_store.build(args.data)
    questions = pair_store.split(questions, args.split)
    cells = {"keyword": ("", ["search.mode=keyword"]), "vector": ("", ["search.mode=vector"]),
             "hybrid": ("", []), "hybrid, words seen twice": ("-twice", [])}
    cells.update({f"hybrid, prior {p:g}": ("", [f"search.background_prior={p}"]) for p in args.priors})
    results = {"machine": {**describe(), "chaja": chaja.__version__}, "split": args.split, "sizes": {}}
    work = Path(tempfile.mkdtemp(prefix="chaja-size-"))
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            records: dict[str, list[dict]] = {c: [] for c in cells}
            for seed in range(SAMPLES.get(size, 1)):
                stored, asked = draw(docs, questions, size, seed)
                t = time.perf_counter()
                every = lexicon.SMALL_SAMPLE
                for suffix, small_sample in (("", every), ("-twice", 0)):
                    lexicon.SMALL_SAMPLE = small_sample      # 0: the former rule, words seen twice or more
                    try:
                        with chaja.open(work / f"s{size}-{seed}{suffix}.chaja") as idx:
                            idx.add_documents(stored)
                    finally:
                        lexicon.SMALL_SAMPLE = every
                print(f"size {size} sample {seed}: {len(stored)} documents, {len(asked)} questions, "
                      f"indexed twice in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
                for cell, (suffix, overrides) in cells.items():
                    with chaja.open(work / f"s{size}-{seed}{suffix}.chaja", Config().override(overrides)) as idx:
                        out = work / "runs" / f"{size}-{seed}-{cell.replace(' ', '_').replace(',', '')}"
                        evaluate(idx, asked, out, stream=None)
                    records[cell] += [{**json.loads(line), "sample": seed}
                                      for line in (out / "records.jsonl").open(encoding="utf-8")
                                      if line.startswith('{"id"')]
            row = {}
            for cell, recs in records.items():
                ndcg = [single_scores(r["rank"])["nDCG@10"] for r in recs]
                kinds: dict[str, list[float]] = {}
                for r, v in zip(recs, ndcg):
                    kinds.setdefault(r["kind"], []).append(v)
                row[cell] = {"questions": len(ndcg), "nDCG@10": sum(ndcg) / len(ndcg),
                             "by_kind": {k: sum(v) / len(v) for k, v in sorted(kinds.items())},
                             **calibration(recs)}
                print(f"size {size:5d}  {cell:24s} nDCG@10 {row[cell]['nDCG@10']:.3f}  " +
                      " ".join(f"{k} {v:.3f}" for k, v in row[cell]["by_kind"].items()) +
                      (f"  log loss {row[cell]['log_loss']:.3f}, p of a first gold {row[cell]['p_first_gold']:.2f}, "
                       f"of a first non-gold {row[cell]['p_first_other']:.2f}" if "log_loss" in row[cell] else ""),
                      flush=True)
            for cell, recs in records.items():      # each hybrid variant against the default, paired
                if cell.startswith("hybrid,"):
                    (c,) = compare_runs(paired(records["hybrid"]), paired(recs), ["nDCG@10"])
                    row[cell]["vs_default"] = {"diff": c.diff, "ci": [c.ci_low, c.ci_high], "p": c.p,
                                               "verdict": c.verdict}
                    print(f"size {size:5d}  {cell:24s} vs hybrid: {c.diff:+.3f} [{c.ci_low:+.3f}, {c.ci_high:+.3f}] "
                          f"p {c.p:.3f} {c.verdict}", flush=True)
            results["sizes"][str(size)] = row
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = ["# Quality against store size", "", f"Split: {args.split}. Machine: {results['machine'].get('cpu', '')}.",
             "", "nDCG@10 (log loss of the results' probability of being relevant, over the top ten); "
             "* differs from hybrid with the defaults beyond noise (paired test)", "",
             "| documents | questions | " + " | ".join(cells) + " |", "|---|---|" + "---|" * len(cells)]
    for size, row in results["sizes"].items():
        first = next(iter(row.values()))
        lines.append(f"| {size} | {first['questions']} | " + " | ".join(
            f"{row[c]['nDCG@10']:.3f}" + (f" ({row[c]['log_loss']:.3f})" if "log_loss" in row[c] else "")
            + ("*" if row[c].get("vs_default", {}).get("verdict") in ("better", "worse") else "")
            for c in cells) + " |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
