"""Printing that a command's store and hub forms share: what the readers noticed, a
store's summary, deletions, and text made safe for a terminal."""
from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from chaja.loaders import LoadReport

#: schema of ``chaja stats --json``; fields are only ever added
STATS_SCHEMA = "chaja.stats/1"


def terminal_safe(text: str) -> str:
    """Control characters (from file names, say) shown as escapes, not sent to the terminal."""
    return "".join(ch if ch.isprintable() or ch in "\t" else repr(ch)[1:-1] for ch in text)


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


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


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
        print(f"deferred by a bulk load: {', '.join(s['deferred_graphs'])} (until chaja optimize builds them)")
    if k := s.get("keyword"):
        print(f"keyword engine: {k['engine']}")
        if st := k.get("stored"):
            print(f"keyword postings kept by the database: {_count(st['parts'], 'part')}, {_count(st['rows'], 'row')}, "
                  f"{st['removed']} removed since; {_count(st['not_folded'], 'log entry', 'log entries')} not folded yet")
    if r := s.get("replica"):
        since = "none yet" if r["last_replay_s"] is None else f"{r['last_replay_s']:.1f} s ago"
        print(f"replica: read-only; {r['behind_bytes']} bytes of WAL received and not yet replayed; "
              f"last replayed commit {since}" + ("; replay paused" if r["paused"] else ""))


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
