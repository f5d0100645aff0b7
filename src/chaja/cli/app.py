"""The ``chaja`` parser assembled from the command groups, and :func:`main`: run the
command chosen, and turn what went wrong into a message and an exit status."""
from __future__ import annotations

import argparse
import os
import sys

from chaja import __version__
from chaja.cli.common import open_index
from chaja.cli.config import add_config_command
from chaja.cli.hub import add_serve_command
from chaja.cli.index import add_index_command
from chaja.cli.search import add_search_command
from chaja.cli.store import add_check_command, add_delete_command, add_optimize_command, add_stats_command
from chaja.client import HubError
from chaja.search.searcher import QueryError
from chaja.stores import StoreBusy, StoreError

#: exit status of a command that found the store busy (another process writing it): try again later
EX_TEMPFAIL = 75

#: what an interrupted command leaves, said after "interrupted"
INTERRUPTED = {
    "index": ": every document stored before the stop is kept whole, and the step under way was rolled back; "
             "run the same command again to finish (documents already stored are not encoded again)",
    "optimize": ": the graphs not built are searched exactly until chaja optimize runs again",
}


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="chaja", description="Hybrid search for Korean and English documents.")
    ap.add_argument("--version", action="version", version=f"chaja {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)
    for add in (add_index_command, add_optimize_command, add_search_command, add_config_command,
                add_stats_command, add_check_command, add_delete_command, add_serve_command):
        add(sub)
    try:
        from chaja.eval.cli import add_eval_commands
    except ImportError:
        pass
    else:
        add_eval_commands(sub, open_index)
        from chaja.eval.cli.tune import add_tune_command

        add_tune_command(sub, open_index)
        from chaja.eval.judge_cli import add_judge_commands
        from chaja.eval.question_check import add_questions_commands

        add_judge_commands(sub)
        add_questions_commands(sub)
    return ap


def store_failure(exc: Exception, store: str) -> tuple[str, int]:
    """A sentence and an exit status for an SQLite error the store at ``store`` did not put
    in words itself (:mod:`chaja.stores.sqlite_errors`): 75 when it was busy, else 2."""
    import sqlite3

    from chaja.stores import sqlite_errors

    known = isinstance(exc, sqlite3.Error) and sqlite_errors.kind(exc) in ("busy", "full", "readonly", "ioerr")
    said = sqlite_errors.explain(exc, store) if known else None
    if said is None:
        return f"the store failed: {exc}", 2
    return str(said), EX_TEMPFAIL if isinstance(said, StoreBusy) else 2


def main(argv: list[str] | None = None) -> int:
    import sqlite3

    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (QueryError, StoreError, ValueError, FileNotFoundError, ImportError, HubError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        # a busy store is temporary, and so is a hub's 503: its store busy, its encoders loading
        busy = isinstance(exc, StoreBusy) or (isinstance(exc, HubError) and exc.status == 503)
        return EX_TEMPFAIL if busy else 2
    except sqlite3.Error as exc:
        message, status = store_failure(exc, getattr(args, "store", None) or "the store")
        print(f"error: {message}", file=sys.stderr)
        return status
    except KeyboardInterrupt:
        print(f"interrupted{INTERRUPTED.get(args.command, '')}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`chaja … | head`): stop quietly, as a process killed by
        # SIGPIPE would, and keep Python from failing again when it flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
