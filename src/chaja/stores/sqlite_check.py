"""What :meth:`SqliteStore.check` verifies: the store is whole as chaja reads it.

- SQLite's own ``PRAGMA integrity_check`` passes and the schema version is one this
  chaja knows;
- every document has exactly the ``n_chunks`` chunks it records, numbered 0…n−1, and
  every chunk has its document;
- every chunk has its keyword row (a ``chunk_terms`` rowid = chunk rowid; in a store that
  derives its terms, :mod:`chaja.stores.derived_terms`, a chunk may have none) and no keyword
  row is left without a chunk;
- every vector blob has the store's dimension (``dim`` for e5 fields, ``aligned_dim``
  for the aligned ones), and every vector kept beside the store (an empty blob) is in
  its field's spool or file, both readable.

Each fault is one line saying what and where; an empty list means whole.

:func:`repair` mends what can be derived without encoding anything again: it writes
the missing keyword rows from the chunks' own text, drops keyword rows and chunks
that have lost their owner, and removes documents whose chunks or vectors are
damaged (the next ``chaja index`` of their files stores them whole again).
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from chaja.stores import derived_terms, sqlite_keywords, sqlite_spool, sqlite_vectors
from chaja.stores.sqlite_schema import VECTOR_FIELDS
from chaja.stores.text_packing import TextPacking

#: vector column → the meta key that gives its dimension
_DIMS = {"vector": "dim", "heading_vector": "dim", "aligned_vector": "aligned_dim",
         "aligned_heading_vector": "aligned_dim"}

#: documents whose chunks are not the ``n_chunks`` it records, numbered 0…n−1
_MISCOUNTED = ("SELECT d.id, d.n_chunks, count(c.rowid), min(c.ordinal), max(c.ordinal) FROM documents d"
               " LEFT JOIN chunks c ON c.doc_id = d.id GROUP BY d.id"
               " HAVING count(c.rowid) != d.n_chunks OR (count(c.rowid) > 0 AND (min(c.ordinal) != 0"
               " OR max(c.ordinal) != d.n_chunks - 1))")


@dataclass
class _Beside:
    """What a vector field keeps beside the store: the rowids its file and spool hold (those
    that can be read), and (why, meta key) of each recorded one that cannot."""
    dim: int
    held: set[int] = field(default_factory=set)
    unreadable: list[tuple[str, str]] = field(default_factory=list)


def _beside(db) -> dict[str, _Beside]:
    """Per vector field with a dimension, its file and spool read once (:class:`_Beside`)."""
    meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('dim', 'aligned_dim', 'store_id')"
                           " OR key LIKE 'vectors.%' OR key LIKE 'spool.%'"))
    path = Path(db.execute("PRAGMA database_list").fetchone()[2])
    out = {}
    for name, column in VECTOR_FIELDS.items():
        dim = int(meta.get(_DIMS[column]) or 0)
        if not dim:
            continue
        got = out[name] = _Beside(dim)
        key = sqlite_vectors.record_key(name)
        if meta.get(key):
            try:
                got.held.update(sqlite_vectors.read_recorded(path, name, meta[key],
                                                             store_id=meta.get("store_id") or "")[3].tolist())
            except sqlite_vectors.MissingVectors as exc:
                got.unreadable.append((str(exc), key))
        key = sqlite_spool.record_key(name)
        try:
            got.held.update(sqlite_spool.read(path, name, meta.get(key), dim).latest()[0].tolist())
        except sqlite_spool.MissingSpool as exc:
            got.unreadable.append((str(exc), key))
    return out


def _wrong_dimension(db, beside: dict[str, _Beside], limit: int = -1):
    """(column, dimension, chunk id, document id, numbers held) of every vector blob whose
    size is not the store's dimension for its column (none before a dimension is known),
    and of every row whose vector is kept beside the store (an empty blob) where neither
    its field's spool nor its field's file holds the row, or the one that should cannot be
    read (numbers held: 0)."""
    for name, got in beside.items():
        column = VECTOR_FIELDS[name]
        for cid, doc_id, size in db.execute(
                f"SELECT id, doc_id, length({column}) FROM chunks WHERE length({column}) > 0"
                f" AND length({column}) != ? LIMIT ?", (4 * got.dim, limit)).fetchall():
            yield column, got.dim, cid, doc_id, size // 4
        for found, (cid, doc_id) in enumerate(_missing_beside(db, column, got.held), start=1):
            yield column, got.dim, cid, doc_id, 0
            if found == limit:
                break


def _missing_beside(db, column: str, held: set[int]):
    """(chunk id, document id) of the rows whose ``column`` vector is kept beside the store
    (an empty blob) but which none of the ``held`` rowids names."""
    for rowid, cid, doc_id in db.execute(f"SELECT rowid, id, doc_id FROM chunks WHERE length({column}) = 0"):
        if rowid not in held:
            yield cid, doc_id


def faults(db: sqlite3.Connection, known_schema: int, limit: int = 50) -> list[str]:
    out: list[str] = []
    rows = db.execute("PRAGMA integrity_check").fetchall()
    if rows != [("ok",)]:
        out += [f"sqlite: {r[0]}" for r in rows[:limit]]
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if version is None or not version[0].isdigit() or int(version[0]) > known_schema:
        out.append(f"schema: version {version[0] if version else 'missing'} is not one this chaja knows")
    for doc_id, want, got, lo, hi in db.execute(_MISCOUNTED + " LIMIT ?", (limit,)):
        out.append(f"document {doc_id!r}: records {want} chunks, holds {got} (ordinals {lo}…{hi})")
    for (cid,) in db.execute("SELECT c.id FROM chunks c LEFT JOIN documents d ON d.id = c.doc_id"
                             " WHERE d.id IS NULL LIMIT ?", (limit,)):
        out.append(f"chunk {cid!r}: its document is missing")
    if derived_terms.store_analyser(db) is None:     # (a store that derives its terms keeps few rows)
        for (cid,) in db.execute("SELECT c.id FROM chunks c LEFT JOIN chunk_terms f ON f.rowid = c.rowid"
                                 " WHERE f.rowid IS NULL LIMIT ?", (limit,)):
            out.append(f"chunk {cid!r}: no keyword row")
    for (rowid,) in db.execute("SELECT f.rowid FROM chunk_terms f LEFT JOIN chunks c ON c.rowid = f.rowid"
                               " WHERE c.rowid IS NULL LIMIT ?", (limit,)):
        out.append(f"keyword row {rowid}: no chunk")
    beside = _beside(db)
    gone = set()
    for name, got in beside.items():
        for why, _ in got.unreadable:
            lost = sum(1 for _ in _missing_beside(db, VECTOR_FIELDS[name], got.held))
            out.append(f"vectors: the {name} vectors of {lost} chunks are kept in a file beside the store, and"
                       f" {why} (check --repair removes their documents; index them again)")
            gone.add(VECTOR_FIELDS[name])
    for column, dim, cid, _, numbers in _wrong_dimension(db, beside, limit):
        if column not in gone:         # (said once above, not once a chunk)
            out.append(f"chunk {cid!r}: {column} holds {numbers} numbers, the store's dimension is {dim}")
    return out


def repair(cur: sqlite3.Cursor, analyzer, delete_document) -> list[str]:
    """Mend the store inside the caller's write transaction; returns what it did, one line
    per act. ``analyzer`` is the store's own; ``delete_document(cur, doc_id)`` removes a
    document the store's way (its chunks, keyword rows and change-log entries)."""
    done: list[str] = []
    beside = _beside(cur)
    broken = {row[0] for row in cur.execute(_MISCOUNTED).fetchall()}
    broken |= {doc_id for *_, doc_id, _ in _wrong_dimension(cur, beside)}
    for doc_id in sorted(broken):
        delete_document(cur, doc_id)
        done.append(f"removed document {doc_id!r} (damaged; index its file again)")
    for name, got in beside.items():         # no chunk keeps a vector there now
        for why, key in got.unreadable:
            cur.execute("DELETE FROM meta WHERE key = ?", (key,))
            done.append(f"forgot the {name} vector file ({why})")
    orphans = cur.execute("SELECT c.rowid, c.id FROM chunks c LEFT JOIN documents d ON d.id = c.doc_id"
                          " WHERE d.id IS NULL").fetchall()
    for rowid, cid in orphans:
        cur.execute("INSERT INTO keyword_log (row, added) VALUES (?, 0)", (rowid,))
        cur.execute("DELETE FROM chunk_terms WHERE rowid = ?", (rowid,))
        cur.execute("DELETE FROM chunks WHERE rowid = ?", (rowid,))
        done.append(f"removed chunk {cid!r} (its document is missing)")
    stray = [r for (r,) in cur.execute("SELECT f.rowid FROM chunk_terms f LEFT JOIN chunks c ON c.rowid = f.rowid"
                                        " WHERE c.rowid IS NULL").fetchall()]
    for rowid in stray:
        cur.execute("INSERT INTO keyword_log (row, added) VALUES (?, 0)", (rowid,))
        cur.execute("DELETE FROM chunk_terms WHERE rowid = ?", (rowid,))
        done.append(f"removed keyword row {rowid} (no chunk)")
    missing = []
    if derived_terms.store_analyser(cur) is None:    # (a chunk of a store that derives its terms needs no row)
        missing = cur.execute("SELECT c.rowid, c.id, c.title, c.heading, c.text FROM chunks c"
                              " LEFT JOIN chunk_terms f ON f.rowid = c.rowid WHERE f.rowid IS NULL").fetchall()
    packing = TextPacking(cur.connection)
    for rowid, cid, title, heading, text in missing:
        cur.execute("INSERT INTO chunk_terms (rowid, title, heading, body) VALUES (?,?,?,?)",
                    (rowid, *derived_terms.terms(analyzer, title, heading, packing.unpack(text))))
        done.append(f"wrote the keyword row of chunk {cid!r}")
    if missing:
        sqlite_keywords.log_added(cur, [r[0] for r in missing])
    return done
