"""Giving back the pages a compaction frees when it moves vectors out of the rows.

Compaction empties the vector blobs of the rows its new vector file covers
(:mod:`chaja.stores.sqlite_vectors`); SQLite keeps the freed pages in the file for later
rows. Where they are a large share of the file (a bulk load's vectors, or a schema-5
store moving its vectors out: about two thirds of its size), they are given back:
``PRAGMA incremental_vacuum`` on a store created with ``auto_vacuum=INCREMENTAL`` (every
store chaja creates), a ``VACUUM`` (the file rewritten, which also turns on incremental
vacuuming) on an older one where the caller allows it (``chaja optimize``).
"""
from __future__ import annotations

import sqlite3


#: after a compaction, freed pages are given back once they are at least this share of
#: the file and ...
FREE_SHARE = 0.25
#: ... at least this many bytes
FREE_BYTES = 16 << 20
#: asked for (``chaja optimize``), once they are this share of the file
ASKED_SHARE = 0.05


def free_bytes(db: sqlite3.Connection) -> tuple[int, int]:
    """(bytes in free pages, bytes of the whole file as SQLite counts it)."""
    size = db.execute("PRAGMA page_size").fetchone()[0]
    return (db.execute("PRAGMA freelist_count").fetchone()[0] * size,
            db.execute("PRAGMA page_count").fetchone()[0] * size)


def reclaim(db: sqlite3.Connection, *, rewrite: bool = False, moved: int = 0) -> int:
    """Give back the free pages where they are worth it (see the module); the bytes given
    back. ``rewrite`` (asked for) allows a ``VACUUM`` of a store without incremental
    vacuuming, and gives back a smaller share (:data:`ASKED_SHARE`) of free pages and
    ``moved`` bytes together. ``moved``: the bytes rows just lost in place (vector blobs a
    compaction emptied, text it packed); where they are a large share of the file, it is
    rewritten too, since rows that shrank leave their pages part empty (only a rewrite
    packs them: the React docs store's rows took 34 MB before, 19 MB after an incremental
    vacuum, 4.7 MB after a rewrite)."""
    free, total = free_bytes(db)
    large = max(FREE_BYTES, FREE_SHARE * total)
    if moved >= large or (rewrite and (free + moved) and free + moved >= ASKED_SHARE * total):
        db.execute("PRAGMA auto_vacuum=INCREMENTAL")     # (takes effect with the rewrite)
        db.execute("VACUUM")
        return total - free_bytes(db)[1]
    return give_back_incrementally(db) if free >= large else 0


def give_back_incrementally(db: sqlite3.Connection) -> int:
    """Give back every free page of a store made with incremental vacuuming (one made by
    chaja), however few, without rewriting the file (none given back otherwise; also after
    a migration dropped a table); the bytes given back."""
    if db.execute("PRAGMA auto_vacuum").fetchone()[0] != 2 or not free_bytes(db)[0]:
        return 0
    before = free_bytes(db)[1]
    # executescript steps the pragma to its end (one execute() step frees one page);
    # it runs as its own transaction, waiting for the write lock as any write does
    db.executescript("PRAGMA incremental_vacuum;")
    return before - free_bytes(db)[1]
