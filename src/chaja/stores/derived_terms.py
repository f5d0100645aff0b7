"""A chunk's analysed terms, left unwritten where the store's own analyser makes them again.

The keyword postings (:mod:`chaja.stores.postings`) are built from each chunk's terms:
``a(title)``, ``a(" ".join(heading path))`` and ``a(text)`` for the analyser ``a`` that
indexed it. Kept as rows (``chunk_terms``), they were the largest table of a large store
after the text itself (49 of 160 MB at 100,000 chunks), and each was a function of the
chunk's own columns. So a chunk whose terms a built-in analyser made
(:attr:`~chaja.documents.ChunkRecord.terms_from`, set by :func:`chaja.ingest.index_documents`)
gets no ``chunk_terms`` row: the store records that analyser once (:data:`META_KEY`, in the
transaction of the first such chunk) and analyses the chunk again where its terms are read
without the postings (a postings file rebuilt, rows another process wrote, the gate's
fallback). Terms given any other way (a caller's own analyser, Kiwi, whose output follows
its model's version) are written as rows, as before; a store may hold both. The rows an
older chaja kept, in a store indexed with a derivable analyser, are compared with what it
derives and dropped where they are the same, by the next compaction (:func:`drop_kept`).

Only analysers whose output is a function of chaja's own code are derivable
(:data:`DERIVABLE`): one whose output changes must take a new name.
"""
from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from chaja.analysis import ANALYZERS, Analyzer
from chaja.stores.sqlite_in import select_in

META_KEY = "terms.derived"
#: the analysers whose terms a store derives again rather than keeps
DERIVABLE = ("bigram", "whitespace")

#: ``(rowid, lang, title terms, heading terms, body terms or its frame, chunk title, heading
#: JSON, text or its frame)``: the chunk's own columns only where it has no terms row
ROWS = ("SELECT c.rowid, c.lang, f.title, f.heading, f.body,"
        " CASE WHEN f.rowid IS NULL THEN c.title END, CASE WHEN f.rowid IS NULL THEN c.heading END,"
        " CASE WHEN f.rowid IS NULL THEN c.text END"
        " FROM chunks c LEFT JOIN chunk_terms f ON f.rowid = c.rowid")
#: the same for a store that derives no terms: only the chunks that have their row
KEPT_ROWS = ROWS.replace("LEFT JOIN", "JOIN")


def rows_sql(db: sqlite3.Connection | sqlite3.Cursor) -> str:
    """:data:`ROWS` where the store derives terms, else :data:`KEPT_ROWS`."""
    return ROWS if store_analyser(db) is not None else KEPT_ROWS


def name_of(analyzer: Callable) -> str | None:
    """The name under which ``analyzer`` is a derivable built-in, else None."""
    return next((name for name in DERIVABLE if ANALYZERS[name] is analyzer), None)


def _meta(db: sqlite3.Connection | sqlite3.Cursor, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]


def store_analyser(db: sqlite3.Connection | sqlite3.Cursor) -> str | None:
    """The analyser this store derives unwritten terms with (None: it keeps every chunk's)."""
    return _meta(db, META_KEY)


def analyser(db: sqlite3.Connection | sqlite3.Cursor) -> Analyzer | None:
    """The analyser this store derives unwritten terms with (None: it keeps every chunk's)."""
    return _derivable(store_analyser(db))


def _derivable(name: str | None) -> Analyzer | None:
    if name is None:
        return None
    if name not in DERIVABLE:
        raise ValueError(f"this store's terms were made by the analyser {name!r}, which this chaja cannot derive")
    return ANALYZERS[name]


def _record(cur: sqlite3.Cursor, name: str) -> None:
    """Record, in ``cur``'s transaction, that the store derives unwritten terms with ``name``."""
    cur.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (META_KEY, name))


def terms(analyze: Analyzer, title: str, heading_json: str, text: str) -> tuple[str, str, str]:
    """A chunk's title, heading and body terms, each joined by spaces, as its write made them."""
    return (" ".join(analyze(title)), " ".join(analyze(" ".join(json.loads(heading_json)))),
            " ".join(analyze(text)))


def term_rows(db: sqlite3.Connection | sqlite3.Cursor, rows: Sequence[tuple], unpack: Callable,
              defer: bool = False) -> list[tuple]:
    """``(rowid, lang, title, heading, body)`` of each :data:`ROWS` row: the body terms as
    written (``unpack(frame, "terms")``), or all three derived from the chunk's columns
    (``unpack(frame)`` its text) with the store's analyser. With ``defer``, a row to derive
    comes back as ``(rowid, lang, None, analyser name, (title, heading JSON, text))``, for
    :func:`completed` in the process that builds its postings (a helper builds half)."""
    name = store_analyser(db) if any(r[2] is None for r in rows) else None
    analyze = _derivable(name)
    return [(rowid, lang, title, heading, unpack(body, "terms")) if title is not None else
            (rowid, lang, None, name, (c_title, c_heading, unpack(c_text))) if defer else
            (rowid, lang, *terms(analyze, c_title, c_heading, unpack(c_text)))
            for rowid, lang, title, heading, body, c_title, c_heading, c_text in rows]


