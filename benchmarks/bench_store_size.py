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
and searched hybrid, so the two rules are compared on the same documents and questions.
Results: ``benchmarks/results/store-size.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import chaja
from chaja.config import Config
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=Path(os.environ.get("CHAJA_DATA_DIR", REPO.parent / "shared" / "data")))
    ap.add_argument("--sizes", default="20,100,1000")
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "store-size.json")
    args = ap.parse_args()
    if not (args.data / "korquad-v1-dev").is_dir() or not (args.data / "scifact").is_dir():
        print(f"KorQuAD and SciFact are not under {args.data}; pass --data", file=sys.stderr)
        return 2
    docs, questions = pair_store.build(args.data)
    questions = pair_store.split(questions, args.split)
    cells = {"keyword": ("", ["search.mode=keyword"]), "vector": ("", ["search.mode=vector"]),
             "hybrid": ("", []), "hybrid, words seen twice": ("-twice", [])}
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
                    records[cell] += [json.loads(line) for line in (out / "records.jsonl").open(encoding="utf-8")
                                      if line.startswith('{"id"')]
            row = {}
            for cell, recs in records.items():
                ndcg = [single_scores(r["rank"])["nDCG@10"] for r in recs]
                kinds: dict[str, list[float]] = {}
                for r, v in zip(recs, ndcg):
                    kinds.setdefault(r["kind"], []).append(v)
                row[cell] = {"questions": len(ndcg), "nDCG@10": sum(ndcg) / len(ndcg),
                             "by_kind": {k: sum(v) / len(v) for k, v in sorted(kinds.items())}}
                print(f"size {size:5d}  {cell:24s} nDCG@10 {row[cell]['nDCG@10']:.3f}  " +
                      " ".join(f"{k} {v:.3f}" for k, v in row[cell]["by_kind"].items()), flush=True)
            results["sizes"][str(size)] = row
    finally:
        shutil.rmtree(work, ignore_errors=True)
    args.out.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = ["# Quality against store size", "", f"Split: {args.split}. Machine: {results['machine'].get('cpu', '')}.", "",
             "| documents | questions | " + " | ".join(cells) + " |", "|---|---|" + "---|" * len(cells)]
    for size, row in results["sizes"].items():
        first = next(iter(row.values()))
        lines.append(f"| {size} | {first['questions']} | " + " | ".join(f"{row[c]['nDCG@10']:.3f}" for c in cells) + " |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
