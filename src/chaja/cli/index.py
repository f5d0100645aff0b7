"""``chaja index``: load, chunk, encode and store documents, then say what was stored,
what was skipped and why (or, with ``--hub``, send them to a running hub)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from chaja import progress
from chaja.cli.common import add_common_options, load_config, open_index, store_files
from chaja.cli.output import report_loading, terminal_safe
from chaja.loaders import LoadReport
from chaja.store_statistics import split_deferred

#: schema of ``chaja index --json``; fields are only ever added
INDEX_SCHEMA = "chaja.index/1"


def add_index_command(sub) -> None:
    p = sub.add_parser("index", help="index files and folders into a store")
    p.add_argument("paths", nargs="+", help="files or folders: PDF, HWP/HWPX, DOCX, PPTX, XLSX/CSV, text, "
                                            "Markdown, HTML, JSON Lines, images (OCR)")
    add_common_options(p, hub=True)
    p.add_argument("--prune", action="store_true", help="delete stored documents not found under PATHS")
    p.add_argument("--replace-moved", action="store_true",
                   help="store a document over one of the same id from another file that is still there "
                        "(by default that one is kept and named)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.add_argument("--json", action="store_true", help=f"a machine-readable summary (schema {INDEX_SCHEMA}); "
                                                     "progress still goes to stderr unless --quiet")
    p.add_argument("--reuse-vectors", action="append", metavar="STORE",
                   help="take passage vectors from another store file where the passage text is the same")
    p.add_argument("--defer-graphs", action="store_true",
                   help="a bulk load: build no vector graph and no translation tables now (searches are "
                        "exact, and slower on a large store, until `chaja optimize` builds them)")
    p.set_defaults(func=cmd_index)


def cmd_index(args: argparse.Namespace) -> int:
    cfg = load_config(args)
    if args.hub:
        if args.defer_graphs:
            raise ValueError("--defer-graphs is for a store; a hub builds its graphs as it writes")
        from chaja.cli.hub import index_on_hub
        return index_on_hub(args, cfg.index.language)
    load_report = LoadReport()
    show, line = progress.indexing(quiet=args.quiet)
    reading = progress.reading(quiet=args.quiet)
    new_files = _new_store_files(args.store)
    with open_index(args.store, cfg) as idx:
        if args.reuse_vectors:
            _reuse_vectors(idx, args.reuse_vectors)
        try:
            report = idx.add(args.paths, prune=args.prune, load_report=load_report, defer_graphs=args.defer_graphs,
                             progress=show, read_progress=reading, replace_moved=args.replace_moved)
        finally:
            line.close()
        getattr(idx.store, "checkpoint", lambda: None)()   # the -wal emptied: the size is the store's
        stats = idx.store.stats()
        deferred = idx.deferred_graphs()
    if load_report.files == 0 and stats.documents == 0:
        new_files()             # a run that read nothing leaves no empty store behind
    reused = f"vectors reused from other stores: {idx._encoder.reused}; newly encoded: {idx._encoder.encoded}" \
        if args.reuse_vectors else ""
    if args.json:
        json.dump(index_json(report, load_report, stats, deferred, report.missing(cfg.index.expect_doc_types)),
                  sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0 if load_report.files else 1
    print_index_report(report, load_report, stats, deferred, args.store, reused,
                       report.missing(cfg.index.expect_doc_types))
    if load_report.files == 0:
        print("error: nothing indexed: no file under the paths could be read", file=sys.stderr)
        return 1
    return 0


def _reuse_vectors(idx, stores: list[str]) -> None:
    """``--reuse-vectors``: the index's encoder takes a passage's vector from one of
    ``stores`` where the passage text is the same."""
    from chaja.encoders.reuse import ReusingEncoder
    from chaja.stores.sqlite import SqliteStore

    donors = [SqliteStore(p) for p in stores]
    idx._encoder = ReusingEncoder(idx.encoder, donors)
    for d in donors:
        d.close()


def index_json(report, load_report: LoadReport, stats, deferred: list[str], missing: list[str]) -> dict:
    """``chaja index --json`` (schema :data:`INDEX_SCHEMA`)."""
    return {"schema": INDEX_SCHEMA, "added": report.added, "changed": report.changed,
            "unchanged": report.unchanged, "removed": report.removed, "chunks_written": report.chunks,
            "seconds": round(report.seconds, 3), "store": {"documents": stats.documents, "chunks": stats.chunks,
                                                           "size_bytes": stats.size_bytes},
            "by_lang": dict(report.by_lang), "by_source": dict(report.by_source),
            "by_doc_type": dict(report.by_doc_type), "duplicates": report.duplicates,
            "discarded_staged": report.discarded_staged, "prune_refused": report.prune_refused or None,
            "kept_elsewhere": report.kept_elsewhere, "refused": report.refused,
            "warnings": [*load_report.problems, *missing],
            "skipped_files": [s.as_dict() for s in load_report.skipped], "files": load_report.files,
            "formats": dict(load_report.formats), "encodings": load_report.encodings,
            "deferred_graphs": deferred}


def print_index_report(report, load_report: LoadReport, stats, deferred: list[str], store: str, reused: str,
                       missing: list[str]) -> None:
    """``chaja index``'s summary on stdout, and its warnings and notes on stderr."""
    out = sys.stdout
    print(f"documents: {report.added} added, {report.changed} changed, {report.unchanged} unchanged, "
          f"{report.removed} removed", file=out)
    print(f"chunks written: {report.chunks}; store now holds {stats.documents} documents, "
          f"{stats.chunks} chunks, {stats.size_bytes / 1e6:.1f} MB", file=out)
    print(f"files read: {load_report.files}"
          + (" (" + ", ".join(f"{k} {n}" for k, n in load_report.formats.most_common()) + ")"
             if load_report.formats else ""), file=out)
    print(f"time: {report.seconds:.1f} s", file=out)
    graphs, tables = split_deferred(deferred)
    if graphs:
        print(f"vector graphs deferred: {', '.join(graphs)}; searches read those vectors exactly until "
              f"`chaja optimize {store}` builds them", file=out)
    if tables:
        print(f"translation tables deferred: each query word is looked for in the lexicon (the same "
              f"translations, a little slower) until `chaja optimize {store}` builds them", file=out)
    if report.discarded_staged:
        print(f"discarded {report.discarded_staged} staged chunks of interrupted documents no longer given", file=out)
    if reused:
        print(reused, file=out)
    for label, counts in (("language", report.by_lang), ("source", report.by_source), ("type", report.by_doc_type)):
        if counts and (len(counts) > 1 or "-" not in counts):
            print(f"by {label}: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()), file=out)
    report_loading(load_report)
    for d in report.duplicates:
        print(f"warning: document id {d!r} appeared more than once; the last one was kept", file=sys.stderr)
    if report.prune_refused:
        print(f"note: nothing pruned: {report.prune_refused}", file=sys.stderr)
    for k in [*report.kept_elsewhere, *report.refused]:
        print(f"warning: {terminal_safe(k)}", file=sys.stderr)
    for w in missing:
        print(f"warning: {w}", file=sys.stderr)


def _new_store_files(store: str):
    """A function that removes the files a new SQLite store at ``store`` created (nothing
    for a store that exists, or a PostgreSQL one)."""
    if store.startswith(("postgresql://", "postgres://")) or Path(store).exists():
        return lambda: None
    before = store_files(store)

    def remove() -> None:
        for p in store_files(store) - before:
            p.unlink()
    return remove
