"""What the eval commands that search share: the settings a run searches under."""
from __future__ import annotations

import argparse


def run_config(args: argparse.Namespace):
    """The config file given (or found), then the ``--set`` overrides."""
    from chaja import config_files

    return config_files.load(args.config, args.set)[0]
