"""Retrieval quality on the public stores: keyword only, vector only and hybrid,
with the default configuration, beside the published reference scores.

    python benchmarks/bench_quality.py [--data ../shared/data] [--work runs/quality]
                                       [--sets react,react-handwritten,react-natural-dev,react-natural-test,
                                               vue-natural-dev,vue-natural-test,mixed,korquad,scifact,
                                               pairs-dev,pairs-test]

Each store is built once under ``--work`` (re-runs reuse it: indexing is
idempotent), each set is evaluated with the harness (records kept under
``--work/<set>/<mode>/``), and the table goes to
``benchmarks/results/quality.json`` (``--out``) with the machine it ran on. ``vue-natural-*``
are the natural questions over the second documentation store (``vue-docs``). ``pairs-*`` is the
bilingual store of KorQuAD paragraphs and SciFact abstracts (``pair_store.py``).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import chaja
from chaja.config import Config
from chaja.eval.beir import load_beir
from chaja.eval.canonical import build_canonical, react_store_paths
from chaja.eval.questions import read_questions
from chaja.eval.runner import evaluate
from chaja.eval.squad import load_squad

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
import pair_store  # noqa: E402
from machine import describe  # noqa: E402
PUBLISHED = {
    "korquad": {"BM25": 0.839, "multilingual-e5-small": 0.897},
    "scifact": {"BM25 (BEIR paper)": 0.665, "BM25 (pyserini flat)": 0.679, "multilingual-e5-small": 0.677},
}
MODES = {"keyword": ["search.mode=keyword"], "vector": ["search.mode=vector"], "hybrid": []}


def build(store: Path, docs=None, paths=None) -> None:
    with chaja.open(store) as idx:
        t = time.perf_counter()
        report = idx.add(paths) if paths else idx.add_documents(docs)
        if report.added or report.changed:
            print(f"  indexed {store.name}: {report.chunks} chunks in {time.perf_counter() - t:.0f} s", file=sys.stderr)


def sets(data: Path, work: Path, wanted: list[str]):
    natural = REPO / "benchmarks/questions/natural"
    if {"react", "react-handwritten", "react-natural-dev", "react-natural-test"} & set(wanted):
        store = work / "react.chaja"
        build(store, paths=react_store_paths(data))
        if "react" in wanted:
            yield "react", store, build_canonical(data)[0]
        if "react-handwritten" in wanted:
            yield "react-handwritten", store, read_questions(REPO / "benchmarks/questions/react-handwritten.jsonl")
        for split in ("dev", "test"):
            if f"react-natural-{split}" in wanted:
                yield f"react-natural-{split}", store, read_questions(natural / f"react-natural-{split}.jsonl")
    if {"vue-natural-dev", "vue-natural-test"} & set(wanted):
        # the second documentation store: Vue's docs, each page once in one language (store.tsv)
        store = work / "vue.chaja"
        build(store, paths=react_store_paths(data / "vue-docs"))
        for split in ("dev", "test"):
            if f"vue-natural-{split}" in wanted:
                yield f"vue-natural-{split}", store, read_questions(natural / f"vue-natural-{split}.jsonl")
    if "mixed" in wanted:
        store = work / "mixed.chaja"
        build(store, paths=[REPO / "tests/fixtures/mixed/docs"])
        yield "mixed", store, read_questions(REPO / "tests/fixtures/mixed/questions.jsonl")
    if "korquad" in wanted:
        kq = load_squad(data / "korquad-v1-dev" / "KorQuAD_v1.0_dev.json")
        store = work / "korquad.chaja"
        build(store, docs=kq.documents)
        yield "korquad", store, kq.questions
    if "scifact" in wanted:
        sf = load_beir(data / "scifact")
        store = work / "scifact.chaja"
        build(store, docs=sf.documents)
        yield "scifact", store, sf.questions
    if {"pairs-dev", "pairs-test"} & set(wanted):
        docs, questions = pair_store.build(data)
        store = work / "pairs.chaja"
        build(store, docs=docs)
        for split in ("dev", "test"):
            if f"pairs-{split}" in wanted:
                yield f"pairs-{split}", store, pair_store.split(questions, split)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("CHAJA_DATA_DIR", str(REPO.parent / "shared" / "data")))
    ap.add_argument("--work", default=str(REPO / "runs" / "quality"))
    ap.add_argument("--sets", default="react,react-handwritten,react-natural-dev,react-natural-test,"
                                      "vue-natural-dev,vue-natural-test,mixed,korquad,scifact,pairs-dev,pairs-test")
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "quality.json"))
    args = ap.parse_args()
    data, work = Path(args.data), Path(args.work)
    if not (data / "react-docs").is_dir():
        print(f"the public data sets are not in {data}; pass --data", file=sys.stderr)
        return 2
    work.mkdir(parents=True, exist_ok=True)
    results = {"machine": {**describe(), "chaja": chaja.__version__}, "config": Config().to_dict(), "published_nDCG@10": PUBLISHED, "sets": {}}
    for name, store, questions in sets(data, work, args.sets.split(",")):
        row = {"questions": len(questions)}
        for mode, overrides in MODES.items():
            with chaja.open(store, Config().override(overrides)) as idx:
                s = evaluate(idx, questions, work / name / mode, name=f"{name}-{mode}", stream=None)
            row[mode] = {"metrics": s["metrics"],
                         "by_kind": {k: v["metrics"]["nDCG@10"] for k, v in s.get("by_kind", {}).items()},
                         "R@5_by_kind": {k: v["metrics"]["R@5"] for k, v in s.get("by_kind", {}).items()},
                         # the share of the first ten results in the question's language
                         "same_language_by_kind": {k: v.get("same_language") for k, v in s.get("by_kind", {}).items()}}
            same = row[mode]["same_language_by_kind"]
            print(f"{name:18s} {mode:8s} nDCG@10 {s['metrics']['nDCG@10']:.3f}  " +
                  " ".join(f"{k} {v:.3f}" + (f" (same language {same[k]:.0%})" if same.get(k) is not None else "")
                           for k, v in sorted(row[mode]["by_kind"].items())), flush=True)
        results["sets"][name] = row
    Path(args.out).write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
