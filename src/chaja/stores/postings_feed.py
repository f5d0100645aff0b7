"""The postings of rows this process writes, built while it writes them.

A bulk load writes rows on one core (SQLite, packing), then builds their postings from
``chunk_terms`` (:func:`chaja.stores.sqlite_keywords.build_all`): reading every row back,
unpacking and tokenising it. The writer already holds each row's terms, so it hands them
here as each write commits (:meth:`PostingsFeed.add`); once :data:`PAGE_ROWS` rows wait,
they go to a helper process (:mod:`chaja.stores.postings_helper`) that builds their
segment on the second core while the writer goes on. The next refresh of the keyword
index takes the segments (:meth:`PostingsFeed.take`) instead of building those rows again.

A segment is used only where the store's change log says it holds what the store holds:
each fed row is remembered with the log entry that added it, and a row is kept only
where its last entry in the log is that one (a row removed or written again since, by
this process or another, is masked out and read from the store as before). A feed whose
first entry the log has pruned since is not used at all. Rows of one page keep rising
rowids (a write that goes back, after the store's last rows were deleted, starts a new
page), so a segment never holds one rowid twice.

Small writes never start the helper: fewer than :data:`PAGE_ROWS` rows are built in this
process when taken, from the terms already in memory.
"""
from __future__ import annotations

from array import array
from dataclasses import dataclass

import numpy as np

from chaja.stores import postings, postings_helper
from chaja.stores.postings_segment import Segment

#: rows handed to the helper at once (about half a second of its work, as long as the writes
#: of those rows take)
PAGE_ROWS = 10_000


@dataclass
class _Part:
    """A page of fed rows: their rowids (rising), the log entries that added them, and its
    segment once built (None while the helper builds it)."""
    rowids: np.ndarray
    seqs: np.ndarray
    segment: Segment | None = None


class PostingsFeed:
    """The rows one store object wrote since its keyword index last refreshed."""

    def __init__(self) -> None:
        self._rows: list[tuple] = []            # (rowid, lang, title, heading, body), not handed over
        self._rowids, self._seqs = array("q"), array("q")
        self._parts: list[_Part] = []
        self._aide: postings_helper.Helper | None = None
        self._tried = False                     # whether a helper was asked for
        self._in_flight: tuple[_Part, list[tuple]] | None = None

    def __len__(self) -> int:
        return len(self._rows) + sum(p.rowids.size for p in self._parts)

    def add(self, rows: list[tuple], last_seq: int) -> None:
        """Rows one write committed, ``(rowid, lang, title, heading, body)`` with the terms as
        ``chunk_terms`` holds them before packing, in rising rowid order, added by the log
        entries ``last_seq − len(rows) + 1`` … ``last_seq``."""
        if not rows:
            return
        if self._rowids and rows[0][0] <= self._rowids[-1]:
            self._close_page()              # the store gave back rowids: a page of its own
        self._rows.extend(rows)
        self._rowids.extend(r[0] for r in rows)
        self._seqs.extend(range(last_seq - len(rows) + 1, last_seq + 1))
        if len(self._rows) >= PAGE_ROWS:
            self._close_page()

    def _close_page(self, here: bool = False) -> None:
        """Hand the waiting rows to the helper (starting it once), or build them here where
        no helper can run or with ``here`` (the last page, built while the helper ends its own)."""
        if not self._rows:
            return
        part = _Part(np.frombuffer(self._rowids, np.int64).copy(), np.frombuffer(self._seqs, np.int64).copy())
        rows, self._rows, self._rowids, self._seqs = self._rows, [], array("q"), array("q")
        self._parts.append(part)
        if here:
            part.segment = postings.build(rows)
            return
        if not self._tried:
            self._aide, self._tried = postings_helper.start(), True
        self._collect()
        if self._aide is not None and self._aide.submit(rows):
            self._in_flight = (part, rows)
        else:
            part.segment = postings.build(rows)

    def _collect(self) -> None:
        """Wait for the page the helper is building (built here if the helper failed)."""
        if self._in_flight is None:
            return
        part, rows = self._in_flight
        self._in_flight = None
        part.segment = self._aide.result() if self._aide is not None else None
        if part.segment is None:
            part.segment = postings.build(rows)

    def take(self, db, pruned: int, ops: list[tuple[int, int, int]] | None = None
             ) -> list[tuple[Segment, np.ndarray]]:
        """Every fed row's segment with the mask of the rows still as fed, and the feed
        emptied: ``db`` the store's connection (in the caller's read transaction), ``pruned``
        the last log entry pruned, ``ops`` the ``(seq, row, added)`` entries from the feed's
        first on where the caller has read them. Empty where nothing was fed or the log no
        longer reaches back to the feed's first entry."""
        self._close_page(here=True)
        self._collect()
        parts = self._parts
        self.close()
        if not parts or pruned >= int(parts[0].seqs[0]):
            return []
        first = int(parts[0].seqs[0])
        fed = sum(p.rowids.size for p in parts)
        count, removed = db.execute("SELECT count(*), coalesce(sum(added = 0), 0) FROM keyword_log WHERE seq >= ?",
                                    (first,)).fetchone()
        if count == fed and not removed:        # nothing but the feed's own entries since its first
            return [(p.segment, np.ones(p.rowids.size, dtype=bool)) for p in parts]
        if ops is None:
            ops = db.execute("SELECT seq, row, added FROM keyword_log WHERE seq >= ? ORDER BY seq",
                             (first,)).fetchall()
        last: dict[int, int] = {}
        for seq, row, added in ops:
            if seq >= first:
                last[int(row)] = int(seq) if added else -1
        return [(p.segment, np.fromiter((last.get(r, -2) == s for r, s in zip(p.rowids.tolist(), p.seqs.tolist())),
                                        dtype=bool, count=p.rowids.size)) for p in parts]

    def close(self) -> None:
        """Forget what was fed and end the helper."""
        self._rows, self._rowids, self._seqs, self._parts, self._in_flight = [], array("q"), array("q"), [], None
        self._tried = False
        if self._aide is not None:
            self._aide.close()
            self._aide = None
