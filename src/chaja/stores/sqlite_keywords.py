"""The SQLite store's keyword index: a postings segment file beside the store, kept in
step with it through a change log written in the store's own transactions.

Every transaction that adds or removes chunk rows also appends ``(row, added)`` to the
``keyword_log`` table, so the log is exactly as durable as the chunks. The segment file
(``<store>-keywords``, see :mod:`chaja.stores.postings`) records the last log entry it
covers (``seq``) and the store's random ``store_id``. A reader maps the file, then applies
the log entries after ``seq``: rows touched since are masked out of the segments that
hold them, and rows added since are read from ``chunk_terms`` (or their terms derived again:
:mod:`chaja.stores.derived_terms`) into a small in-memory segment. Before
each search it checks the log's high-water mark (one indexed read), so it sees what any
process has committed.

:meth:`SqliteKeywordIndex.compact` (called by the writer after a batch) merges the live
rows into one new file under the store's write lock, replaces the old file atomically,
then deletes the log entries it covers and records how far it pruned; a reader whose
state is older than that reloads the file. The file is a cache: missing, damaged, from
another store or behind the log, it is rebuilt from each chunk's analysed terms (its
``chunk_terms`` row, or derived again).

The rows this store object wrote itself are not read back: their postings were built
beside the writes (:mod:`chaja.stores.postings_feed`), and a refresh takes them, each
row kept only where the log says it is still the row that was fed.
"""
from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

import numpy as np

from chaja.stores import derived_terms, postings, sqlite_errors
from chaja.stores.bm25_segments import SegmentedBM25
from chaja.stores.postings_feed import PostingsFeed
from chaja.stores.row_codes import CodedRows
from chaja.stores.text_packing import TextPacking

LOG_SCHEMA = """
CREATE TABLE IF NOT EXISTS keyword_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, row INTEGER NOT NULL, added INTEGER NOT NULL
);
"""
#: merge the in-memory segments into the file once they hold this share of all rows
COMPACT_SHARE = 0.05
COMPACT_MIN_ROWS = 1000
MAX_SEGMENTS = 8


def log_removed(cur: sqlite3.Cursor, doc_id: str) -> None:
    cur.execute("INSERT INTO keyword_log (row, added) SELECT rowid, 0 FROM chunks WHERE doc_id = ?", (doc_id,))


def log_added(cur: sqlite3.Cursor, rows: list[int]) -> None:
    cur.executemany("INSERT INTO keyword_log (row, added) VALUES (?, 1)", [(r,) for r in rows])


def last_entry(cur: sqlite3.Cursor) -> int:
    """The last log entry written (in the caller's transaction: its own last entry)."""
    row = cur.execute("SELECT seq FROM sqlite_sequence WHERE name = 'keyword_log'").fetchone()
    return int(row[0] or 0) if row else 0


#: rows tokenised at a time when the postings are built from every row
BUILD_BATCH = 50_000


def build_all(db: sqlite3.Connection, packing: TextPacking | None = None) -> postings.Segment:
    """The postings of every chunk (its ``chunk_terms`` row, or its terms derived again:
    :mod:`chaja.stores.derived_terms`), tokenised :data:`BUILD_BATCH` rows at a time."""
    packing = packing or TextPacking(db)
    page = derived_terms.rows_sql(db) + " WHERE c.rowid > ? ORDER BY c.rowid LIMIT ?"
    # (rows to derive are derived by the process that builds their half of the page)
    return postings.build_paged(lambda last: derived_terms.term_rows(
        db, db.execute(page, (last, BUILD_BATCH)).fetchall(), packing.unpack, defer=True))


