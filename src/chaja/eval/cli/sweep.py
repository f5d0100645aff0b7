"""``chaja eval sweep``: every search setting measured against the base on one question
set (:mod:`chaja.eval.sweep`), with index-time settings as variant stores."""
from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import Any, Callable

from chaja.cli.common import load_config


def add_sweep_command(sub, open_index: Callable[[str, Any], Any]) -> None:
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


def parse_variant(spec: str) -> tuple[str, str, str]:
    """``SETTING=VALUE=STORE`` → (setting, value, store); ``NAME=STORE`` → ("store", NAME, STORE)."""
    parts = spec.split("=")
    if len(parts) >= 3 and all(parts[:3]):
        return parts[0], parts[1], "=".join(parts[2:])
    if len(parts) == 2 and all(parts):
        return "store", parts[0], parts[1]
    raise ValueError(f"--variant expects SETTING=VALUE=STORE (e.g. analyzer=kiwi=kiwi.chaja), got {spec!r}")


def cmd_sweep(args: argparse.Namespace, open_index: Callable) -> int:
    from chaja.eval.questions import read_questions
    from chaja.eval.sweep import format_table, select_settings, sweep

    questions = read_questions(args.questions)
    if args.limit:
        questions = questions[: args.limit]
    only = [k for k in (args.only or "").split(",") if k.strip()] or None
    settings = select_settings(only, args.values)
    specs = [parse_variant(v) for v in args.variant or []]
    cfg = load_config(args)
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
