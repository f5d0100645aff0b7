"""``chaja config``: print every setting as TOML, or write ``--set`` settings to the
config file."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from chaja import config_files
from chaja.cli.common import add_common_options
from chaja.config import Config


def add_config_command(sub) -> None:
    p = sub.add_parser("config", help="print the configuration as TOML; with --set, write those settings "
                                      "to the config file (./chaja.toml when there is none)")
    add_common_options(p, store=False)
    p.set_defaults(func=cmd_config)


def cmd_config(args: argparse.Namespace) -> int:
    if args.set:
        path = config_files.find_config(args.config) or Path(config_files.LOCAL_NAME)
        config_files.write_settings(path, args.set)
        print(f"# wrote {', '.join(a.split('=', 1)[0].strip() for a in args.set)} to {path}")
        cfg = Config.load(path)
    else:
        cfg, path = config_files.load(args.config)
        print(f"# settings from {path}" if path else "# defaults (no config file found)")
    sys.stdout.write(cfg.to_toml())
    return 0
