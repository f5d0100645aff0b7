"""The main job on the embedded default: index the bilingual React docs store,
search it in Korean and English, and score it on the canonical question set.

    python -m chaja.demo --data ../shared/data --store runs/react-docs.chaja

Indexing is idempotent, so a second run reuses the store and goes straight to
searching and scoring.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chaja import progress
from chaja.cli.common import load_config
from chaja.index import Index
from chaja.snippets import snippet

EXAMPLES = [
    "리스트 렌더링할 때 key가 필요한 이유",
    "useEffect 의존성 배열",
    "how to share state between components",
    "Suspense fallback while loading",
    "상태 끌어올리기",
    "What is a pure component?",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m chaja.demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data", help="folder holding react-docs/")
    ap.add_argument("--store", default="runs/react-docs.chaja")
    ap.add_argument("--out", default=None, help="evaluation output folder (default: next to the store)")
    ap.add_argument("--config")
    ap.add_argument("--set", action="append")
    args = ap.parse_args(argv)

    from chaja.eval.canonical import build_canonical, react_store_paths
    from chaja.eval.report import print_summary
    from chaja.eval.runner import evaluate

    try:
        paths = react_store_paths(args.data)
    except FileNotFoundError as exc:
        print(f"error: the React docs data set is needed for the demo ({exc}); "
              "pass --data /path/to/data", file=sys.stderr)
        return 2
    cfg = load_config(args)
    with Index.open(args.store, cfg) as idx:
        print(f"1. indexing {len(paths)} React documentation pages (English and Korean) into {args.store}",
              flush=True)
        show, line = progress.indexing("   pages")
        try:
            report = idx.add(paths, progress=show)
        finally:
            line.close()
        print(f"   {report.added} added, {report.unchanged} unchanged, {report.chunks} chunks written "
              f"in {report.seconds:.0f} s")

        print("\n2. searching")
        for q in EXAMPLES:
            res = idx.search(q)
            print(f"\n   {q}")
            for d in res.documents[:3]:
                b = d.best
                where = f" § {b.chunk.heading}" if b.chunk.heading_path else ""
                print(f"     {d.rank}. [{b.chunk.lang}] {d.title}{where}")
            if res.documents:
                print(f"        {snippet(res.documents[0].best.chunk.text, res.terms, 120)}")

        print("\n3. scoring on the canonical question set (section headings and their translations)")
        questions, built = build_canonical(args.data)
        for row in built.lines():
            print("   " + row)
        out = Path(args.out) if args.out else Path(args.store).with_suffix("").parent / "canonical-eval"
        summary = evaluate(idx, questions, out, name="canonical")
        print()
        print(print_summary(summary, "Canonical"))
        print(f"\nrecords, run and summary: {out}/ (recompute with: chaja eval report {out})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
