"""What every command shares: the settings it runs under, the store it opens, and the
options (``--store``/``--hub``, ``--config``, ``--set``) it takes."""
from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
from pathlib import Path

from chaja import config_files
from chaja.config import Config
from chaja.index import Index
from chaja.stores import StoreError


def store_files(store: str) -> set[Path]:
    """The files of a SQLite store at ``store``: the file and every file beside it whose
    name starts with its name (write-ahead log, postings, vector files, graphs); none for
    a PostgreSQL store or a folder that is not there."""
    path = Path(store)
    if store.startswith(("postgresql://", "postgres://")) or not path.parent.is_dir():
        return set()
    return {p for p in path.parent.glob(glob.escape(path.name) + "*") if p.is_file()}  # a name may hold [ or *


def load_config(args: argparse.Namespace) -> Config:
    """The config file found (:mod:`chaja.config_files`), then the ``--set`` overrides."""
    return config_files.load(getattr(args, "config", None), getattr(args, "set", None))[0]


def open_index(store: str, config: Config) -> Index:
    return Index.open(store, config)


#: in a resident search process (:mod:`chaja.cli.resident`): the indexes it keeps open
#: between commands, by store and settings
held: dict[tuple[str, str], Index] | None = None


def open_existing(store: str, config: Config):
    """The index at ``store`` for a command that only reads it (or deletes from it), to
    use in a ``with`` block: a SQLite path that does not exist is an error, not a new
    empty store. In a resident process the index stays open for the next command."""
    if not store.startswith(("postgresql://", "postgres://")) and not Path(store).is_file():
        raise StoreError(f"no store at {store} (chaja index creates one)")
    if held is None:
        return Index.open(store, config)
    key = (os.path.realpath(store), json.dumps(config.to_dict(), sort_keys=True, default=str))
    if key not in held:
        held[key] = Index.open(store, config)
    return contextlib.nullcontext(held[key])


def add_common_options(p: argparse.ArgumentParser, store: bool = True, hub: bool = False) -> None:
    """``--store`` (or, with ``hub``, one of ``--store`` and ``--hub`` with ``--api-key``),
    then ``--config`` and ``--set``."""
    if store:
        where = p.add_mutually_exclusive_group(required=True) if hub else p
        where.add_argument("--store", required=not hub, help="store file, or a postgresql:// URL")
        if hub:
            where.add_argument("--hub", metavar="URL", help="a running hub (chaja serve) instead of a store")
            p.add_argument("--api-key", help="the hub's API key (default: $CHAJA_API_KEY)")

    p.add_argument("--config", help="TOML file with [index], [search], [encoder], [rerank], [hub] settings "
                                    "(default: $CHAJA_CONFIG, ./chaja.toml, then ~/.config/chaja/config.toml)")
    p.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", help="override one setting (repeatable)")
