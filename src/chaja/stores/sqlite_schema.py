"""The tables of a store file, its schema version, and bringing an older file up to date.

Schema 2 added the heading-vector column, schema 3 the two aligned-vector columns,
schema 4 the keyword change log and the store's random ``store_id``, schema 5 each
chunk's ``location`` in its file (``page:3:4``: :meth:`chaja.documents.Location.encode`),
schema 6 vectors kept once: an empty blob in a vector column means the vector is in the
field's recorded file (:mod:`chaja.stores.sqlite_vectors`; a schema-5 store's vectors
move there at its next compaction, nothing encoded again), schema 7 each chunk's analysed
terms in a plain table, ``chunk_terms``, where an FTS5 table had kept them with an inverted
index of its own that nothing read once the keyword postings
(:mod:`chaja.stores.sqlite_keywords`) answered every search, schema 8 new vectors spooled
beside the store (:mod:`chaja.stores.sqlite_spool`), schema 9 no ``chunk_terms`` row for a
chunk whose terms the store's own analyser makes again (:mod:`chaja.stores.derived_terms`): a
chaja before it would build the keyword postings without those chunks, so it refuses the file.
:func:`migrate` adds the columns an older file lacks and moves an FTS5 table's terms into
``chunk_terms``.
"""
from __future__ import annotations

import sqlite3
from pathlib import Path

from chaja.stores import sqlite_errors, sqlite_keywords, sqlite_space, sqlite_staging

SCHEMA_VERSION = 9

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, title TEXT NOT NULL, lang TEXT, source TEXT, doc_type TEXT,
    date TEXT, path TEXT, fingerprint TEXT NOT NULL, n_chunks INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL, title TEXT NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL,
    lang TEXT, source TEXT, doc_type TEXT, date TEXT, location TEXT, vector BLOB NOT NULL, heading_vector BLOB,
    aligned_vector BLOB, aligned_heading_vector BLOB
);
CREATE INDEX IF NOT EXISTS chunks_doc ON chunks(doc_id);
CREATE TABLE IF NOT EXISTS chunk_terms (
    rowid INTEGER PRIMARY KEY, title TEXT NOT NULL, heading TEXT NOT NULL, body TEXT NOT NULL
);
""" + sqlite_keywords.LOG_SCHEMA + sqlite_staging.SCHEMA

#: meta key set on a schema-5 store until a compaction has moved its vectors into files
MOVE_VECTORS = "vectors.move"
#: vector field → column
VECTOR_FIELDS = {"chunk": "vector", "heading": "heading_vector", "aligned": "aligned_vector",
                 "aligned_heading": "aligned_heading_vector"}


def migrate(db: sqlite3.Connection, busy_timeout_s: float, path: Path) -> None:
    """Bring an older file up to :data:`SCHEMA_VERSION`, in one transaction."""
    sqlite_errors.begin_immediate(db, busy_timeout_s, path)
    try:
        for table in ("chunks", "staged_chunks"):
            columns = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            for column, kind in (("heading_vector", "BLOB"), ("aligned_vector", "BLOB"),
                                 ("aligned_heading_vector", "BLOB"), ("location", "TEXT")):
                if column not in columns:
                    db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
        version = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if version is not None and int(version[0]) < 6 and db.execute("SELECT 1 FROM chunks LIMIT 1").fetchone():
            # vectors still in the rows, some with a copy beside: the next compaction moves them
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (MOVE_VECTORS,))
        moved = db.execute("SELECT 1 FROM sqlite_schema WHERE name = 'chunks_fts'").fetchone() is not None
        if moved:
            move_fts_terms(db)
        db.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        db.execute("COMMIT")
    except BaseException as exc:
        sqlite_errors.rollback(db, exc)
        raise
    if moved:
        sqlite_space.give_back_incrementally(db)


def move_fts_terms(db: sqlite3.Connection) -> None:
    """Schema 7: the analysed terms an FTS5 table held (its content, as stored) moved into
    ``chunk_terms`` and the FTS5 table, its inverted index with it, dropped. The pages it
    held are given back once the migration is committed, in a file made with incremental
    vacuuming (every file chaja makes); an older file reuses them for later rows, or gives
    them back with ``chaja optimize`` (:mod:`chaja.stores.sqlite_space`)."""
    db.execute("INSERT OR REPLACE INTO chunk_terms (rowid, title, heading, body)"
               " SELECT rowid, ifnull(title, ''), ifnull(heading, ''), ifnull(body, '') FROM chunks_fts")
    db.execute("DROP TABLE chunks_fts")
