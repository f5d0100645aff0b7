"""``chaja`` command line: a thin shell over the library.

    chaja index PATH... --store FILE        load, chunk, encode and store documents
    chaja search "QUERY" --store FILE       hybrid search, with why each result ranked
    chaja config [--set K=V]                print every setting (TOML); --set writes the config file
    chaja stats --store FILE                what a store holds
    chaja delete DOC_ID... --store FILE     remove documents
    chaja check --store FILE                is the store whole? (exit status 1 when not)
    chaja serve --store FILE                the HTTP hub
    chaja eval ...                          the evaluation harness
    chaja judge ...                         judging pools, agreement, the judged reference
    chaja questions check FILE...           is a question set whole?

One module per command group: :mod:`~chaja.cli.index`, :mod:`~chaja.cli.search`,
:mod:`~chaja.cli.store` (stats, check, optimize, delete), :mod:`~chaja.cli.hub`
(serve, and the ``--hub`` forms), :mod:`~chaja.cli.config`; they share
:mod:`~chaja.cli.common` and :mod:`~chaja.cli.output`, and :mod:`~chaja.cli.app`
assembles the parser and runs a command (``main``).
"""
from __future__ import annotations

__all__ = ["EX_TEMPFAIL", "SEARCH_SCHEMA", "main", "print_stats"]

_WHERE = {"EX_TEMPFAIL": "chaja.cli.app", "main": "chaja.cli.app", "print_stats": "chaja.cli.output",
          "SEARCH_SCHEMA": "chaja.cli.search"}


def __getattr__(name: str):
    """The package's names, imported when first asked for: the ``chaja`` command's entry
    point (:mod:`chaja.cli.launch`) asks a resident search process before it imports any
    of chaja's libraries."""
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'chaja.cli' has no attribute {name!r}")
