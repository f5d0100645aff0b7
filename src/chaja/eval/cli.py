"""``chaja eval``: the evaluation harness on the command line.

    chaja eval run --store FILE --questions Q.jsonl --out DIR [--name N] [--config F] [--set S.K=V ...]
    chaja eval --store FILE --questions Q.jsonl --out DIR            (same as ``run``)
    chaja eval report DIR [--write]
    chaja eval compare DIR_A DIR_B [--resamples N] [--seed S]
    chaja eval sweep --store FILE --questions Q.jsonl --out DIR [--only K1,K2] [--values K=V1,V2] [--grid]
                     [--variant SETTING=VALUE=STORE ...] [--config F] [--set S.K=V ...]
    chaja eval abstention DIR [--coverage C[,C...]] [--rule youden|keep] [--keep 0.95]
    chaja eval figure DIR... --out PREFIX [--format svg,png]
    chaja eval score --run RUN.trec --questions Q.jsonl              (graded or single-gold scoring of a TREC run)
    chaja eval build-canonical [--data DIR] --out Q.jsonl [--paths FILE]
    chaja eval lint --store-headings SRC [--store-headings SRC ...] Q.jsonl
    chaja eval load beir DIR [--split test] --docs D.jsonl --questions Q.jsonl
    chaja eval load squad FILE --docs D.jsonl --questions Q.jsonl

:func:`add_eval_commands` registers these on the main parser's subparsers; each
handler is stored as ``func`` and returns an exit code.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any, Callable

RUN_OPTIONS = ("store", "questions", "out")


def _run_arguments(p: argparse.ArgumentParser, suppress: bool) -> None:
    kw: dict[str, Any] = {"default": argparse.SUPPRESS} if suppress else {}
    p.add_argument("--store", required=not suppress, help="store file, or a postgresql:// URL", **kw)
    p.add_argument("--questions", required=not suppress, help="question file (JSON Lines)", **kw)
    p.add_argument("--out", required=not suppress, help="folder for records.jsonl, run.trec, summary.json", **kw)
    p.add_argument("--name", help="run name (default: the folder name)", **kw)
    p.add_argument("--config", help="TOML file with [index], [search], [encoder] settings", **kw)
    p.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE",
                   help="override one setting (repeatable)", **kw)
    p.add_argument("--progress", type=int, metavar="N", help="progress line every N questions (0 = none)",
                   **({"default": argparse.SUPPRESS} if suppress else {"default": 100}))
    p.add_argument("--limit", type=int, metavar="N", help="only the first N questions", **kw)
    p.add_argument("--depth", type=int, metavar="N", help="documents recorded a question (default 10; 50 for "
                   "Hit@50 and reranker pools; search.top_k is raised to match)", **kw)


def add_eval_commands(subparsers: Any, open_index: Callable[[str, Any], Any]) -> argparse.ArgumentParser:
    """Register ``eval`` and its subcommands; ``open_index(store, config)`` opens an index."""
    ev = subparsers.add_parser("eval", help="evaluate search on question sets",
                               description="Evaluation harness: run question sets, report, compare, figures.")
    _run_arguments(ev, suppress=True)
    ev.set_defaults(func=lambda args: _cmd_default(args, open_index, ev))
    sub = ev.add_subparsers(dest="eval_command", metavar="COMMAND")

    p = sub.add_parser("run", help="run a question set through search and score it")
    _run_arguments(p, suppress=False)
    p.set_defaults(func=lambda args: cmd_run(args, open_index))

    p = sub.add_parser("report", help="recompute a run's summary from its records")
    p.add_argument("dir")
    p.add_argument("--write", action="store_true", help="write summary.json (default: check it)")
    p.add_argument("--reference", metavar="FILE", help="also score the run's graded pools against a judged "
                                                       "reference (chaja judge reference), under every version")
    p.add_argument("--version", type=int, help="with --reference: only this reference version")
    p.add_argument("--html", metavar="OUT.html", help="also write the report as one self-contained HTML file")
    p.set_defaults(func=cmd_report)

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

    p = sub.add_parser("pools", help="the reranker evaluation's tables (Hit@1-50, nDCG@10, selected-prefix "
                                     "precision, random-order reference) from runs' records")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--view", choices=("answerable", "all"), default="answerable")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_pools)

    p = sub.add_parser("replay", help="a reranked run under other [rerank] settings, from its records (no model)")
    p.add_argument("dir")
    p.add_argument("--out", required=True, help="folder for the replayed run")
    p.add_argument("--name", help="run name (default: the folder name)")
    p.add_argument("--set", action="append", metavar="rerank.KEY=VALUE", default=[],
                   help="depth (0 = no reranker), scale, shift, threshold, min_k, max_k (default: the run's own)")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("calibrate", help="fit rerank.scale and rerank.shift on a reranked development run")
    p.add_argument("dir")
    p.add_argument("--check", metavar="DIR", help="also report the fitted mapping's losses on this (held-out) run")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("sweep", help="measure every search setting against the base, one at a time",
                       description="One-at-a-time (or --grid) sweep of search settings; each cell is a run "
                                   "in OUT/<setting>=<value>/ compared with OUT/base/ by the paired noise test.")
    p.add_argument("--store", required=True, help="store file, or a postgresql:// URL")
    p.add_argument("--questions", required=True, help="question file (JSON Lines)")
    p.add_argument("--out", required=True, help="folder for the cells' runs, sweep.json and sweep.md")
    p.add_argument("--config", help="TOML file: the base settings (default: the production defaults)")
    p.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", help="change the base (repeatable)")
    p.add_argument("--only", metavar="K1,K2", help="sweep only these settings (e.g. rrf_k,gate)")
    p.add_argument("--values", action="append", metavar="KEY=V1,V2",
                   help="values for a setting, replacing or adding to the default list (repeatable; "
                        "a JSON list for objects: source_weights=[{\"news\": 1.2}])")
    p.add_argument("--grid", action="store_true", help="every combination of the selected settings' values")
    p.add_argument("--variant", action="append", metavar="SETTING=VALUE=STORE",
                   help="another store built with an index-time setting, e.g. analyzer=kiwi=kiwi.chaja (repeatable)")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N questions")
    p.add_argument("--resamples", type=int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=lambda args: cmd_sweep(args, open_index))

    p = sub.add_parser("abstention", help="abstention threshold from a run's signals (unanswerable questions)",
                       description="Replays abstain ⇔ top_cosine < τ ∧ keyword_coverage < c on a run's records; "
                                   "prints the curve and the chosen τ, writes DIR/abstention.json and .svg.")
    p.add_argument("dir")
    p.add_argument("--coverage", metavar="C[,C...]",
                   help="keyword coverage bound(s) c (default: the run's search.abstain_coverage)")
    p.add_argument("--rule", choices=("youden", "keep"), default="youden",
                   help="youden: max rejected + kept share − 1; keep: largest τ keeping --keep of R@10")
    p.add_argument("--keep", type=float, default=0.95, help="share of answerable R@10 to keep (rule keep)")
    p.add_argument("--step", type=float, default=0.01, help="τ step of the printed table")
    p.set_defaults(func=cmd_abstention)

    p = sub.add_parser("figure", help="bar chart comparing runs, with 95%% bootstrap intervals")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--out", required=True, help="output prefix: PREFIX.svg, PREFIX.png")
    p.add_argument("--format", default="svg,png", help="comma-separated: svg (built in), png (needs chaja[figures])")
    p.add_argument("--title", default="")
    p.set_defaults(func=cmd_figure)

    p = sub.add_parser("score", help="score a TREC run against a question file")
    p.add_argument("--run", required=True, help="TREC run file")
    p.add_argument("--questions", required=True, help="question file (single gold or graded)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("build-canonical", help="canonical heading questions from the react-docs data")
    p.add_argument("--data", help="react-docs folder or the data folder holding it (default: ../shared/data)")
    p.add_argument("--out", required=True, help="question file to write")
    p.add_argument("--paths", help="also write the store's page paths, one a line (to index)")
    p.add_argument("--keep-untranslated", action="store_true",
                   help="keep cross-language questions whose heading is the same in both languages")
    p.set_defaults(func=cmd_build_canonical)

    p = sub.add_parser("lint", help="flag questions sharing three consecutive content words with a heading")
    p.add_argument("questions")
    p.add_argument("--store-headings", action="append", required=True, metavar="SRC",
                   help="react-docs folder, folder of .md files, .md file, or text file of headings (repeatable)")
    p.add_argument("--both-languages", action="store_true",
                   help="for a react-docs folder: headings of both languages of every stored page")
    p.set_defaults(func=cmd_lint)

    p = sub.add_parser("load", help="convert a public benchmark to documents + questions (JSON Lines)")
    lsub = p.add_subparsers(dest="format", metavar="FORMAT", required=True)
    b = lsub.add_parser("beir", help="BEIR layout: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    b.add_argument("dir")
    b.add_argument("--split", default="test")
    s = lsub.add_parser("squad", help="SQuAD-format JSON (KorQuAD)")
    s.add_argument("file")
    for q in (b, s):
        q.add_argument("--docs", required=True, help="documents JSONL to write")
        q.add_argument("--questions", required=True, help="questions JSONL to write")
        q.add_argument("--name", help="source / kind name (default: the data set's folder name)")
        q.set_defaults(func=cmd_load)
    return ev


def route_eval_argv(argv: list[str]) -> list[str]:
    """``eval --store ...`` → ``eval run --store ...`` (for a main CLI that prefers explicit routing)."""
    if len(argv) >= 2 and argv[0] == "eval" and argv[1].startswith("--") and argv[1] not in ("--help", "-h"):
        return ["eval", "run", *argv[1:]]
    return argv


# ---- handlers --------------------------------------------------------------------------

def _cmd_default(args: argparse.Namespace, open_index: Callable, parser: argparse.ArgumentParser) -> int:
    if all(hasattr(args, k) for k in RUN_OPTIONS):
        for key, default in (("name", None), ("config", None), ("set", None), ("progress", 100), ("limit", None)):
            if not hasattr(args, key):
                setattr(args, key, default)
        return cmd_run(args, open_index)
    given = [k for k in RUN_OPTIONS if hasattr(args, k)]
    if given:
        missing = ", ".join(f"--{k}" for k in RUN_OPTIONS if not hasattr(args, k))
        print(f"error: eval run also needs {missing}", file=sys.stderr)
    else:
        parser.print_help(sys.stderr)
    return 2


def _config(args: argparse.Namespace):
    from chaja import config_files

    return config_files.load(args.config, args.set)[0]


def cmd_run(args: argparse.Namespace, open_index: Callable) -> int:
    from chaja.eval.questions import read_questions
    from chaja.eval.report import print_summary
    from chaja.eval.runner import evaluate
    from chaja.eval.single import CHUNK_DEPTH

    questions = read_questions(args.questions)
    if args.limit:
        questions = questions[: args.limit]
    cfg = _config(args)
    depth = getattr(args, "depth", None) or CHUNK_DEPTH
    if depth < 1:
        raise ValueError(f"--depth must be at least 1, not {depth}")
    cfg.search.top_k = max(cfg.search.top_k, depth)
    index = open_index(args.store, cfg)
    ctx = index if hasattr(index, "__enter__") else contextlib.nullcontext(index)
    with ctx as idx:
        summary = evaluate(idx, questions, args.out, name=args.name, progress_every=args.progress, depth=depth)
    print(print_summary(summary))
    print(f"\nwrote {Path(args.out) / 'records.jsonl'}, run.trec, summary.json", file=sys.stderr)
    return 0


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
    pooled = []
    if getattr(args, "pools", False):
        from chaja.eval.pools import PAIRED, pool_question_metrics
        pa, pb = pool_question_metrics(args.dir_a), pool_question_metrics(args.dir_b)
        shared = [q for q in pa if q in pb]
        for m in PAIRED:
            ids = [q for q in shared if m in pa[q] and m in pb[q]]
            if ids:
                pooled += compare_runs({q: pa[q] for q in ids}, {q: pb[q] for q in ids}, [m],
                                       resamples=args.resamples, seed=args.seed)
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


def parse_variant(spec: str) -> tuple[str, str, str]:
    """``SETTING=VALUE=STORE`` → (setting, value, store); ``NAME=STORE`` → ("store", NAME, STORE)."""
    parts = spec.split("=")
    if len(parts) >= 3 and all(parts[:3]):
        return parts[0], parts[1], "=".join(parts[2:])
    if len(parts) == 2 and all(parts):
        return "store", parts[0], parts[1]
    raise ValueError(f"--variant expects SETTING=VALUE=STORE (e.g. analyzer=kiwi=kiwi.chaja), got {spec!r}")


def cmd_pools(args: argparse.Namespace) -> int:
    from chaja.eval.pools import format_pools, pool_summary

    summaries = [pool_summary(d) for d in args.dirs]
    if args.json:
        print(json.dumps(summaries, ensure_ascii=False, indent=2))
    else:
        print(format_pools(summaries, args.view))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from chaja.config import Config
    from chaja.eval.replay import replay
    from chaja.eval.report import print_summary, read_records

    meta, _ = read_records(args.dir)
    cfg = Config()
    for key, value in ((meta.get("config") or {}).get("rerank") or {}).items():
        cfg.set(f"rerank.{key}", value)
    for a in args.set:
        key, eq, value = a.partition("=")
        if not eq or not key.strip().startswith("rerank."):
            raise ValueError(f"--set expects rerank.KEY=VALUE, got {a!r}")
        cfg.set(key.strip(), value.strip())
    summary = replay(args.dir, args.out, cfg.rerank, name=args.name)
    print(print_summary(summary))
    print(f"\nwrote {Path(args.out) / 'records.jsonl'}, run.trec, summary.json", file=sys.stderr)
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from chaja.eval.calibrate import examples, fit, losses
    from chaja.eval.report import read_records

    meta, _ = read_records(args.dir)
    rerank = (meta.get("config") or {}).get("rerank") or {}
    result = fit(args.dir, rerank.get("scale", 1.0), rerank.get("shift", 0.0))
    if args.check:
        scores, labels = examples(args.check)
        result["check"] = {"run": args.check, "examples": len(scores), "useful": sum(labels),
                           "before": losses(scores, labels, rerank.get("scale", 1.0), rerank.get("shift", 0.0)),
                           "after": losses(scores, labels, result["scale"], result["shift"])}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['examples']} reranked documents, {result['useful']} useful")
    print(f"fitted mapping: p = 1 / (1 + exp(-({result['scale']:.6g} * score + {result['shift']:.6g})))")
    for label, part in (("this run", result),) + ((("check run", result["check"]),) if args.check else ()):
        b, a = part["before"], part["after"]
        print(f"  {label}: log loss {b['log_loss']:.4f} -> {a['log_loss']:.4f}, "
              f"Brier {b['brier']:.4f} -> {a['brier']:.4f}")
    print(f"\nuse it: --set rerank.scale={result['scale']:.6g} --set rerank.shift={result['shift']:.6g}")
    return 0


def cmd_sweep(args: argparse.Namespace, open_index: Callable) -> int:
    from chaja.eval.questions import read_questions
    from chaja.eval.sweep import format_table, select_settings, sweep

    questions = read_questions(args.questions)
    if args.limit:
        questions = questions[: args.limit]
    only = [k for k in (args.only or "").split(",") if k.strip()] or None
    settings = select_settings(only, args.values)
    specs = [parse_variant(v) for v in args.variant or []]
    cfg = _config(args)
    with contextlib.ExitStack() as stack:
        def opened(store: str) -> Any:
            idx = open_index(store, cfg)
            if hasattr(idx, "__enter__"):
                stack.enter_context(idx)
            return idx
        index = opened(args.store)
        variants = [(setting, value, opened(store)) for setting, value, store in specs]
        result = sweep(index, questions, args.out, settings=settings, grid=args.grid, variants=variants,
                       resamples=args.resamples, seed=args.seed)
    print(format_table(result))
    print(f"\nwrote {Path(args.out) / 'sweep.json'}, sweep.md and one run folder per cell", file=sys.stderr)
    return 0


def cmd_abstention(args: argparse.Namespace) -> int:
    from chaja.eval.abstention import ABSTENTION_JSON, ABSTENTION_SVG, abstention_report, format_report

    coverages = None
    if args.coverage:
        try:
            coverages = [float(c) for c in args.coverage.split(",") if c.strip()]
        except ValueError:
            raise ValueError(f"--coverage expects numbers, got {args.coverage!r}") from None
    result = abstention_report(args.dir, coverages, rule=args.rule, keep=args.keep)
    print(format_report(result, step=args.step))
    print(f"\nwrote {Path(args.dir) / ABSTENTION_JSON} and {ABSTENTION_SVG}", file=sys.stderr)
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


def cmd_build_canonical(args: argparse.Namespace) -> int:
    from chaja.eval.canonical import build_canonical, react_store_paths
    from chaja.eval.datadir import data_dir
    from chaja.eval.questions import write_questions

    data = Path(args.data) if args.data else data_dir()
    questions, rep = build_canonical(data, keep_untranslated=args.keep_untranslated)
    n = write_questions(args.out, questions)
    print("\n".join(rep.lines()))
    print(f"wrote {n} questions to {args.out}")
    if args.paths:
        paths = react_store_paths(data)
        Path(args.paths).write_text("".join(f"{p}\n" for p in paths), encoding="utf-8")
        print(f"wrote {len(paths)} page paths to {args.paths}")
    return 0


def cmd_lint(args: argparse.Namespace) -> int:
    from chaja.eval.lint import headings_from, lint_questions
    from chaja.eval.questions import read_questions

    headings: list[str] = []
    for src in args.store_headings:
        headings.extend(headings_from(src, both_languages=args.both_languages))
    questions = read_questions(args.questions)
    hits = lint_questions(questions, headings)
    for h in hits:
        print(f"{h.question_id}\t{h.question}\tshares '{' '.join(h.shared)}' with heading: {h.heading}")
    flagged = len({h.question_id for h in hits})
    print(f"{flagged} of {len(questions)} questions share three consecutive content words "
          f"with one of {len(set(headings))} headings", file=sys.stderr)
    return 1 if flagged else 0


def cmd_load(args: argparse.Namespace) -> int:
    from chaja.eval.export import write_documents
    from chaja.eval.questions import write_questions

    if args.format == "beir":
        from chaja.eval.beir import load_beir
        data = load_beir(args.dir, split=args.split, name=args.name)
        note = f"{data.judgments} positive judgments; {data.unanswerable} queries without one skipped"
    else:
        from chaja.eval.squad import load_squad
        data = load_squad(args.file, name=args.name)
        note = (f"{data.articles} articles, {data.paragraph_entries} paragraph entries, "
                f"{data.merged} repeats merged")
    nd = write_documents(args.docs, data.documents)
    nq = write_questions(args.questions, data.questions)
    print(f"{nd} documents → {args.docs}; {nq} questions → {args.questions} ({note})")
    return 0


def main(argv: list[str] | None = None, open_index: Callable | None = None) -> int:
    """Stand-alone entry (``python -m chaja.eval.cli``); ``run`` needs an ``open_index``."""
    def _no_index(store: str, config: Any) -> Any:
        from chaja.index import Index
        return Index.open(store, config)

    ap = argparse.ArgumentParser(prog="chaja")
    sub = ap.add_subparsers(dest="command", required=True)
    add_eval_commands(sub, open_index or _no_index)
    args = ap.parse_args(route_eval_argv(list(sys.argv[1:] if argv is None else argv)))
    try:
        return int(args.func(args) or 0)
    except (ValueError, FileNotFoundError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
