"""Retrieval over real office documents: the shared PDF, HWP, HWPX, DOCX, PPTX, XLSX
and CP949 files indexed as they are, searched with the questions in
``tests/fixtures/documents/questions.jsonl`` (each with its gold document and the
page, slide, row or paragraph that answers it), in hybrid, keyword-only and
vector-only mode.

Per question: the gold document's rank among the grouped results (nDCG@10 =
1 / log2(rank + 1), 0 when missed; R@1, R@3) and whether the result cites the
right place: the gold document's best chunk's location overlaps the gold range
(``cited@10``: among questions whose first gold document, the one the location is
in, is found in the top 10). Reported
overall, per format and per question/document language pair, with the paired
bootstrap of hybrid against each single list from the harness (:mod:`chaja.eval.noise`).

    python benchmarks/eval_documents.py                    # indexes into runs/documents.chaja
    python benchmarks/eval_documents.py --store runs/documents.chaja --reuse
"""
from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_results  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ROOT.parent / "shared" / "data" / "documents"
QUESTIONS = ROOT / "tests" / "fixtures" / "documents" / "questions.jsonl"
MODES = ("hybrid", "keyword", "vector")


def overlaps(location, gold: dict) -> bool:
    return (location is not None and location.unit == gold["unit"]
            and location.first <= gold["last"] and gold["first"] <= location.last)


def score(idx, questions: list[dict], mode: str) -> list[dict]:
    rows = []
    for q in questions:
        res = idx.search(q["text"], settings={"mode": mode})
        rank, cited = 0, False
        for d in res.documents:
            if d.doc_id in q["gold"]:
                rank = d.rank       # the location is the first gold document's: judged only there
                cited = overlaps(d.best.chunk.location, q["location"]) if d.doc_id == q["gold"][0] else None
                break
        rows.append({"id": q["id"], "kind": q["kind"], "format": q["kind"].split("-")[0], "rank": rank,
                     "nDCG@10": 1 / math.log2(rank + 1) if 0 < rank <= 10 else 0.0,
                     "R@1": float(rank == 1), "R@3": float(0 < rank <= 3), "cited": cited if rank else None})
    return rows


def summary(rows: list[dict]) -> dict:
    found = [r for r in rows if r["cited"] is not None]
    return {"questions": len(rows), **{m: round(statistics.mean(r[m] for r in rows), 3) for m in ("nDCG@10", "R@1", "R@3")},
            "cited@10": round(sum(r["cited"] for r in found) / len(found), 3) if found else None}


def grouped(rows: list[dict], key: str) -> dict:
    out = defaultdict(list)
    for r in rows:
        out[r[key]].append(r)
    return {k: summary(v) for k, v in sorted(out.items())}


def markdown(report: dict) -> str:
    m = report["machine"]
    lines = ["# Retrieval over real office documents", "",
             f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}. The {report['files']} files of the shared "
             "documents folder indexed with the defaults ("
             + (f"{report['index_seconds']} s" if report["index_seconds"] is not None else "by an earlier run")
             + f", {report['chunks']} chunks); "
             f"{report['questions']} questions (`tests/fixtures/documents/questions.jsonl`). cited@10: of the questions whose "
             "document is in the top 10, the share whose best chunk there cites the gold page, slide, row or paragraph.", "",
             "| mode | nDCG@10 | R@1 | R@3 | cited@10 |", "|---|---|---|---|---|"]
    for mode in MODES:
        s = report["modes"][mode]["all"]
        lines.append(f"| {mode} | {s['nDCG@10']} | {s['R@1']} | {s['R@3']} | {s['cited@10']} |")
    lines += ["", "Hybrid against each single list (paired bootstrap on nDCG@10):", ""]
    for single, row in report["paired"].items():
        lines.append(f"- {single}: {row}")
    for key in ("format", "kind"):
        lines += ["", f"## By {key}", "", "| " + key + " | questions | hybrid nDCG@10 | keyword | vector | hybrid cited@10 |",
                  "|---|---|---|---|---|---|"]
        for k, s in report["modes"]["hybrid"][f"by_{key}"].items():
            kw = report["modes"]["keyword"][f"by_{key}"][k]["nDCG@10"]
            vec = report["modes"]["vector"][f"by_{key}"][k]["nDCG@10"]
            lines.append(f"| {k} | {s['questions']} | {s['nDCG@10']} | {kw} | {vec} | {s['cited@10']} |")
    misses = [r for r in report["modes"]["hybrid"]["rows"] if r["rank"] != 1 or not r["cited"]]
    lines += ["", "## Hybrid: questions not answered at rank 1 with the right place", "",
              "| id | rank | cited |", "|---|---|---|"] + [f"| {r['id']} | {r['rank'] or '-'} | {r['cited']} |" for r in misses]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--store", default=str(ROOT / "runs" / "documents.chaja"))
    ap.add_argument("--reuse", action="store_true", help="search the store as it is (no re-index)")
    ap.add_argument("--out", default="documents-retrieval")
    args = ap.parse_args(argv)
    if not DOCUMENTS.is_dir():
        print(f"error: {DOCUMENTS} is absent (the shared office documents)", file=sys.stderr)
        return 2
    import chaja
    from chaja.eval.noise import compare_runs

    store = Path(args.store)
    if not args.reuse:
        for p in store.parent.glob(store.name + "*"):
            p.unlink()
        store.parent.mkdir(parents=True, exist_ok=True)
    questions = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    with chaja.open(store) as idx:
        start = time.perf_counter()
        report_ = None if args.reuse else idx.add([DOCUMENTS])
        seconds = None if args.reuse else round(time.perf_counter() - start, 1)
        files = report_.files if report_ else sum(1 for p in DOCUMENTS.iterdir() if p.is_file())
        report = {"machine": describe(), "files": files, "index_seconds": seconds,
                  "chunks": idx.store.stats().chunks, "questions": len(questions), "modes": {}, "paired": {}}
        for mode in MODES:
            rows = score(idx, questions, mode)
            report["modes"][mode] = {"all": summary(rows), "by_format": grouped(rows, "format"),
                                     "by_kind": grouped(rows, "kind"), "rows": rows}
    hybrid = {r["id"]: {"nDCG@10": r["nDCG@10"]} for r in report["modes"]["hybrid"]["rows"]}
    for single in ("keyword", "vector"):
        other = {r["id"]: {"nDCG@10": r["nDCG@10"]} for r in report["modes"][single]["rows"]}
        (row,) = compare_runs(other, hybrid, ["nDCG@10"])
        report["paired"][single] = (f"{row.mean_a:.3f} → hybrid {row.mean_b:.3f}, Δ {row.mean_b - row.mean_a:+.3f}, "
                                    f"95% CI [{row.ci_low:+.3f}, {row.ci_high:+.3f}], {row.verdict}")
    write_results(args.out, report, markdown(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
