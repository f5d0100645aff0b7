"""Whether two trees of evaluation records rank every question alike.

``bench_quality.py`` keeps each run's records under ``<work>/<set>/<mode>/records.jsonl``.
Run it with one version of the code, keep that tree, run it again with another over
the same stores, and compare: every question's ranked documents, their scores and
ranks in each list, the gate's verdict and the signals must be equal (the time a
search took is left out). For a change meant to leave search as it was.

    python benchmarks/same_rankings.py runs/quality-before runs/quality [--out results/same-rankings.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe  # noqa: E402

#: record fields that are measurements, not rankings
TIMING = ("ms",)


def records(path: Path) -> dict[str, dict]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "id" in row and "ranked" in row:             # the first line describes the run
            out[row["id"]] = {k: v for k, v in row.items() if k not in TIMING}
    return out


def compare(before: Path, after: Path) -> dict:
    runs = {}
    for path in sorted(before.rglob("records.jsonl")):
        name = str(path.parent.relative_to(before))
        other = after / path.relative_to(before)
        if not other.is_file():
            runs[name] = {"missing": str(other)}
            continue
        a, b = records(path), records(other)
        differ = sorted(q for q in a if a[q] != b.get(q))
        runs[name] = {"questions": len(a), "differ": len(differ), "first_differing": differ[:5],
                      "only_after": len(set(b) - set(a))}
    total = sum(r.get("questions", 0) for r in runs.values())
    moved = sum(r.get("differ", 0) + r.get("only_after", 0) for r in runs.values())
    missing = [n for n, r in runs.items() if "missing" in r]
    return {"runs": runs, "questions": total, "differ": moved, "missing": missing,
            "same": not moved and not missing and total > 0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    got = compare(args.before, args.after)
    for name, r in got["runs"].items():
        print(f"{name:32s} " + (f"missing in {args.after}" if "missing" in r else
                                f"{r['questions']:6d} questions, {r['differ']} differ"))
    print(f"{got['questions']} question records, {got['differ']} differ: " + ("same" if got["same"] else "NOT the same"))
    if args.out:
        args.out.write_text(json.dumps({"machine": describe(), **got}, indent=2) + "\n", encoding="utf-8")
    return 0 if got["same"] else 1


if __name__ == "__main__":
    sys.exit(main())
