"""The relevance cut-off (``search.min_probability``) against questions with and without
an answer in the store.

    python benchmarks/bench_cutoff.py [--work runs/quality] [--thresholds 0.05,0.1,0.2,0.3]

Each store that ``bench_quality.py`` built is searched once, with the default settings,
by its natural test split (the mixed store: its 120 questions) together with unanswerable
questions written for it (``questions/unanswerable/``: about other products, other
software, cooking and travel, in English and Korean). The React unanswerable set is left
out: the probability mapping was fit on it with the dev splits. Every result carries its
probability of being relevant; a cut-off t keeps the results with p ≥ t, and a search left
with none abstains. Per t:

- abstention recall: the share of unanswerable questions that abstain;
- abstention precision: the share of abstaining questions that are unanswerable;
- answers lost: the share of answerable questions whose gold page was in the top ten and
  falls below t (the cut keeps the top of the ranking, so nothing else moves);
- nDCG@10 of the answerable questions after the cut.

Results: ``benchmarks/results/cutoff.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import chaja
from chaja.eval.questions import read_questions
from chaja.eval.runner import evaluate
from chaja.eval.single import single_scores

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from machine import describe  # noqa: E402

QUESTIONS = REPO / "benchmarks" / "questions"
SETS = {
    "React test": ("react.chaja", [QUESTIONS / "natural" / "react-natural-test.jsonl"]),
    "Vue test": ("vue.chaja", [QUESTIONS / "natural" / "vue-natural-test.jsonl",
                               QUESTIONS / "unanswerable" / "vue-unanswerable.jsonl"]),
    "mixed": ("mixed.chaja", [REPO / "tests" / "fixtures" / "mixed" / "questions.jsonl",
                              QUESTIONS / "unanswerable" / "mixed-unanswerable.jsonl"]),
}


def at_threshold(records: list[dict], t: float) -> dict:
    answerable = [r for r in records if r.get("gold")]
    unanswerable = [r for r in records if not r.get("gold")]

    def probabilities(r):
        return [d.get("probability", 0.0) for d in r["documents"]]

    def abstains(r):
        return not any(p >= t for p in probabilities(r))

    def rank_after(r):
        rank = r["rank"]
        return rank if rank is not None and r["documents"][rank - 1].get("probability", 0.0) >= t else None

    lost = sum(1 for r in answerable if r["rank"] is not None and rank_after(r) is None)
    abstained_u = sum(abstains(r) for r in unanswerable)
    abstained = abstained_u + sum(abstains(r) for r in answerable)
    return {"threshold": t,
            "abstention_recall": abstained_u / len(unanswerable) if unanswerable else None,
            "abstention_precision": abstained_u / abstained if abstained else None,
            "answers_lost": lost / len(answerable),
            "nDCG@10": sum(single_scores(rank_after(r))["nDCG@10"] for r in answerable) / len(answerable),
            "answerable": len(answerable), "unanswerable": len(unanswerable)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", type=Path, default=REPO / "runs" / "quality")
    ap.add_argument("--thresholds", default="0,0.05,0.1,0.2,0.3")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "cutoff.json")
    args = ap.parse_args()
    thresholds = [float(t) for t in args.thresholds.split(",")]
    results = {"machine": {**describe(), "chaja": chaja.__version__}, "sets": {}}
    with tempfile.TemporaryDirectory(prefix="chaja-cutoff-") as tmp:
        for name, (store, files) in SETS.items():
            path = args.work / store
            if not path.is_file():
                print(f"skipped {name}: {path} not found (build it with benchmarks/bench_quality.py)", file=sys.stderr)
                continue
            questions = [q for f in files for q in read_questions(f)]
            with chaja.open(path) as idx:
                evaluate(idx, questions, Path(tmp) / name, stream=None)
            records = [json.loads(line) for line in (Path(tmp) / name / "records.jsonl").open(encoding="utf-8")
                       if line.startswith('{"id"')]
            results["sets"][name] = [at_threshold(records, t) for t in thresholds]
            for row in results["sets"][name]:
                print(f"{name:10s} t {row['threshold']:.2f}: abstention recall {row['abstention_recall'] or 0:.2f}, "
                      f"precision {row['abstention_precision'] or 0:.2f}, answers lost {row['answers_lost']:.3f}, "
                      f"nDCG@10 {row['nDCG@10']:.3f}", flush=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    lines = ["# Relevance cut-off", "", f"Machine: {results['machine'].get('cpu', '')}.", "",
             "| set | min_probability | unanswerable abstained (recall) | abstentions unanswerable (precision) "
             "| answerable: gold lost | answerable nDCG@10 |", "|---|---|---|---|---|---|"]
    for name, rows in results["sets"].items():
        for r in rows:
            rec = "—" if r["abstention_recall"] is None else f"{r['abstention_recall']:.2f} of {r['unanswerable']}"
            prec = "—" if r["abstention_precision"] is None else f"{r['abstention_precision']:.2f}"
            lines.append(f"| {name} | {r['threshold']:g} | {rec} | {prec} | {r['answers_lost']:.3f} of "
                         f"{r['answerable']} | {r['nDCG@10']:.3f} |")
    args.out.with_suffix(".md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out} and {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
