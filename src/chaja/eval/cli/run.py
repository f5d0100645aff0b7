"""``chaja eval run`` (and its short form ``chaja eval --store ...``): run a question set
through search, record every answer and score it."""
from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, Callable

from chaja.cli.common import load_config

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


def add_default_run(ev: argparse.ArgumentParser, open_index: Callable[[str, Any], Any]) -> None:
    """``chaja eval`` itself takes ``run``'s options (all optional) and runs when given them."""
    _run_arguments(ev, suppress=True)
    ev.set_defaults(func=lambda args: cmd_default(args, open_index, ev))


def add_run_command(sub, open_index: Callable[[str, Any], Any]) -> None:
    p = sub.add_parser("run", help="run a question set through search and score it")
    _run_arguments(p, suppress=False)
    p.set_defaults(func=lambda args: cmd_run(args, open_index))


def cmd_default(args: argparse.Namespace, open_index: Callable, parser: argparse.ArgumentParser) -> int:
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


def cmd_run(args: argparse.Namespace, open_index: Callable) -> int:
    from chaja.eval.questions import read_questions
    from chaja.eval.report import print_summary
    from chaja.eval.runner import evaluate
    from chaja.eval.single import CHUNK_DEPTH

    questions = read_questions(args.questions)
    if args.limit:
        questions = questions[: args.limit]
    cfg = load_config(args)
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
