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

from chaja.cli.app import EX_TEMPFAIL, main
from chaja.cli.output import print_stats
from chaja.cli.search import SEARCH_SCHEMA

__all__ = ["EX_TEMPFAIL", "SEARCH_SCHEMA", "main", "print_stats"]
