"""The PostgreSQL store's keyword index, held by the client: postings segments
(:mod:`chaja.stores.postings`) built from the terms the store keeps, scored by
:class:`~chaja.stores.bm25_segments.SegmentedBM25`, so a keyword search reads only the
postings of the query's terms instead of ranking every matching row in SQL.

Keeping in step. Every transaction that adds or removes chunks also appends
``(row, added)`` to ``keyword_log`` (``row`` is the chunk's ``seq``), after it has taken
the ``fts_stats`` row lock that orders the store's writers, so log entries become
visible in the order of their ``seq``. Before each search the index reads the log's
high-water mark (one index probe); when it moved, one repeatable-read transaction reads
the entries after the index's own and the terms of the rows they added: rows touched are
masked out of the segments that hold them and the added ones become a small segment.
Segments are merged once the small ones hold :data:`MERGE_SHARE` of all rows.

The cache. A full build reads every chunk's terms (seconds per 100,000 chunks), so the
merged segment is saved to ``<cache>/<store_id>.keywords`` with the log entry it covers
and mapped by the next process, which applies only the log after it. The file is a
cache: a missing or damaged one, or one whose row count disagrees with the store's
``fts_stats`` once the log is applied (checked once, when it is loaded: a database
restored from a backup), is rebuilt;
a cache folder that cannot be written leaves the index in memory, with a warning.

Pruning. The log would grow by a row for every chunk ever added or removed. Applying
more entries than the store has chunks costs about what a full build does, so
:meth:`PostgresKeywordIndex.prune` (``PostgresStore.compact``, run after each ``Index.add``) keeps the
newest ``max(LOG_KEEP_MIN, chunks)`` entries once the log spans twice that, and records
how far it pruned (meta :data:`PRUNED_KEY`). A reader (or a cache file) whose entry is
older than that cannot apply the log and builds the postings afresh.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

from chaja.stores import postings
from chaja.stores.bm25_segments import SegmentedBM25

#: chunks read and tokenised at a time when every row is built
BUILD_BATCH = 50_000
#: merge the small segments into one (and save it) once they hold this share of all rows
MERGE_SHARE = 0.05
MERGE_MIN_ROWS = 1000
MAX_SEGMENTS = 8
#: the log keeps at least this many newest entries (and at least as many as the store has chunks)
LOG_KEEP_MIN = 10_000
#: meta key: the newest log entry pruned away
PRUNED_KEY = "keyword_log_pruned"

TERMS = "SELECT seq, lang, title_terms, heading_terms, body_terms FROM {s}.chunks"


def rows_segment(store, seqs: list[int]) -> postings.Segment:
    """The postings of the chunks ``seqs``, from the terms the store keeps."""
    return postings.build(store.conn.execute(store._q(TERMS + " WHERE seq = ANY(%s) ORDER BY seq"),
                                             (seqs,)).fetchall())


def every_row_segment(store) -> postings.Segment:
    """Every chunk's postings, :data:`BUILD_BATCH` rows at a time."""
    q, conn = store._q, store.conn
    return postings.build_paged(lambda last: conn.execute(
        q(TERMS + " WHERE seq > %s ORDER BY seq LIMIT %s"), (last, BUILD_BATCH)).fetchall())