class SqliteKeywordIndex:
    def __init__(self, db: sqlite3.Connection, path: Path, store_id: str, packing: TextPacking | None = None):
        self.db, self.path, self.store_id = db, path, store_id
        self.packing = packing or TextPacking(db)      # the store's, where it gives it
        self.bm25: SegmentedBM25 | None = None
        self.seq = -1            # last log entry applied
        self.base_rows = 0       # rows of the file segment
        self.base_seq: int | None = None   # the log entry the mapped file covers (None: built in memory)
        self.touched: set[int] = set()     # rows the log added or removed after the base
        self.pinned = 0          # inside store.reading(): refresh keeps this view (chaja.stores.one_view)
        #: the rows this store object wrote since the last refresh, their postings built beside
        #: the writes (chaja.stores.postings_feed)
        self.feed = PostingsFeed()

    def _marks(self) -> tuple[int, int]:
        high, pruned = self.db.execute(
            "SELECT (SELECT seq FROM sqlite_sequence WHERE name = 'keyword_log'),"
            " (SELECT value FROM meta WHERE key = 'keyword_log_pruned')").fetchone()
        return int(high or 0), int(pruned or 0)

    def _load_base(self, pruned: int) -> None:
        """The file segment if it is current enough, else one built from every ``chunk_terms`` row."""
        try:
            seg = postings.load(self.path)
            if seg.header.get("store_id") != self.store_id or int(seg.header.get("seq", -1)) < pruned:
                raise ValueError("stale")
            seq = base_seq = int(seg.header["seq"])
        except (OSError, ValueError, KeyError):
            seq, base_seq = self._marks()[0], None
            seg = self._built(None, pruned)
        self.bm25, self.seq, self.base_rows = SegmentedBM25.of(seg), seq, seg.n_rows
        self.base_seq, self.touched = base_seq, set()

    def _apply_log(self, pruned: int) -> None:
        ops = self.db.execute("SELECT seq, row, added FROM keyword_log WHERE seq > ? ORDER BY seq",
                              (self.seq,)).fetchall()
        if not ops:
            return
        self.touched |= self.bm25.apply([(row, added) for _, row, added in ops],
                                        lambda rows: self._built(rows, pruned, ops))
        self.seq = ops[-1][0]
        if len(self.bm25.segments) > MAX_SEGMENTS:
            self.bm25.fold_tail(self.bm25.merged(1))
        self.bm25.recount()

    def _built(self, rowids: list[int] | None, pruned: int, ops: list | None = None) -> postings.Segment:
        """One segment of the rows ``rowids`` (every ``chunk_terms`` row with None): the fed
        rows among them from the segments built beside the writes (:meth:`PostingsFeed.take`),
        the rest read from the store and built here."""
        fed = self.feed.take(self.db, pruned, ops)
        if not fed:
            return build_all(self.db, self.packing) if rowids is None else \
                postings.build(derived_terms.rows_at(self.db, rowids, self.packing.unpack))
        if rowids is None and self.db.execute("SELECT count(*) FROM chunks").fetchone()[0] == sum(
                int(alive.sum()) for _, alive in fed):
            return postings.merge(fed)          # every row the store holds is a row fed (each of those it holds)
        wanted = np.asarray(rowids if rowids is not None else
                            [r for (r,) in self.db.execute("SELECT rowid FROM chunks ORDER BY rowid")], np.int64)
        parts = [(seg, alive & np.isin(seg.rowids, wanted)) for seg, alive in fed]
        held = np.concatenate([seg.rowids[alive] for seg, alive in parts])
        rest = np.setdiff1d(wanted, held).tolist()
        if rest:
            built = postings.build(derived_terms.rows_at(self.db, rest, self.packing.unpack))
            parts.append((built, np.ones(built.n_rows, dtype=bool)))
        return postings.merge(parts)

    def _refresh_in_transaction(self) -> None:
        high, pruned = self._marks()
        if self.bm25 is None or pruned > self.seq:
            self._load_base(pruned)
        if high > self.seq:
            self._apply_log(pruned)

    def refresh(self) -> SegmentedBM25:
        """Bring the index up to what the store has committed; one consistent read."""
        if self.bm25 is not None and (self.pinned or self._marks()[0] == self.seq):
            return self.bm25
        in_tx = self.db.in_transaction
        if not in_tx:
            self.db.execute("BEGIN")
        try:
            self._refresh_in_transaction()
        finally:
            if not in_tx:
                self.db.execute("COMMIT")
        return self.bm25

    def file_unusable(self) -> bool:
        """Whether the postings are held in memory for want of a file this store can map
        (missing, damaged, of another store or another format), or the file keeps its rows
        in four bytes (mapped and searched as it is): the next compaction writes it."""
        self.refresh()
        return self._file_due()

    def _file_due(self) -> bool:
        """Whether the base segment is not a mapped file of today's layout: built in memory
        (no file it could map), or a file whose rows are four bytes each (mapped as it is)."""
        return self.base_seq is None or not isinstance(self.bm25.segments[0].rows, CodedRows)

    def pending_rows(self) -> int:
        return 0 if self.bm25 is None else sum(s.n_rows for s in self.bm25.segments[1:])

    def compact(self, *, begin, force: bool = False, also=None, progress=None) -> bool:
        """Write every live row to the file and prune the log it covers, when the in-memory
        segments hold enough rows, or always with ``force``; False when nothing was written.
        ``also(seq)`` runs in the same write transaction, after the file is in place and
        before the log is pruned (the store writes its vector graphs there); ``progress``
        is told ``"keyword postings"`` when the file is begun. ``begin()`` opens the write
        transaction (the store's, which waits for another process's write lock). A failed
        rollback never hides the error that called for it."""
        begin()
        try:
            self._refresh_in_transaction()
            bm25 = self.bm25
            pending = self.pending_rows()
            unusable = not self.path.exists() or self._file_due()    # (missing, damaged, older)
            stale = bm25.n_rows != self.base_rows or len(bm25.segments) > 1 or unusable
            threshold = max(COMPACT_MIN_ROWS, COMPACT_SHARE * bm25.n_rows)
            if not (force or (stale and (pending >= threshold or unusable))):
                self.db.execute("COMMIT")
                return False
            if progress is not None:
                progress("keyword postings")
            seg = bm25.merged()
            postings.save(seg, self.path, {"store_id": self.store_id, "seq": self.seq})
            if also is not None:
                also(self.seq)
            self.db.execute("DELETE FROM keyword_log WHERE seq <= ?", (self.seq,))
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('keyword_log_pruned', ?)", (str(self.seq),))
            self.db.execute("COMMIT")
        except OSError as exc:
            # the folder is read-only or full: searches keep using the log, nothing is lost
            sqlite_errors.rollback(self.db, exc, "the compaction")
            warnings.warn(f"could not write {self.path.name} ({exc}); keyword search reads the change log instead",
                          RuntimeWarning, stacklevel=3)
            return False
        except BaseException as exc:
            sqlite_errors.rollback(self.db, exc, "the compaction")
            raise
        self.bm25 = SegmentedBM25.of(postings.load(self.path))
        self.base_rows = self.bm25.segments[0].n_rows
        self.base_seq, self.touched = self.seq, set()
        return True
