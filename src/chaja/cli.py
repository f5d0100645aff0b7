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
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

from chaja import __version__, config_files, progress
from chaja.client import HubError
from chaja.config import Config
from chaja.index import Index
from chaja.loaders import LoadReport
from chaja.filters import Filters
from chaja.search.result_json import SEARCH_SCHEMA, result_json, why_line  # noqa: F401 - part of the CLI's API
from chaja.search.searcher import QueryError, check_query, check_top_k
from chaja.snippets import marked, snippet
from chaja.stores import StoreBusy, StoreError

#: schemas of ``chaja stats --json`` and ``chaja index --json``; fields are only ever added
STATS_SCHEMA, INDEX_SCHEMA = "chaja.stats/1", "chaja.index/1"


def load_config(args: argparse.Namespace) -> Config:
    """The config file found (:mod:`chaja.config_files`), then the ``--set`` overrides."""
    return config_files.load(getattr(args, "config", None), getattr(args, "set", None))[0]


def open_index(store: str, config: Config) -> Index:
    return Index.open(store, config)


def open_existing(store: str, config: Config) -> Index:
    """The index at ``store`` for a command that only reads it (or deletes from it): a
    SQLite path that does not exist is an error, not a new empty store."""
    if not store.startswith(("postgresql://", "postgres://")) and not Path(store).is_file():
        raise StoreError(f"no store at {store} (chaja index creates one)")
    return Index.open(store, config)


def _common(p: argparse.ArgumentParser, store: bool = True, hub: bool = False) -> None:
    if store:
        where = p.add_mutually_exclusive_group(required=True) if hub else p
        where.add_argument("--store", required=not hub, help="store file, or a postgresql:// URL")
        if hub:
            where.add_argument("--hub", metavar="URL", help="a running hub (chaja serve) instead of a store")
            p.add_argument("--api-key", help="the hub's API key (default: $CHAJA_API_KEY)")

    p.add_argument("--config", help="TOML file with [index], [search], [encoder], [rerank], [hub] settings "
                                    "(default: $CHAJA_CONFIG, ./chaja.toml, then ~/.config/chaja/config.toml)")
    p.add_argument("--set", action="append", metavar="SECTION.KEY=VALUE", help="override one setting (repeatable)")


# ---- index ---------------------------------------------------------------
def cmd_index(args: argparse.Namespace) -> int:
    cfg = load_config(args)
    if args.hub:
        if args.defer_graphs:
            raise ValueError("--defer-graphs is for a store; a hub builds its graphs as it writes")
        from chaja import cli_hub
        return cli_hub.index(args, cfg.index.language)
    load_report = LoadReport()
    show, line = progress.indexing(quiet=args.quiet)
    reading = progress.reading(quiet=args.quiet)
    new_files = _new_store_files(args.store)
    with open_index(args.store, cfg) as idx:
        if args.reuse_vectors:
            from chaja.encoders.reuse import ReusingEncoder
            from chaja.stores.sqlite import SqliteStore

            donors = [SqliteStore(p) for p in args.reuse_vectors]
            idx._encoder = ReusingEncoder(idx.encoder, donors)
            for d in donors:
                d.close()
        try:
            report = idx.add(args.paths, prune=args.prune, load_report=load_report, defer_graphs=args.defer_graphs,
                             progress=show, read_progress=reading, replace_moved=args.replace_moved)
        finally:
            line.close()
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
    if deferred:
        print(f"vector graphs deferred: {', '.join(deferred)}; searches read those vectors exactly until "
              f"`chaja optimize {store}` builds them", file=out)
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


def report_loading(load_report: LoadReport) -> None:
    """What the readers noticed (warnings) and every file not read with its reason, on stderr."""
    for p in load_report.problems:
        print(f"warning: {terminal_safe(p)}", file=sys.stderr)
    for path, encoding in load_report.encodings.items():
        print(f"note: {terminal_safe(path)}: read as {encoding.upper()}", file=sys.stderr)
    for s in load_report.skipped:
        print(f"skipped: {terminal_safe(str(s))}", file=sys.stderr)
    if load_report.skipped:
        print(f"note: {unsupported(load_report.skipped)}", file=sys.stderr)


def terminal_safe(text: str) -> str:
    """Control characters (from file names, say) shown as escapes, not sent to the terminal."""
    return "".join(ch if ch.isprintable() or ch in "\t" else repr(ch)[1:-1] for ch in text)