def default_cache() -> Path:
    """``$XDG_CACHE_HOME/chaja/postgres``, or ``~/.cache/chaja/postgres``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "chaja" / "postgres"


class PostgresKeywordIndex:
    """The postings of one PostgreSQL store, as of log entry ``seq``; call
    :meth:`refresh` (under the store's lock) before each search."""

    def __init__(self, store, cache: Path | None):
        self.store, self.cache = store, cache
        self.bm25: SegmentedBM25 | None = None
        self.seq = -1
        self.from_cache = False      # the base segment was mapped from the cache file
        self.pinned = 0              # inside store.reading(): refresh keeps this view (chaja.stores.one_view)

    # ---- reading the store -----------------------------------------------
    def _high(self) -> int:
        q = self.store._q
        return int(self.store.conn.execute(q("SELECT coalesce(max(seq), 0) FROM {s}.keyword_log")).fetchone()[0])

    def _pruned(self) -> int:
        """The newest log entry pruned away (0: none)."""
        return int(self.store.get_meta(PRUNED_KEY) or 0)

    def _store_id(self) -> str | None:
        return self.store.get_meta("store_id")

    def _recorded_rows(self) -> int:
        q = self.store._q
        row = self.store.conn.execute(q("SELECT chunks FROM {s}.fts_stats LIMIT 1")).fetchone()
        return int(row[0]) if row else 0

    # ---- the cache file --------------------------------------------------
    def _cache_path(self, store_id: str | None) -> Path | None:
        if self.cache is None or not store_id:
            return None
        return self.cache / f"{store_id}.keywords"

    def _cached(self, path: Path | None, high: int) -> tuple[postings.Segment, int] | None:
        if path is None or not path.exists():
            return None
        try:
            seg = postings.load(path)
            seq = int(seg.header["seq"])
        except (OSError, ValueError, KeyError):
            return None
        return (seg, seq) if seq <= high else None   # ahead of the log: a restored database

    def _save(self, seg: postings.Segment, seq: int, store_id: str | None) -> None:
        path = self._cache_path(store_id)
        if path is None:
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            postings.save(seg, path, {"store_id": store_id, "seq": seq})
        except OSError as exc:
            warnings.warn(f"could not write the keyword cache {path} ({exc}); keyword search keeps its "
                          "postings in memory and builds them again in the next process",
                          RuntimeWarning, stacklevel=4)
            self.cache = None

    # ---- keeping in step -------------------------------------------------
    def refresh(self) -> SegmentedBM25:
        """The index as of everything the store has committed (inside ``store.reading()``,
        as of the block's start: :mod:`chaja.stores.one_view`)."""
        if self.bm25 is not None and (self.pinned or self._high() == self.seq):
            return self.bm25
        conn = self.store.conn
        outside = conn.info.transaction_status == 0      # IDLE: this opens the transaction
        with conn.transaction():
            if outside:      # one snapshot for the log and the rows it names
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            high, pruned = self._high(), self._pruned()
            loading = self.bm25 is None or self.seq < pruned     # behind the pruned log: start afresh
            if loading:
                self._load(high, pruned)
            self._apply(high)
            if loading and self.from_cache and self.bm25.n_rows != self._recorded_rows():
                self._load(high, pruned, rebuild=True)      # the cache does not describe this database
                self._apply(high)
        return self.bm25

    def _load(self, high: int, pruned: int = 0, *, rebuild: bool = False) -> None:
        store_id = self._store_id()
        path = self._cache_path(store_id)
        got = None if rebuild else self._cached(path, high)
        if got is not None and got[1] < pruned:
            got = None                     # the log after the cache's entry is gone in part
        if got is None:
            seg, seq = every_row_segment(self.store), high
            self._save(seg, seq, store_id)
            self.from_cache = False
            if path is not None and self.cache is not None:
                seg = postings.load(path)      # mapped: the pages are shared with other processes
        else:
            (seg, seq), self.from_cache = got, True
        self.bm25, self.seq = SegmentedBM25.of(seg), seq

    def _apply(self, high: int) -> None:
        q = self.store._q
        if high <= self.seq:
            return
        ops = self.store.conn.execute(q("SELECT seq, row, added FROM {s}.keyword_log"
                                        " WHERE seq > %s AND seq <= %s ORDER BY seq"), (self.seq, high)).fetchall()
        bm25 = self.bm25
        bm25.apply([(row, added) for _, row, added in ops], lambda seqs: rows_segment(self.store, seqs))
        self.seq = high
        small = sum(s.n_rows for s in bm25.segments[1:])
        bm25.recount()
        if len(bm25.segments) > MAX_SEGMENTS or small >= max(MERGE_MIN_ROWS, MERGE_SHARE * bm25.n_rows):
            self.bm25 = SegmentedBM25.of(bm25.merged())
            self._save(self.bm25.segments[0], self.seq, self._store_id())

    def prune(self, keep_after: int | None = None) -> int:
        """Delete the log's entries older than its newest ``max(LOG_KEEP_MIN, chunks)`` once
        it spans twice that, and never one after ``keep_after`` (the entry the stored
        postings cover, :mod:`chaja.stores.postgres.stored_postings`), and record the newest
        entry deleted (meta :data:`PRUNED_KEY`); returns how many were deleted. Runs under
        the ``fts_stats`` row lock, so no writer has entries in flight and the newest entries stay."""
        q, conn = self.store._q, self.store.conn
        with conn.transaction():
            conn.execute(q("SELECT 1 FROM {s}.fts_stats FOR UPDATE"))
            low, high = conn.execute(q("SELECT coalesce(min(seq), 0), coalesce(max(seq), 0)"
                                       " FROM {s}.keyword_log")).fetchone()
            keep = max(LOG_KEEP_MIN, self._recorded_rows())
            if high - low + 1 <= 2 * keep:
                return 0
            cut = high - keep if keep_after is None else min(high - keep, keep_after)
            if cut < low:
                return 0
            deleted = conn.execute(q("DELETE FROM {s}.keyword_log WHERE seq <= %s"), (cut,)).rowcount
            self.store.set_meta(PRUNED_KEY, str(cut))
        return int(deleted)