def rows_at(db: sqlite3.Connection | sqlite3.Cursor, rowids: Sequence[int], unpack: Callable) -> list[tuple]:
    """:func:`term_rows` of the chunks ``rowids`` (those the store holds)."""
    return term_rows(db, select_in(db, rows_sql(db) + " WHERE c.rowid IN ({marks})", list(rowids)), unpack)


def completed(rows: Sequence[tuple]) -> Sequence[tuple]:
    """``rows`` with every deferred row (:func:`term_rows`) derived: ``(rowid, lang, title,
    heading, body)`` each."""
    if not any(r[2] is None for r in rows):
        return rows
    return [r if r[2] is not None else (r[0], r[1], *terms(ANALYZERS[r[3]], *r[4])) for r in rows]


def for_write(cur: sqlite3.Cursor, records: Sequence) -> str | None:
    """The analyser whose terms these records (:class:`~chaja.documents.ChunkRecord`) leave
    unwritten: the store's, or where it has none, a derivable one their terms came from,
    recorded now in the write's transaction (a rolled-back write records nothing)."""
    name = store_analyser(cur)
    if name is None:
        made = {r.terms_from for r in records}
        name = next((n for n in DERIVABLE if n in made), None)
        if name is not None:
            _record(cur, name)
    return name


# ---- rows an older chaja kept, dropped where the store's analyser makes them again ----------
#: the last ``chunk_terms`` rowid looked at by :func:`drop_kept` (rows after it wait for it)
CHECKED_KEY = "terms.checked_through"
#: rows compared and dropped in one transaction
BATCH = 20_000


def _size(*values) -> int:
    """The bytes of stored values: text as UTF-8, frames as they are."""
    return sum(len(v.encode("utf-8")) if isinstance(v, str) else len(v) for v in values)


def _droppable_by(db: sqlite3.Connection | sqlite3.Cursor) -> str | None:
    """The analyser kept rows may be compared with: the store's, or the one it was indexed
    with (``index.analyzer``, recorded by :class:`chaja.index.Index`) where it derives none yet."""
    name = store_analyser(db) or _meta(db, "index.analyzer")
    return name if name in DERIVABLE else None


def waiting(db: sqlite3.Connection) -> bool:
    """Whether kept rows wait to be compared (:func:`drop_kept`): rows an older chaja wrote,
    or a long document's, staged with its terms, in a store indexed with a derivable analyser."""
    if _droppable_by(db) is None:
        return False
    through = int(_meta(db, CHECKED_KEY) or 0)
    return db.execute("SELECT 1 FROM chunk_terms WHERE rowid > ? LIMIT 1", (through,)).fetchone() is not None


def drop_kept(db: sqlite3.Connection, unpack: Callable,
              transaction: Callable[[], AbstractContextManager[sqlite3.Cursor]],
              progress: Callable[[str], None] | None = None) -> int:
    """Remove the kept rows that equal what the store's analyser derives from their chunks,
    :data:`BATCH` rowids a transaction (a crash leaves rows kept or dropped, both read as
    written; the next compaction goes on from :data:`CHECKED_KEY`); the bytes they held.
    Rows that differ (terms made otherwise) stay. No keyword list changes, so nothing is logged."""
    name = _droppable_by(db)
    analyze = ANALYZERS[name]
    lo = int(_meta(db, CHECKED_KEY) or 0)
    last = db.execute("SELECT max(rowid) FROM chunk_terms").fetchone()[0] or 0
    if progress is not None:
        progress(f"dropping the keyword rows the {name} analyser makes again (rowids {lo + 1:,}–{last:,})")
    freed = 0
    while lo < last:
        hi = min(lo + BATCH, last)
        with transaction() as cur:
            rows = cur.execute("SELECT f.rowid, f.title, f.heading, f.body, c.title, c.heading, c.text"
                               " FROM chunk_terms f JOIN chunks c ON c.rowid = f.rowid"
                               " WHERE f.rowid > ? AND f.rowid <= ?", (lo, hi)).fetchall()
            same = [(rowid, _size(title, heading, body)) for rowid, title, heading, body, *chunk in rows
                    if (title, heading, unpack(body, "terms")) == terms(analyze, chunk[0], chunk[1], unpack(chunk[2]))]
            if same and store_analyser(cur) is None:
                _record(cur, name)
            cur.executemany("DELETE FROM chunk_terms WHERE rowid = ?", [(rowid,) for rowid, _ in same])
            cur.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (CHECKED_KEY, str(hi)))
            freed += sum(size for _, size in same)
        lo = hi
    return freed
