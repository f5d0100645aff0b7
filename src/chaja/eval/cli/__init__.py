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
handler is stored as ``func`` and returns an exit code. One module per group:
:mod:`~chaja.eval.cli.run` (run a question set), :mod:`~chaja.eval.cli.reports`
(report, compare, pools, figure, score), :mod:`~chaja.eval.cli.tuning` (replay,
calibrate, abstention), :mod:`~chaja.eval.cli.sweep`, :mod:`~chaja.eval.cli.data`
(build-canonical, lint, load); :mod:`~chaja.eval.cli.app` assembles them.
"""
from __future__ import annotations

from chaja.eval.cli.app import add_eval_commands, main, route_eval_argv
from chaja.eval.cli.data import cmd_build_canonical, cmd_lint, cmd_load
from chaja.eval.cli.reports import cmd_compare, cmd_figure, cmd_pools, cmd_report, cmd_score
from chaja.eval.cli.run import RUN_OPTIONS, cmd_run
from chaja.eval.cli.sweep import cmd_sweep, parse_variant
from chaja.eval.cli.tuning import cmd_abstention, cmd_calibrate, cmd_replay

__all__ = [
    "RUN_OPTIONS", "add_eval_commands", "cmd_abstention", "cmd_build_canonical", "cmd_calibrate", "cmd_compare",
    "cmd_figure", "cmd_lint", "cmd_load", "cmd_pools", "cmd_replay", "cmd_report", "cmd_run", "cmd_score",
    "cmd_sweep", "main", "parse_variant", "route_eval_argv",
]
