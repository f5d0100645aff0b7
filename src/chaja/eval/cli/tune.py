"""``chaja tune``: choose search settings on your own questions (:mod:`chaja.eval.tune`)
and, with ``--write``, keep them in a config file."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from chaja.cli.common import load_config


def add_tune_command(sub, open_index: Callable[[str, Any], Any]) -> None:
    p = sub.add_parser("tune", help="choose search settings on your own questions, kept only where they hold up",
                       description="Splits the questions dev/test by a hash of their ids, sweeps the search "
                                   "settings on dev, keeps a change only where it wins beyond noise on dev and "
                                   "does not lose on test, prints the table and, with --write, sets the winners "
                                   "in a config file.")
    p.add_argument("--store", required=True, help="store file, or a postgresql:// URL")
    p.add_argument("--questions", required=True, help="your questions (JSON Lines with gold documents, "
                                                     "as chaja eval reads them)")
    p.add_argument("--out", default="runs/tune", help="folder for the runs (default: %(default)s)")
    p.add_argument("--config", help="TOML file: the current settings (default: the usual config file)")
    p.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", help="change the current settings")
    p.add_argument("--only", metavar="K1,K2", help="tune only these settings (e.g. gate_share,rrf_k)")
    p.add_argument("--write", metavar="FILE", help="set the chosen settings in this TOML file (e.g. chaja.toml)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(func=lambda args: cmd_tune(args, open_index))


def setting_text(value: Any) -> str:
    """A value as ``--set`` reads it."""
    return json.dumps(value) if isinstance(value, (bool, dict, list)) else str(value)


def cmd_tune(args: argparse.Namespace, open_index: Callable) -> int:
    from chaja.config_files import write_settings
    from chaja.eval.questions import read_questions
    from chaja.eval.tune import format_result, tune

    questions = read_questions(args.questions)
    only = [k for k in (args.only or "").split(",") if k.strip()] or None
    cfg = load_config(args)
    idx = open_index(args.store, cfg)
    try:
        result = tune(idx, questions, args.out, only=only)
    finally:
        if hasattr(idx, "close"):
            idx.close()
    (Path(args.out) / "tune.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2, ensure_ascii=False) if args.json else format_result(result))
    if args.write and result["chosen"]:
        write_settings(Path(args.write), [f"{k}={setting_text(v)}" for k, v in result["chosen"].items()])
        print(f"\nwrote {', '.join(result['chosen'])} to {args.write}", file=sys.stderr)
    elif args.write:
        print(f"\n{args.write} left as it was: nothing to change", file=sys.stderr)
    return 0
