"""The PostgreSQL store's keyword postings kept in the database, so that a reader keeps
none of its own (``keyword_engine="stored"``, :mod:`chaja.stores.postgres.stored_search`).

A reader that keeps the postings (the default engine, :mod:`chaja.stores.postgres.keywords`)
builds them once per machine and holds them in memory, about as much as the SQLite store's
keyword file. Here the database holds them instead, one row per term and *part*
(``keyword_postings``: the term's postings as :mod:`chaja.stores.posting_blobs` bytes), and a
search fetches the rows of its own terms: any number of stateless readers search one database.

Keeping in step. The parts cover the keyword log up to the entry in meta
:data:`META_KEY`. :func:`fold` (``PostgresStore.compact``, which ``Index.add`` and
``Index.delete`` run after each write) takes the log's entries after it, under the
``fts_stats`` row lock that orders writers: the rows they removed that a part holds join
``keyword_removed`` (one value, sorted row ids, that every search reads), the rows they
added become one new part. Entries a fold has not taken
yet a reader applies itself, as the default engine does. Parts are merged like the
segments of a log-structured index: past :data:`MAX_PARTS` parts, every part but the
largest becomes one (read back from the table, no chunk read again); once those hold
:data:`REBUILD_SHARE` of the largest's rows, or the removed rows :data:`REMOVED_SHARE` of
all, every part is built again from the chunks, so each row is rewritten a bounded
number of times as a store grows.

The postings are written the first time a store object with ``keyword_engine="stored"``
searches a primary that has none (:func:`build`); from then on every writer's compaction
keeps them, whatever its own engine.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from chaja.stores import posting_blobs, postings
from chaja.stores.postgres.keywords import PRUNED_KEY, every_row_segment, rows_segment
from chaja.stores.tf_codes import CodedTf

#: meta key: the newest keyword log entry the stored postings cover (absent: none are kept)
META_KEY = "keyword_postings"
#: past this many parts, every part but the largest is merged into one
MAX_PARTS = 8
#: every part is built again from the chunks once the others hold this share of the largest's rows ...
REBUILD_SHARE = 0.5
#: ... or the rows removed since reach this share of all the parts' rows (each search reads them)
REMOVED_SHARE = 0.1


def covered(store) -> int | None:
    """The newest log entry the stored postings cover, None when the store keeps none."""
    value = store.get_meta(META_KEY)
    return None if value is None else int(value)


def build(store) -> None:
    """Write every chunk's postings as one part, replacing any, and record the log entry
    they cover (under the ``fts_stats`` row lock: no write lands in between)."""
    with store.conn.transaction():
        _lock(store)
        _rebuild(store)


def fold(store) -> bool:
    """Take the log's entries after those the stored postings cover into them (removed rows
    marked, added rows a new part), then merge parts as the module says; False when the
    store keeps no stored postings or there was nothing to take."""
    q, conn = store._q, store.conn
    if covered(store) is None:         # kept by no one: no lock taken
        return False
    with conn.transaction():
        _lock(store)
        seq = covered(store)
        if seq is None:
            return False
        if seq < int(store.get_meta(PRUNED_KEY) or 0):     # entries it needs are gone: start afresh
            _rebuild(store)
            return True
        ops = conn.execute(q("SELECT seq, row, added FROM {s}.keyword_log WHERE seq > %s ORDER BY seq"),
                           (seq,)).fetchall()
        if not ops:
            return False
        gone, new = changes([row for _, row, _ in ops], [added for _, _, added in ops])
        if gone.size:
            _set_removed(store, np.union1d(removed(store), gone))
        if new:
            _write_part(store, rows_segment(store, new))
        store.set_meta(META_KEY, str(ops[-1][0]))
        _tidy(store)
    return True


def changes(rows: list[int], added: list[bool]) -> tuple[np.ndarray, list[int]]:
    """What log entries (``rows`` with ``added``, oldest first) did to the parts: (the rows they
    removed that a part holds, sorted: those whose first entry removes them, added before;
    the rows they leave added, ascending). A row is added once and removed at most once."""
    first: dict[int, bool] = {}
    last: dict[int, bool] = {}
    for row, a in zip(rows, added):
        first.setdefault(int(row), bool(a))
        last[int(row)] = bool(a)
    gone = np.sort(np.fromiter((r for r, a in first.items() if not a), np.int64))
    return gone, sorted(r for r, a in last.items() if a)


def removed(store) -> np.ndarray:
    """The rows of some part deleted since it was written, sorted."""
    row = store.conn.execute(store._q("SELECT rows FROM {s}.keyword_removed")).fetchone()
    return decode_rows(row[0] if row else None)


def decode_rows(value: bytes | None) -> np.ndarray:
    return np.frombuffer(value, "<i8").astype(np.int64) if value else np.zeros(0, np.int64)


def _set_removed(store, rows: np.ndarray) -> None:
    q = store._q
    if not rows.size:
        store.conn.execute(q("DELETE FROM {s}.keyword_removed"))
        return
    store.conn.execute(q("INSERT INTO {s}.keyword_removed (rows) VALUES (%s)"
                         " ON CONFLICT (one) DO UPDATE SET rows = excluded.rows"), (np.asarray(rows, "<i8").tobytes(),))


def status(store) -> dict | None:
    """The stored postings as ``chaja stats`` shows them: the log entry they cover, the log
    entries after it not folded yet, their parts, rows and rows removed since; None when the
    store keeps none."""
    q = store._q
    row = store.conn.execute(q(
        "SELECT m.value::bigint, (SELECT count(*) FROM {s}.keyword_log WHERE seq > m.value::bigint),"
        " (SELECT count(*) FROM {s}.keyword_parts), (SELECT coalesce(sum(rows), 0) FROM {s}.keyword_parts)"
        " FROM {s}.meta m WHERE m.key = %s"), (META_KEY,)).fetchone()
    if row is None:
        return None
    return {"covered": int(row[0]), "not_folded": int(row[1]), "parts": int(row[2]), "rows": int(row[3]),
            "removed": int(removed(store).size)}


def _lock(store) -> None:
    store.conn.execute(store._q("SELECT 1 FROM {s}.fts_stats FOR UPDATE"))


def _rebuild(store) -> None:
    """Every part built again from the chunks (inside the caller's transaction, lock held)."""
    q, conn = store._q, store.conn
    high = int(conn.execute(q("SELECT coalesce(max(seq), 0) FROM {s}.keyword_log")).fetchone()[0])
    conn.execute(q("DELETE FROM {s}.keyword_parts"))
    conn.execute(q("DELETE FROM {s}.keyword_removed"))
    _write_part(store, every_row_segment(store))
    store.set_meta(META_KEY, str(high))


def _write_part(store, seg: postings.Segment) -> None:
    """A new part of ``seg``'s postings, one row per term, by binary COPY."""
    if seg.n_rows == 0:
        return
    low = int(seg.rowids[0])
    _new_part(store, low, seg.n_rows, seg.lang_names, posting_blobs.of_segment(seg, low))


def _new_part(store, low: int, rows: int, langs: list[str], blobs) -> None:
    """A part of ``rows`` rows from ``low`` on, in ``langs``, with the (term, bytes) of ``blobs``
    written by binary COPY."""
    part = store.conn.execute(store._q("INSERT INTO {s}.keyword_parts (low, rows, langs) VALUES (%s, %s, %s)"
                                       " RETURNING part"), (low, rows, list(langs))).fetchone()[0]
    with store.conn.cursor() as cur:
        with cur.copy(store._q("COPY {s}.keyword_postings (term, part, postings) FROM STDIN (FORMAT BINARY)")) as cp:
            cp.set_types(["text", "int8", "bytea"])
            for term, blob in blobs:
                cp.write_row((term, part, blob))


def _tidy(store) -> None:
    """Merge parts or build them all again, as the module says (lock held)."""
    q, conn = store._q, store.conn
    parts = conn.execute(q("SELECT part, rows FROM {s}.keyword_parts ORDER BY rows DESC, part")).fetchall()
    if not parts:
        return
    total = sum(int(r) for _, r in parts)
    rest = sum(int(r) for _, r in parts[1:])
    if rest >= REBUILD_SHARE * int(parts[0][1]) or removed(store).size >= max(1.0, REMOVED_SHARE * total):
        _rebuild(store)
    elif len(parts) > MAX_PARTS:
        _merge(store, [int(p) for p, _ in parts[1:]])


def _merge(store, parts: list[int]) -> None:
    """The ``parts`` as one part of their live postings, read back from the table."""
    q, conn = store._q, store.conn
    dead = removed(store)
    names: dict[str, int] = {}
    by_term: dict[str, list[posting_blobs.TermPostings]] = defaultdict(list)
    for term, low, langs, blob in conn.execute(
            q("SELECT k.term, p.low, p.langs, k.postings FROM {s}.keyword_postings k"
              " JOIN {s}.keyword_parts p ON p.part = k.part WHERE k.part = ANY(%s)"), (parts,), binary=True):
        got = posting_blobs.decode(blob, low)
        codes = np.asarray([names.setdefault(n, len(names)) for n in langs], np.uint8)
        by_term[term].append(posting_blobs.TermPostings(got.rows, got.tf, got.lengths, codes[got.langs]))
    alive, seen, merged = _joined(by_term, dead)
    conn.execute(q("DELETE FROM {s}.keyword_parts WHERE part = ANY(%s)"), (parts,))
    _set_removed(store, dead[~np.isin(dead, seen)])
    if merged:
        low = int(alive[0])
        _new_part(store, low, int(alive.size), list(names),
                  ((term, posting_blobs.encode(p.rows - low, p.tf, p.lengths, p.langs)) for term, p in merged.items()))


def _joined(by_term: dict[str, list[posting_blobs.TermPostings]], removed: np.ndarray):
    """(the live rows, every row seen, term → its live postings of every part in one, by row),
    the rows sorted."""
    merged: dict[str, posting_blobs.TermPostings] = {}
    seen, live = [], []
    for term, pieces in by_term.items():
        rows = np.concatenate([p.rows for p in pieces])
        seen.append(rows)
        keep = ~np.isin(rows, removed) if removed.size else np.ones(rows.size, bool)
        order = np.argsort(rows, kind="stable")
        order = order[keep[order]]
        if not order.size:
            continue
        tf = np.concatenate([p.tf.decoded() for p in pieces])[order]
        lengths = np.concatenate([np.asarray(p.lengths, np.uint32) for p in pieces])[order]
        merged[term] = posting_blobs.TermPostings(rows[order], CodedTf.encode(tf), lengths,
                                                  np.concatenate([p.langs for p in pieces])[order])
        live.append(rows[order])
    every = np.unique(np.concatenate(seen)) if seen else np.zeros(0, np.int64)
    alive = np.unique(np.concatenate(live)) if live else np.zeros(0, np.int64)
    return alive, every, merged