def unsupported(skipped: list) -> str:
    """``skipped 3 files: 2 of types chaja does not read (.exe 2), 1 could not be read``."""
    kinds = Counter(Path(s.path).suffix.lower() or "(no extension)" for s in skipped if not s.failed)
    failed = sum(1 for s in skipped if s.failed)
    parts = []
    if kinds:
        parts.append(f"{sum(kinds.values())} of types chaja does not read ("
                     + ", ".join(f"{k} {n}" for k, n in kinds.most_common()) + ")")
    if failed:
        parts.append(f"{failed} could not be read")
    return f"skipped {len(skipped)} file{'s' if len(skipped) != 1 else ''}: " + ", ".join(parts)


def _new_store_files(store: str):
    """A function that removes the files a new SQLite store at ``store`` created (nothing
    for a store that exists, or a PostgreSQL one)."""
    if store.startswith(("postgresql://", "postgres://")) or Path(store).exists():
        return lambda: None
    pattern = glob.escape(Path(store).name) + "*"            # a name may hold [ or *
    before = set(Path(store).parent.glob(pattern)) if Path(store).parent.is_dir() else set()

    def remove() -> None:
        for p in set(Path(store).parent.glob(pattern)) - before:
            if p.is_file():
                p.unlink()
    return remove


# ---- search --------------------------------------------------------------
def cmd_search(args: argparse.Namespace) -> int:
    if args.hub:
        from chaja import cli_hub
        return cli_hub.search(args)
    cfg = load_config(args)
    check_query(args.query)               # before the model loads
    check_top_k(args.k)
    filters = Filters.parse(args.filter or [])
    with open_existing(args.store, cfg) as idx:
        res = idx.search(args.query, top_k=args.k, filters=filters)
    if args.json:
        json.dump(result_json(res, args.k or cfg.search.top_k), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    gate = ("lists fused: " + ", ".join(res.lists)) if res.lists else "no list fused"
    if not res.keyword_used:
        gate += "; keyword list gated off"
    print(f"query: {res.query}   terms: {' '.join(res.terms[:20])}{' …' if len(res.terms) > 20 else ''}   ({gate})")
    if res.reranker:
        print(f"reranked by {res.reranker}; selected prefix: {res.selected} of {len(res.documents)}")
    if res.parts:
        print("also searched as two parts: " + " | ".join(res.parts) + "   (documents fused by reciprocal rank)")
    if not res.documents:
        print("no results")
    for d in res.documents:
        b = d.best
        cite = f", {b.chunk.location.label}" if b.chunk.location else ""
        print()
        print(terminal_safe(f"{d.rank:>2}. {d.title}   [{d.doc_id}{cite}]"))
        if b.chunk.heading_path:
            print(f"    § {b.chunk.heading}")
        text = snippet(b.chunk.text, res.terms)
        print(f"    {marked(text, res.terms) if sys.stdout.isatty() else text}")
        print(f"    why: {why_line(d, res.keyword_used)}")
        if res.selected is not None and d.rank == res.selected and d.rank < len(res.documents):
            print(f"\n    ── selected prefix ends here ({res.selected} of {len(res.documents)}: "
                  f"rerank.threshold, min_k, max_k) ──")
    return 0


# ---- small commands -------------------------------------------------------
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


def cmd_stats(args: argparse.Namespace) -> int:
    if args.hub:
        from chaja import cli_hub
        return cli_hub.stats(args)
    with open_existing(args.store, load_config(args)) as idx:
        summary = idx.summary()
    print_stats(summary, args.json)
    return 0


def print_stats(s: dict, as_json: bool) -> None:
    """A store's summary (:meth:`Index.summary`, the hub's ``/v1/stats``) as text or JSON."""
    if as_json:
        json.dump({"schema": STATS_SCHEMA, **s}, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return
    print(f"documents: {s['documents']}\nchunks: {s['chunks']}\nsize: {s['size_bytes'] / 1e6:.1f} MB")
    print(f"encoder: {s['encoder']}")
    for key, value in (s.get("index") or {}).items():
        print(f"{key}: {value}")
    for label, key in (("language", "by_lang"), ("source", "by_source"), ("type", "by_doc_type")):
        print(f"by {label}: " + ", ".join(f"{k or '-'} {v}" for k, v in sorted(s[key].items())))
    if s.get("deferred_graphs"):
        print(f"vector graphs deferred: {', '.join(s['deferred_graphs'])} (searched exactly until chaja optimize)")
    if r := s.get("replica"):
        since = "none yet" if r["last_replay_s"] is None else f"{r['last_replay_s']:.1f} s ago"
        print(f"replica: read-only; {r['behind_bytes']} bytes of WAL received and not yet replayed; "
              f"last replayed commit {since}" + ("; replay paused" if r["paused"] else ""))


def cmd_optimize(args: argparse.Namespace) -> int:
    with open_existing(args.store, load_config(args)) as idx:
        started = time.perf_counter()
        tell = None if args.quiet else (lambda step: print(f"  {step} ...", file=sys.stderr, flush=True))
        built = idx.build_graphs(progress=tell)
        left = idx.deferred_graphs()
    if built:
        print(f"vector graphs built: {', '.join(built)} ({time.perf_counter() - started:.1f} s)")
    else:
        print("nothing to build: every vector field large enough for a graph has a current one")
    if left:
        print(f"still searched exactly: {', '.join(left)} (is the ann extra installed? pip install 'chaja[ann]')",
              file=sys.stderr)
        return 1
    return 0


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
        from chaja import cli_hub
        return cli_hub.delete(args)
    with open_existing(args.store, load_config(args)) as idx:
        return delete_each(idx.delete, args.doc_ids)


def delete_each(delete, doc_ids: list[str]) -> int:
    """Delete each id with ``delete(id) -> found``, saying which were not there (exit 1 if any)."""
    missing = 0
    for doc_id in doc_ids:
        if delete(doc_id):
            print(f"deleted {doc_id}")
        else:
            print(f"not found: {doc_id}", file=sys.stderr)
            missing += 1
    return 1 if missing else 0


def cmd_serve(args: argparse.Namespace) -> int:
    from chaja.hub import require_server_extra

    require_server_extra()
    from chaja.hub.serve import ListenError, serve

    try:
        serve(args.store, load_config(args), host=args.host, port=args.port, quiet=args.quiet)
    except ListenError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="chaja", description="Hybrid search for Korean and English documents.")
    ap.add_argument("--version", action="version", version=f"chaja {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("index", help="index files and folders into a store")
    p.add_argument("paths", nargs="+", help="files or folders: PDF, HWP/HWPX, DOCX, PPTX, XLSX/CSV, text, "
                                            "Markdown, HTML, JSON Lines, images (OCR)")
    _common(p, hub=True)
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
                   help="a bulk load: build no vector graph now (searches are exact, and slower on a large "
                        "store, until `chaja optimize` builds them)")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("optimize", help="build the vector graphs that index --defer-graphs left for later")
    _common(p)
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    p.set_defaults(func=cmd_optimize)

    p = sub.add_parser("search", help="search a store")
    p.add_argument("query")
    _common(p, hub=True)
    p.add_argument("-k", type=int, default=None, help="chunks to fuse and group (default: search.top_k)")
    p.add_argument("--filter", action="append", metavar="KEY=VALUE",
                   help="keep results to chunks whose lang, source, doc_type (comma = any of), date_from, "
                        "date_to or doc_id_prefix match (repeatable)")
    p.add_argument("--json", action="store_true", help=f"machine-readable output (schema {SEARCH_SCHEMA})")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("config", help="print the configuration as TOML; with --set, write those settings "
                                      "to the config file (./chaja.toml when there is none)")
    _common(p, store=False)
    p.set_defaults(func=cmd_config)

    p = sub.add_parser("stats", help="what a store holds")
    _common(p, hub=True)
    p.add_argument("--json", action="store_true", help=f"machine-readable output (schema {STATS_SCHEMA})")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("check", help="check that a store is whole (exit status 1 when it is not)")
    _common(p)
    p.add_argument("--repair", action="store_true",
                   help="first mend what needs no encoding: keyword rows, orphans, statistics; damaged "
                        "documents are removed (index their files again)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("delete", help="delete documents by id")
    p.add_argument("doc_ids", nargs="+")
    _common(p, hub=True)
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("serve", help="serve a store over HTTP (the hub; needs the server extra)")
    _common(p)
    p.add_argument("--host", default=None, help="address to listen on (default: hub.host, 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default: hub.port, 8750; 0 = any free port)")
    p.add_argument("--quiet", action="store_true", help="no access log")
    p.set_defaults(func=cmd_serve)

    try:
        from chaja.eval.cli import add_eval_commands
    except ImportError:
        pass
    else:
        add_eval_commands(sub, open_index)
        from chaja.eval.judge_cli import add_judge_commands
        from chaja.eval.question_check import add_questions_commands

        add_judge_commands(sub)
        add_questions_commands(sub)
    return ap


#: exit status of a command that found the store busy (another process writing it): try again later
EX_TEMPFAIL = 75


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


#: what an interrupted command leaves, said after "interrupted"
INTERRUPTED = {
    "index": ": every document stored before the stop is kept whole, and the step under way was rolled back; "
             "run the same command again to finish (documents already stored are not encoded again)",
    "optimize": ": the graphs not built are searched exactly until chaja optimize runs again",
}


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


if __name__ == "__main__":
    sys.exit(main())
