"""Store upkeep: ``chaja stats`` (what a store holds), ``check`` (is it whole; mend it),
``optimize`` (build the deferred vector graphs) and ``delete`` (remove documents)."""
from __future__ import annotations

import argparse
import sys
import time

from chaja.cli.common import add_common_options, load_config, open_existing, store_files
from chaja.cli.output import STATS_SCHEMA, delete_each, print_stats
from chaja.store_statistics import split_deferred


def add_optimize_command(sub) -> None:
    p = sub.add_parser("optimize", help="build the vector graphs and translation tables that index --defer-graphs"
                                        " left for later, and bring an older store's files and text to today's form")
    add_common_options(p)
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.add_argument("--vectors", choices=("int8", "float32"),
                   help="keep the vector files in this form from now on (SQLite store; int8, a quarter of the"
                        " bytes, is a new store's) and rewrite those in the other form")
    p.set_defaults(func=cmd_optimize)


def add_stats_command(sub) -> None:
    p = sub.add_parser("stats", help="what a store holds")
    add_common_options(p, hub=True)
    p.add_argument("--json", action="store_true", help=f"machine-readable output (schema {STATS_SCHEMA})")
    p.set_defaults(func=cmd_stats)


def add_check_command(sub) -> None:
    p = sub.add_parser("check", help="check that a store is whole (exit status 1 when it is not)")
    add_common_options(p)
    p.add_argument("--repair", action="store_true",
                   help="first mend what needs no encoding: keyword rows, orphans, statistics; damaged "
                        "documents are removed (index their files again)")
    p.set_defaults(func=cmd_check)


def add_delete_command(sub) -> None:
    p = sub.add_parser("delete", help="delete documents by id")
    p.add_argument("doc_ids", nargs="+")
    add_common_options(p, hub=True)
    p.set_defaults(func=cmd_delete)


def cmd_stats(args: argparse.Namespace) -> int:
    if args.hub:
        from chaja.cli.hub import stats_on_hub
        return stats_on_hub(args)
    with open_existing(args.store, load_config(args)) as idx:
        summary = idx.summary()
    print_stats(summary, args.json)
    return 0


def cmd_optimize(args: argparse.Namespace) -> int:
    with open_existing(args.store, load_config(args)) as idx:
        started = time.perf_counter()
        tell = None if args.quiet else (lambda step: print(f"  {step} ...", file=sys.stderr, flush=True))
        if args.vectors:
            encode = getattr(idx.store, "set_vector_encoding", None)
            if encode is None:
                print("--vectors is for a SQLite store: PostgreSQL keeps its vectors in its own columns",
                      file=sys.stderr)
                return 2
            encode(args.vectors)
        pending, size = idx.pending_upkeep(), _on_disk(args.store)
        moving, packing, stale_keywords = ("vectors" in pending), ("text" in pending), ("keywords" in pending)
        dropping = "terms" in pending
        built = idx.build_graphs(progress=tell)
        built, tables = split_deferred(built)
        left = idx.deferred_graphs()
        reclaim = getattr(idx.store, "reclaim_space", None)
        freed = reclaim() if reclaim is not None else 0
        packed = packing and not idx.text_to_pack()
        dropped = dropping and "terms" not in idx.pending_upkeep()
    now = _on_disk(args.store)           # closed: the write-ahead log folded in
    if moving:
        print(f"vector files written again, each vector kept once in the store's form:"
              f" {size / 1e6:,.1f} MB -> {now / 1e6:,.1f} MB")
    elif packed or dropped:
        done = [what for what, did in (("chunk text packed with the store's own dictionaries", packed),
                                       ("keyword rows the store's analyser makes again dropped", dropped)) if did]
        print(f"{' and '.join(done)}: {size / 1e6:,.1f} MB -> {now / 1e6:,.1f} MB")
    elif freed:
        print(f"gave back {freed / 1e6:,.1f} MB of free pages: {size / 1e6:,.1f} MB -> {now / 1e6:,.1f} MB")
    if stale_keywords:
        print("keyword file written again (it was missing or of an older format)")
    if built:
        print(f"vector graphs built: {', '.join(built)} ({time.perf_counter() - started:.1f} s)")
    if tables:
        print("translation tables built: each query word the store holds is looked up, not searched for")
    if not (built or tables):
        print("nothing to build: every vector field large enough for a graph has a current one")
    if left:
        print(f"still searched exactly: {', '.join(left)} (is the ann extra installed? pip install 'chaja[ann]')",
              file=sys.stderr)
        return 1
    return 0


def _on_disk(store: str) -> int:
    """Bytes of a SQLite store's file and every file beside it (0 for PostgreSQL)."""
    return sum(p.stat().st_size for p in store_files(store))


def cmd_check(args: argparse.Namespace) -> int:
    with open_existing(args.store, load_config(args)) as idx:
        if args.repair:
            for line in idx.repair():
                print(f"repaired: {line}")
        found, notes = idx.inspect()
        stats = idx.store.stats()
        staged = idx.store.staged() if hasattr(idx.store, "staged") else {}
    for f in found:
        print(f"fault: {f}")
    for n in notes:
        print(f"note: {n}")
    for doc_id, n in sorted(staged.items()):
        print(f"note: {n} chunks of {doc_id!r} are staged by an interrupted run, not shown in searches;"
              " indexing that document again resumes after them")
    if found:
        print(f"{len(found)} fault{'s' if len(found) != 1 else ''} in {args.store}", file=sys.stderr)
        return 1
    print(f"whole: {stats.documents} documents, {stats.chunks} chunks")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    if args.hub:
        from chaja.cli.hub import delete_on_hub
        return delete_on_hub(args)
    with open_existing(args.store, load_config(args)) as idx:
        return delete_each(idx.delete, args.doc_ids)
