"""The ``chaja eval`` parser assembled from the command groups, the ``eval --store ...``
routing, and the stand-alone entry (``python -m chaja.eval.cli``)."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from chaja.eval.cli.data import add_build_canonical_command, add_lint_command, add_load_command
from chaja.eval.cli.reports import (add_compare_command, add_figure_command, add_pools_command, add_report_command,
                                    add_score_command)
from chaja.eval.cli.run import add_default_run, add_run_command
from chaja.eval.cli.sweep import add_sweep_command
from chaja.eval.cli.tuning import add_abstention_command, add_calibrate_command, add_replay_command


def add_eval_commands(subparsers: Any, open_index: Callable[[str, Any], Any]) -> argparse.ArgumentParser:
    """Register ``eval`` and its subcommands; ``open_index(store, config)`` opens an index."""
    ev = subparsers.add_parser("eval", help="evaluate search on question sets",
                               description="Evaluation harness: run question sets, report, compare, figures.")
    add_default_run(ev, open_index)
    sub = ev.add_subparsers(dest="eval_command", metavar="COMMAND")
    add_run_command(sub, open_index)
    for add in (add_report_command, add_compare_command, add_pools_command, add_replay_command,
                add_calibrate_command):
        add(sub)
    add_sweep_command(sub, open_index)
    for add in (add_abstention_command, add_figure_command, add_score_command, add_build_canonical_command,
                add_lint_command, add_load_command):
        add(sub)
    return ev


def route_eval_argv(argv: list[str]) -> list[str]:
    """``eval --store ...`` → ``eval run --store ...`` (for a main CLI that prefers explicit routing)."""
    if len(argv) >= 2 and argv[0] == "eval" and argv[1].startswith("--") and argv[1] not in ("--help", "-h"):
        return ["eval", "run", *argv[1:]]
    return argv


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
