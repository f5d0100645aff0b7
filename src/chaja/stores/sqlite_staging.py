"""Large documents in the SQLite store, written a batch of chunks at a time and shown whole.

A document with more chunks than one ingest batch would otherwise be analysed,
encoded and held in memory whole before its one transaction. Instead the ingest
stages it: each batch of finished chunks (text, terms, vectors) is committed to
``staged_chunks``, which no search reads, so memory is bounded by a batch and a
crash loses at most the batch in flight. :func:`publish` then moves the staged rows
into ``chunks`` and ``chunk_terms`` in one transaction, inside SQLite (no row is
read into Python), replacing the stored document: readers see the old document or
the new one, never part of it.

Staged rows carry a key (the document's fingerprint and the settings that shaped its
chunks and vectors). A run that finds rows of the same key resumes after them, so a
crash an hour into a large file costs the batch in flight, not the hour; rows of
another key are stale and deleted.
"""
from __future__ import annotations

import json
import sqlite3

import numpy as np

from chaja.documents import ChunkRecord, Document
from chaja.stores import sqlite_keywords
from chaja.stores.base import staged_prefix
from chaja.stores.text_packing import TextPacking, stored_texts

SCHEMA = """
CREATE TABLE IF NOT EXISTS staged_chunks (
    doc_id TEXT NOT NULL, stage_key TEXT NOT NULL, ordinal INTEGER NOT NULL,
    id TEXT NOT NULL, title TEXT NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL,
    lang TEXT, source TEXT, doc_type TEXT, date TEXT, location TEXT,
    title_terms TEXT NOT NULL, heading_terms TEXT NOT NULL, body_terms TEXT NOT NULL,
    vector BLOB NOT NULL, heading_vector BLOB, aligned_vector BLOB, aligned_heading_vector BLOB,
    PRIMARY KEY (doc_id, ordinal)
);
"""

_COLUMNS = ("id, doc_id, ordinal, title, heading, text, lang, source, doc_type, date, location,"
            " vector, heading_vector, aligned_vector, aligned_heading_vector")


def resume_point(cur: sqlite3.Cursor, doc_id: str, key: str) -> int:
    """How many leading chunks of ``doc_id`` are staged under ``key`` (the ordinal to go
    on from); staged rows of the document under any other key are deleted."""
    cur.execute("DELETE FROM staged_chunks WHERE doc_id = ? AND stage_key != ?", (doc_id, key))
    ordinals = [r[0] for r in cur.execute(
        "SELECT ordinal FROM staged_chunks WHERE doc_id = ? ORDER BY ordinal", (doc_id,))]
    done = staged_prefix(ordinals)
    if done < len(ordinals):          # a gap: keep the run before it
        cur.execute("DELETE FROM staged_chunks WHERE doc_id = ? AND ordinal >= ?", (doc_id, done))
    return done


def stage(cur: sqlite3.Cursor, key: str, rows: list[tuple[ChunkRecord, np.ndarray, list]],
          packing: TextPacking | None = None) -> None:
    """Write one batch of finished chunks (record, its vector, its other vectors), text and
    body terms packed with ``packing`` (:mod:`chaja.stores.text_packing`) where given."""
    texts, bodies = stored_texts(packing, [r for r, _, _ in rows])
    cur.executemany(
        "INSERT OR REPLACE INTO staged_chunks (doc_id, stage_key, ordinal, id, title, heading, text, lang, source,"
        " doc_type, date, location, title_terms, heading_terms, body_terms, vector, heading_vector, aligned_vector,"
        " aligned_heading_vector) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [(r.chunk.doc_id, key, r.chunk.ordinal, r.chunk.id, r.chunk.title,
          json.dumps(list(r.chunk.heading_path), ensure_ascii=False), text, r.chunk.lang,
          r.chunk.source, r.chunk.doc_type, r.chunk.date, r.chunk.location and r.chunk.location.encode(),
          " ".join(r.title_terms), " ".join(r.heading_terms),
          body, vec.tobytes(), *(None if v is None else v.tobytes() for v in extra))
         for text, body, (r, vec, extra) in zip(texts, bodies, rows)])


def staged_count(cur: sqlite3.Cursor, doc_id: str, key: str) -> int:
    return cur.execute("SELECT count(*) FROM staged_chunks WHERE doc_id = ? AND stage_key = ?",
                       (doc_id, key)).fetchone()[0]


def publish(cur: sqlite3.Cursor, doc: Document, key: str, n_chunks: int) -> list[int]:
    """Insert the document row and move its staged chunks into ``chunks``, ``chunk_terms`` and the
    keyword log (the caller holds the write transaction and has deleted any stored copy);
    the new chunk rowids."""
    cur.execute("INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?)",
                (doc.id, doc.title, doc.lang, doc.source, doc.doc_type, doc.date, doc.path,
                 doc.fingerprint(), n_chunks))
    cur.execute(f"INSERT INTO chunks ({_COLUMNS}) SELECT {_COLUMNS} FROM staged_chunks"
                " WHERE doc_id = ? AND stage_key = ? ORDER BY ordinal", (doc.id, key))
    cur.execute("INSERT INTO chunk_terms (rowid, title, heading, body)"
                " SELECT c.rowid, s.title_terms, s.heading_terms, s.body_terms"
                " FROM staged_chunks s JOIN chunks c ON c.id = s.id"
                " WHERE s.doc_id = ? AND s.stage_key = ?", (doc.id, key))
    rows = [r[0] for r in cur.execute("SELECT rowid FROM chunks WHERE doc_id = ? ORDER BY rowid", (doc.id,))]
    sqlite_keywords.log_added(cur, rows)
    cur.execute("DELETE FROM staged_chunks WHERE doc_id = ?", (doc.id,))
    return rows


def leftovers(cur: sqlite3.Cursor) -> dict[str, int]:
    """doc_id → staged chunks of a document whose run has not published it (yet)."""
    try:
        return dict(cur.execute("SELECT doc_id, count(*) FROM staged_chunks GROUP BY doc_id"))
    except sqlite3.OperationalError:     # a file from before staging
        return {}
