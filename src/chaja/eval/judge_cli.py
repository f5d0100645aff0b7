"""``chaja judge``: pools to grade, agreement between judges, and the judged reference.

    chaja judge pool RUN... --store S [--store S2] --k 10 --out pool.jsonl [--csv pool.csv]
    chaja judge agreement --pool pool.jsonl --grades a.csv b.jsonl [--queue queue.csv] [--json]
    chaja judge reference --pool pool.jsonl --grades a.csv b.jsonl [--adjudication c.csv]
                          [--extend old.jsonl] --out reference.jsonl

Then ``chaja eval report RUN --reference reference.jsonl`` scores any run under each
version of the reference (:mod:`chaja.eval.reference`).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_judge_commands(subparsers) -> None:
    jd = subparsers.add_parser("judge", help="build judging pools, measure agreement, keep a judged reference")
    sub = jd.add_subparsers(dest="judge_command", required=True)

    p = sub.add_parser("pool", help="the deduplicated top k of several runs, as a file to grade (JSONL and CSV)")
    p.add_argument("runs", nargs="+", help="run folders (chaja eval run --out)")
    p.add_argument("--store", action="append", default=[], help="stores to read passages from (repeatable)")
    p.add_argument("--k", type=int, default=10, help="top k of each run (default 10)")
    p.add_argument("--out", required=True, help="pool file (JSON Lines)")
    p.add_argument("--csv", help="also write the pool as CSV with an empty grade column, for people")
    p.set_defaults(func=cmd_pool)

    for name, text in (("agreement", "agreement between judges and the queue of disagreements to adjudicate"),
                       ("reference", "the judged reference: agreed grades, adjudicated ones, abstentions kept")):
        p = sub.add_parser(name, help=text)
        p.add_argument("--pool", required=True)
        p.add_argument("--grades", nargs="+", required=True, metavar="FILE",
                       help="grade files, one a judge (CSV with pair_id,grade or JSONL); a judge is named by "
                            "a judge column or the file name")
        if name == "agreement":
            p.add_argument("--queue", help="write the pairs the judges disagree on as a CSV to grade, blind "
                                           "(no judge's grade in it), and as JSON Lines beside it")
            p.add_argument("--json", action="store_true")
            p.set_defaults(func=cmd_agreement)
        else:
            p.add_argument("--adjudication", help="the adjudicator's grades for the queue")
            p.add_argument("--extend", metavar="OLD", help="an earlier reference: keep it as it is and add "
                                                           "new pairs at the next version")
            p.add_argument("--out", required=True)
            p.set_defaults(func=cmd_reference)


def _open_stores(paths: list[str]) -> list:
    from chaja.stores import open_store

    return [open_store(p) for p in paths]


def cmd_pool(args: argparse.Namespace) -> int:
    from chaja.eval.judge_pool import build_pool, write_pool

    stores = _open_stores(args.store)
    try:
        items = build_pool(args.runs, args.k, stores)
    finally:
        for s in stores:
            s.close()
    write_pool(items, Path(args.out), Path(args.csv) if args.csv else None)
    missing = sum(1 for it in items if not it["in_store"])
    questions = len({it["question_id"] for it in items})
    print(f"{len(items)} pairs for {questions} questions from {len(args.runs)} runs (top {args.k}) → {args.out}"
          + (f" and {args.csv}" if args.csv else ""))
    if missing:
        print(f"warning: {missing} documents are in none of the given stores; their passages are empty",
              file=sys.stderr)
    return 0


def _gather(args: argparse.Namespace):
    from chaja.eval import reference as ref
    from chaja.eval.judge_pool import read_pool

    pool = read_pool(args.pool)
    sets = [ref.read_grades(path) for path in args.grades]
    return pool, sets, ref.collect(sets, {it["pair_id"] for it in pool})


def _fmt(x) -> str:
    return "—" if x is None else f"{x:.3f}"


def cmd_agreement(args: argparse.Namespace) -> int:
    from chaja.eval import reference as ref
    from chaja.eval.judge_pool import CSV_COLUMNS, write_pool

    pool, sets, by_pair = _gather(args)
    summary = ref.agreement_summary(by_pair, [j for j, _ in sets])
    queue = ref.disagreements(by_pair)
    if args.json:
        json.dump({**summary, "queue": queue}, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"judges: {', '.join(summary['judges'])}; {summary['pairs']} pairs graded of {len(pool)} in the pool; "
              f"{summary['abstentions']} abstentions")
        print(f"graded by two or more: {summary['pairs_graded_by_two_or_more']}; "
              f"exact agreement {_fmt(summary['exact_agreement'])}")
        if "cohen_kappa" in summary:
            print(f"Cohen's kappa {_fmt(summary['cohen_kappa'])} (quadratic weights {_fmt(summary['cohen_kappa_quadratic'])})")
        print(f"Krippendorff's alpha: ordinal {_fmt(summary['alpha_ordinal'])}, nominal {_fmt(summary['alpha_nominal'])}")
        print(f"to adjudicate: {len(queue)} pairs")
    if args.queue:
        wanted = set(queue)
        write_pool([it for it in pool if it["pair_id"] in wanted], Path(args.queue).with_suffix(".jsonl"),
                   Path(args.queue))
        if not args.json:
            print(f"queue written to {args.queue} (columns {', '.join(CSV_COLUMNS)}; no judge's grade in it)")
    return 0


def cmd_reference(args: argparse.Namespace) -> int:
    from chaja.eval import reference as ref

    pool, _, by_pair = _gather(args)
    adjudicated = ref.read_grades(args.adjudication) if args.adjudication else None
    if adjudicated:
        extra = sorted(set(adjudicated[1]) - set(ref.disagreements(by_pair)))
        if extra:
            print(f"note: the adjudicator graded {len(extra)} pairs that are not in dispute; those grades are unused",
                  file=sys.stderr)
    base = ref.read_reference(args.extend) if args.extend else None
    entries, pending = ref.combine(pool, by_pair, adjudicated, base)
    ref.write_reference(entries, Path(args.out))
    added = [e for e in entries if base is None or e["version"] > max(ref.versions(base), default=0)]
    kinds = {k: sum(1 for e in added if e["by"] == k) for k in ("agreed", "single", "adjudicated", "abstained")}
    print(f"reference {args.out}: {len(entries)} pairs, version {max(ref.versions(entries), default=0)}; added "
          f"{len(added)} (" + ", ".join(f"{v} {k}" for k, v in kinds.items()) + ")")
    if pending:
        print(f"{len(pending)} disputed pairs have no adjudicated grade and are left out "
              "(chaja judge agreement --queue, then --adjudication)", file=sys.stderr)
    return 0
