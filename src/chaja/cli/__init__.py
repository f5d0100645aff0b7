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

from chaja.cli.app import EX_TEMPFAIL, INTERRUPTED, build_parser, main, store_failure
from chaja.cli.common import load_config, open_existing, open_index
from chaja.cli.config import cmd_config
from chaja.cli.hub import cmd_serve
from chaja.cli.index import INDEX_SCHEMA, cmd_index, index_json, print_index_report
from chaja.cli.output import STATS_SCHEMA, delete_each, print_stats, report_loading, terminal_safe, unsupported
from chaja.cli.search import SEARCH_SCHEMA, cmd_search, result_json, why_line
from chaja.cli.store import cmd_check, cmd_delete, cmd_optimize, cmd_stats

__all__ = [
    "EX_TEMPFAIL", "INDEX_SCHEMA", "INTERRUPTED", "SEARCH_SCHEMA", "STATS_SCHEMA", "build_parser", "cmd_check",
    "cmd_config", "cmd_delete", "cmd_index", "cmd_optimize", "cmd_search", "cmd_serve", "cmd_stats",
    "delete_each", "index_json", "load_config", "main", "open_existing", "open_index", "print_index_report",
    "print_stats", "report_loading", "result_json", "store_failure", "terminal_safe", "unsupported", "why_line",
]
