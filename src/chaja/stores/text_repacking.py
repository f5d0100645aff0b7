"""Rows written before a store had its text dictionaries, packed afterwards.

A store packs the rows written once it holds its dictionaries (:mod:`chaja.stores.text_packing`);
the rows before stay plain: the first :data:`~chaja.stores.text_packing.TRAIN_AT` chunks of
every store, and every row of a store an older chaja wrote. The next compaction (after the next
``chaja index``, or ``chaja optimize``) packs them, without encoding anything again:

- a store that holds no dictionaries yet and at least ``TRAIN_AT`` chunks gets them, trained on
  its own rows (:meth:`TextPacking.ready`);
- the rows up to :data:`PLAIN_KEY` (the last row written before the dictionaries; every row of
  a store whose dictionaries predate the key) are read :data:`BATCH` rowids at a time, their
  plain text and body terms packed (:meth:`TextPacking.pack_many`: where a frame is smaller)
  and written back, one transaction per batch, so a crash leaves rows plain or packed, both of
  which read as written, and the next compaction goes on;
- the key then says ``0`` (nothing left), and the compaction gives the freed pages back.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager

from chaja.stores.text_packing import META_KEY, PLAIN_KEY, TRAIN_AT, TextPacking

#: rowids read, packed and written back in one transaction
BATCH = 20_000
#: the tables and columns packed, with the dictionary each takes
COLUMNS = (("chunks", "text", "text"), ("chunk_terms", "body", "terms"))


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]


def waiting(db: sqlite3.Connection) -> bool:
    """Whether the store may hold rows to pack: rows written before its dictionaries, or a
    store of at least ``TRAIN_AT`` chunks that has none (one an older chaja wrote)."""
    mark = _meta(db, PLAIN_KEY)
    if mark == "0":
        return False
    if mark is not None or _meta(db, META_KEY) is not None:
        return True
    return db.execute("SELECT count(*) FROM chunks").fetchone()[0] >= TRAIN_AT


def repack(db: sqlite3.Connection, packing: TextPacking,
           transaction: Callable[[], AbstractContextManager[sqlite3.Cursor]],
           progress: Callable[[str], None] | None = None) -> int:
    """Pack the store's plain rows (see the module) under the caller's write lock;
    ``transaction()`` is the store's write transaction (committed when its block ends, rolled
    back when it fails). The bytes the packed values saved."""
    with transaction():
        through = _ready(db, packing)
    if through is None:
        return 0
    if progress is not None and through:
        progress(f"packing the text of rows written before the store's dictionaries ({through:,} rowids)")
    saved = 0
    for lo in range(0, through, BATCH):
        with transaction():
            saved += _pack_window(db, packing, lo, min(lo + BATCH, through))
    with transaction() as cur:
        cur.execute("INSERT OR REPLACE INTO meta VALUES (?, '0')", (PLAIN_KEY,))
    return saved


def _ready(db: sqlite3.Connection, packing: TextPacking) -> int | None:
    """The last rowid to look at, the dictionaries trained first where the store has none;
    None where it cannot have them yet (too few chunks, or too little text to learn from)."""
    rows = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    if not packing.ready(db.cursor(), rows, []):     # (trained now: it records the key)
        return None
    mark = _meta(db, PLAIN_KEY)
    if mark is None:                  # dictionaries older than the key: every row
        return db.execute("SELECT max(rowid) FROM chunks").fetchone()[0] or 0
    return int(mark)


def _pack_window(db: sqlite3.Connection, packing: TextPacking, lo: int, hi: int) -> int:
    """Pack the plain values of rowids ``lo < rowid <= hi``; the bytes saved."""
    saved = 0
    for table, column, dictionary in COLUMNS:
        rows = db.execute(f"SELECT rowid, {column} FROM {table} WHERE rowid > ? AND rowid <= ?"
                          f" AND typeof({column}) = 'text'", (lo, hi)).fetchall()
        packed = packing.pack_many([value for _, value in rows], dictionary)
        changed = [(new, rowid, old) for (rowid, old), new in zip(rows, packed) if isinstance(new, bytes)]
        saved += sum(len(old.encode("utf-8")) - len(new) for new, _, old in changed)
        db.executemany(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", [(new, rowid) for new, rowid, _ in changed])
    return saved
