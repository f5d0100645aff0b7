"""Reading finished runs: ``chaja eval report`` (a run's summary, recomputed),
``compare`` (two runs, paired), ``pools`` (the reranker tables), ``figure`` (runs as a
bar chart) and ``score`` (a TREC run against a question file)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_report_command(sub) -> None:
    p = sub.add_parser("report", help="recompute a run's summary from its records")
    p.add_argument("dir")
    p.add_argument("--write", action="store_true", help="write summary.json (default: check it)")
    p.add_argument("--reference", metavar="FILE", help="also score the run's graded pools against a judged "
                                                       "reference (chaja judge reference), under every version")
    p.add_argument("--version", type=int, help="with --reference: only this reference version")
    p.add_argument("--html", metavar="OUT.html", help="also write the report as one self-contained HTML file")
    p.set_defaults(func=cmd_report)


def add_compare_command(sub) -> None:
    p = sub.add_parser("compare", help="paired bootstrap and randomization test of two runs")
    p.add_argument("dir_a")
    p.add_argument("dir_b")
    p.add_argument("--resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print the comparison as JSON")
    p.add_argument("--by", choices=("kind", "lang"),
                   help="also compare nDCG@10 within each question kind (language pair) or language")
    p.add_argument("--pools", action="store_true",
                   help="also pair the pool metrics (Hit@1-50, nDCG@10, selected-prefix precision; answerable pools)")
    p.set_defaults(func=cmd_compare)


def add_pools_command(sub) -> None:
    p = sub.add_parser("pools", help="the reranker evaluation's tables (Hit@1-50, nDCG@10, selected-prefix "
                                     "precision, random-order reference) from runs' records")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--view", choices=("answerable", "all"), default="answerable")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_pools)


def add_figure_command(sub) -> None:
    p = sub.add_parser("figure", help="bar chart comparing runs, with 95%% bootstrap intervals")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--out", required=True, help="output prefix: PREFIX.svg, PREFIX.png")
    p.add_argument("--format", default="svg,png", help="comma-separated: svg (built in), png (needs chaja[figures])")
    p.add_argument("--title", default="")
    p.set_defaults(func=cmd_figure)


def add_score_command(sub) -> None:
    p = sub.add_parser("score", help="score a TREC run against a question file")
    p.add_argument("--run", required=True, help="TREC run file")
    p.add_argument("--questions", required=True, help="question file (single gold or graded)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_score)


def cmd_report(args: argparse.Namespace) -> int:
    from chaja.eval.report import SUMMARY, dumps_summary, print_summary, report

    summary = report(args.dir, write=args.write)
    print(print_summary(summary))
    if args.reference:
        from chaja.eval import reference as ref
        from chaja.eval.report import graded_table

        entries = ref.read_reference(args.reference)
        for version in ([args.version] if args.version is not None else ref.versions(entries)):
            scored = ref.score_run(args.dir, entries, version)
            print(f"\nreference {args.reference}, version {version} ({scored['judged_pairs']} judged pairs)")
            print(graded_table(scored))
    if args.html:
        from chaja.eval.html_report import write_html

        write_html(args.dir, Path(args.html), summary)
        print(f"\nwrote {args.html}", file=sys.stderr)
    path = Path(args.dir) / SUMMARY
    if args.write:
        return 0
    if not path.exists():
        print(f"\n{path} is missing; run with --write to create it", file=sys.stderr)
        return 1
    if path.read_text(encoding="utf-8") != dumps_summary(summary):
        print(f"\n{path} differs from the summary recomputed from records.jsonl", file=sys.stderr)
        return 1
    print(f"\n{path} reproduced exactly from records.jsonl", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from chaja.eval.noise import compare_groups, compare_runs, format_comparison
    from chaja.eval.report import question_metrics, read_records
    from chaja.eval.single import METRICS

    a, b = question_metrics(args.dir_a), question_metrics(args.dir_b)
    only = len(set(a) ^ set(b))
    rows = compare_runs(a, b, METRICS, resamples=args.resamples, seed=args.seed)
    meta_a, records_a = read_records(args.dir_a)
    name_a = meta_a.get("name") or Path(args.dir_a).name
    name_b = read_records(args.dir_b)[0].get("name") or Path(args.dir_b).name
    groups = []
    if args.by:
        group_of = {r["id"]: r.get(args.by) or "-" for r in records_a}
        groups = compare_groups(a, b, group_of, "nDCG@10", resamples=args.resamples, seed=args.seed)
    pooled = _compare_pools(args) if getattr(args, "pools", False) else []
    if args.json:
        out = {"a": name_a, "b": name_b, "unpaired": only, "metrics": [r.to_dict() for r in rows]}
        if args.by:
            out["by_" + args.by] = [r.to_dict() for r in groups]
        if pooled:
            out["pools"] = [r.to_dict() for r in pooled]
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(f"A = {name_a}, B = {name_b}; diff = B - A; bootstrap and sign-flip randomization, "
              f"{args.resamples} resamples, seed {args.seed}")
        print(format_comparison(rows, name_a, name_b))
        if only:
            print(f"({only} questions answered by only one run were left out)")
        if groups:
            print(f"\nnDCG@10 by {args.by}:")
            print(format_comparison(groups, name_a, name_b, label=args.by, count=True))
        if pooled:
            print("\nwithin the recorded pools (answerable in both runs):")
            print(format_comparison(pooled, name_a, name_b, count=True))
    return 0


def _compare_pools(args: argparse.Namespace) -> list:
    """``compare --pools``: each pool metric paired over the questions both runs have it for."""
    from chaja.eval.noise import compare_runs
    from chaja.eval.pools import PAIRED, pool_question_metrics

    pooled = []
    pa, pb = pool_question_metrics(args.dir_a), pool_question_metrics(args.dir_b)
    shared = [q for q in pa if q in pb]
    for m in PAIRED:
        ids = [q for q in shared if m in pa[q] and m in pb[q]]
        if ids:
            pooled += compare_runs({q: pa[q] for q in ids}, {q: pb[q] for q in ids}, [m],
                                   resamples=args.resamples, seed=args.seed)
    return pooled


def cmd_pools(args: argparse.Namespace) -> int:
    from chaja.eval.pools import format_pools, pool_summary

    summaries = [pool_summary(d) for d in args.dirs]
    if args.json:
        print(json.dumps(summaries, ensure_ascii=False, indent=2))
    else:
        print(format_pools(summaries, args.view))
    return 0


def cmd_figure(args: argparse.Namespace) -> int:
    from chaja.eval.figures import series_from_runs, write_png, write_svg

    formats = [f.strip().lower() for f in args.format.split(",") if f.strip()]
    unknown = [f for f in formats if f not in ("svg", "png")]
    if unknown:
        print(f"error: unknown format(s) {unknown}; use svg and/or png", file=sys.stderr)
        return 2
    series = series_from_runs(args.dirs)
    if len({s.question_ids for s in series}) > 1:
        print("warning: the runs scored different question sets; their bars are not paired", file=sys.stderr)
    code = 0
    if "svg" in formats:
        print(write_svg(f"{args.out}.svg", series, title=args.title))
    if "png" in formats:
        try:
            print(write_png(f"{args.out}.png", series, title=args.title))
        except ImportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            code = 1
    return code


def cmd_score(args: argparse.Namespace) -> int:
    from chaja.eval.questions import read_questions
    from chaja.eval.report import print_summary, question_row, summarize
    from chaja.eval.runner import question_fields
    from chaja.eval.trec import read_run

    questions = read_questions(args.questions)
    run = read_run(args.run)
    rows = []
    for q in questions:
        rec = question_fields(q)
        rec["ranked"] = [d for d, _ in run.get(q.id, [])]
        rows.append(question_row(rec))
    summary = summarize({"name": Path(args.run).name}, rows)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
    else:
        print(print_summary(summary))
    missing = sum(1 for q in questions if q.id not in run)
    if missing:
        print(f"({missing} questions have no ranking in the run and score as misses)", file=sys.stderr)
    return 0
