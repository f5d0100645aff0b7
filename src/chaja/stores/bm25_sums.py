"""Per-row sums of a query's BM25 weights in arrays a postings segment lends.

Summing a query's weights into a fresh array the size of a segment (``bincount``) costs in
the segment's rows whatever the query: at a million rows, 1–2 ms of zeroing, faulting pages
in and scanning for the rows hit. A segment instead lends each search a pair of per-row
arrays (:attr:`~chaja.stores.postings_segment.Segment.scratch`: the totals and a hit mask, 9 bytes a
row), which the search gives back cleared at the rows it touched: the cost is in the
postings. Summed term by term in query order, the totals are the same to the last bit as
``bincount``'s.
"""
from __future__ import annotations

import numpy as np


def summed(seg, parts: list[tuple[np.ndarray, np.ndarray]], positive: bool,
           lang: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(rowids, totals) of the rows of one segment that ``parts`` (each term's local rows and
    scores, in query order) hit, of ``lang``; only those whose total is above 0 where
    ``positive``. Summed term by term in a lent per-row array: the same sums, to the last
    bit, as ``bincount`` gives, at a cost in the postings rather than in the segment's rows."""
    found = LentTotals(seg, lang, None)
    try:
        for rows, scores in parts:
            found.add(rows, scores)
        rows = found.kept_rows()
        total = found.totals[rows]
    finally:
        found.give_back()
    if positive:
        keep = total > 0
        rows, total = rows[keep], total[keep]
    return np.asarray(seg.rowids)[rows], total


class LentTotals:
    """The rows of one segment that the terms taken so far hit, with their partial totals,
    summed in a per-row array the segment lends (:attr:`Segment.scratch`, given back cleared)."""

    def __init__(self, seg, lang: str | None, allow: np.ndarray | None) -> None:
        self.seg, self.allow = seg, allow
        self.code = None if lang is None else (seg.lang_names.index(lang) if lang in seg.lang_names else -1)
        self.totals = self.hit = None
        self.touched: list[np.ndarray] = []   # the rows each term hit first
        self.kept: list[np.ndarray] = []      # ... of them, those of ``lang`` that ``allow`` keeps

    def add(self, rows: np.ndarray, scores: np.ndarray) -> None:
        """One term's postings in this segment (rows ascending and distinct)."""
        if self.totals is None:
            n = self.seg.n_rows
            self.totals, self.hit = self.seg.scratch.pop() if self.seg.scratch else (np.zeros(n), np.zeros(n, bool))
        self.totals[rows] += scores
        first = rows[~self.hit[rows]]
        self.hit[first] = True
        self.touched.append(first)
        if self.code is not None:
            first = first[np.asarray(self.seg.langs)[first] == self.code]
        self.kept.append(first if self.allow is None else first[np.isin(np.asarray(self.seg.rowids)[first], self.allow)])

    def partial(self) -> np.ndarray:
        """The partial totals of the rows hit so far that the filters keep."""
        return self.totals[np.concatenate(self.kept)] if self.kept else np.zeros(0)

    def kept_rows(self) -> np.ndarray:
        """The rows hit so far that the filters keep."""
        return np.concatenate(self.kept) if self.kept else np.zeros(0, np.int64)

    def give_back(self) -> None:
        if self.totals is None:
            return
        touched = np.concatenate(self.touched)
        self.totals[touched] = 0.0
        self.hit[touched] = False
        self.seg.scratch.append((self.totals, self.hit))
        self.totals = self.hit = None
