"""What :meth:`SqliteStore.check` verifies: the store is whole as chaja reads it.

- SQLite's own ``PRAGMA integrity_check`` passes and the schema version is one this
  chaja knows;
- every document has exactly the ``n_chunks`` chunks it records, numbered 0…n−1, and
  every chunk has its document;
- every chunk has its keyword row (FTS5 rowid = chunk rowid) and no keyword row is
  left without a chunk;
- every vector blob has the store's dimension (``dim`` for e5 fields, ``aligned_dim``
  for the aligned ones).

Each fault is one line saying what and where; an empty list means whole.
"""
from __future__ import annotations

import sqlite3

#: vector column → the meta key that gives its dimension
_DIMS = {"vector": "dim", "heading_vector": "dim", "aligned_vector": "aligned_dim",
         "aligned_heading_vector": "aligned_dim"}


def faults(db: sqlite3.Connection, known_schema: int, limit: int = 50) -> list[str]:
    out: list[str] = []
    rows = db.execute("PRAGMA integrity_check").fetchall()
    if rows != [("ok",)]:
        out += [f"sqlite: {r[0]}" for r in rows[:limit]]
    version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if version is None or not version[0].isdigit() or int(version[0]) > known_schema:
        out.append(f"schema: version {version[0] if version else 'missing'} is not one this chaja knows")
    for doc_id, want, got, lo, hi in db.execute(
            "SELECT d.id, d.n_chunks, count(c.rowid), min(c.ordinal), max(c.ordinal) FROM documents d"
            " LEFT JOIN chunks c ON c.doc_id = d.id GROUP BY d.id"
            " HAVING count(c.rowid) != d.n_chunks OR (count(c.rowid) > 0 AND (min(c.ordinal) != 0"
            " OR max(c.ordinal) != d.n_chunks - 1)) LIMIT ?", (limit,)):
        out.append(f"document {doc_id!r}: records {want} chunks, holds {got} (ordinals {lo}…{hi})")
    for (cid,) in db.execute("SELECT c.id FROM chunks c LEFT JOIN documents d ON d.id = c.doc_id"
                             " WHERE d.id IS NULL LIMIT ?", (limit,)):
        out.append(f"chunk {cid!r}: its document is missing")
    for (cid,) in db.execute("SELECT c.id FROM chunks c LEFT JOIN chunks_fts f ON f.rowid = c.rowid"
                             " WHERE f.rowid IS NULL LIMIT ?", (limit,)):
        out.append(f"chunk {cid!r}: no keyword row")
    for (rowid,) in db.execute("SELECT f.rowid FROM chunks_fts f LEFT JOIN chunks c ON c.rowid = f.rowid"
                               " WHERE c.rowid IS NULL LIMIT ?", (limit,)):
        out.append(f"keyword row {rowid}: no chunk")
    meta = dict(db.execute("SELECT key, value FROM meta WHERE key IN ('dim', 'aligned_dim')"))
    for column, key in _DIMS.items():
        dim = int(meta.get(key) or 0)
        if not dim:
            continue
        for cid, size in db.execute(f"SELECT id, length({column}) FROM chunks WHERE {column} IS NOT NULL"
                                    f" AND length({column}) != ? LIMIT ?", (4 * dim, limit)):
            out.append(f"chunk {cid!r}: {column} holds {size // 4} numbers, the store's dimension is {dim}")
    return out
