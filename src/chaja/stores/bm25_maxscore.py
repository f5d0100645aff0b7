"""The best ``n`` rows of a BM25 query without scoring every row that holds a query term.

A term's BM25 weight on a row, ``IDF · f·(k1 + 1) / (f + k1·(1 − b + b·D/avgdl))``, is below
``IDF · (k1 + 1)`` whatever the row (``f ≥ 0`` and the length term is positive), so a row
that holds none of the terms scored so far can add at most the sum of the other terms'
bounds. MaxScore (Turtle and Flood, "Query evaluation: strategies and optimizations",
1995) scores the rare terms first (the largest bounds: the shortest postings) and stops
taking terms in whole once the ``n``-th best total so far is above what every term not yet
taken could give together: no row outside the rows found so far can then reach the best
``n``. Each remaining term is looked up for those rows alone (a binary search in its
postings), so the long postings of common terms are never read in full: at a million
chunks 86% of the postings a KorQuAD or SciFact question touches belong to such terms.

The rows kept are scored with every term, summed in query order as the full scoring
sums them, so scores and order are the same to the last bit (tested against it).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from chaja.stores.sorted_keys import positions

if TYPE_CHECKING:
    from chaja.stores.bm25_segments import SegmentedBM25

K1, B = 1.2, 0.75
#: a query whose postings are fewer than this is scored in full (pruning costs more there)
PRUNE_FROM = 20_000
#: the terms taken in whole may hold at most this share of the query's postings; past it,
#: pruning would read nearly everything anyway and the query is scored in full
MAX_TAKEN_SHARE = 0.5
#: slack on both sides of the stopping test, for sums taken in another order
SLACK = 1e-9


@dataclass(frozen=True)
class Term:
    """One query term: its IDF and its live postings, ``(segment, local rows ascending, tf)``
    per segment that holds it (tf: title, heading, body frequencies)."""
    idf: float
    found: list[tuple[int, np.ndarray, np.ndarray]]

    @property
    def postings(self) -> int:
        return sum(rows.size for _, rows, _ in self.found)

    @property
    def bound(self) -> float:
        """The most this term adds to any row's score: ``IDF · (k1 + 1)``."""
        return self.idf * (K1 + 1.0)

    def scores(self, tf: np.ndarray, weights: np.ndarray, norms: np.ndarray) -> np.ndarray:
        """BM25 weight of the term on postings with frequencies ``tf`` and rows' length terms
        ``norms``: ``IDF · f·(k1 + 1) / (f + norm)``, f = Σ_columns w_c · tf_c."""
        f = tf[:, 0] * weights[0]     # column by column, as FTS5 sums them (no BLAS call: a
        f += tf[:, 1] * weights[1]    # search runs this beside its graph walks, and BLAS's
        f += tf[:, 2] * weights[2]    # threads would compete with them for the cores)
        return self.idf * ((f * (K1 + 1.0)) / (f + norms))


def worth_pruning(terms: list[Term], n: int, weights: np.ndarray) -> bool:
    """Whether :func:`best_rows` is the cheaper way: two terms or more, postings enough,
    and no negative column weight (the bound needs ``f ≥ 0``)."""
    return (len(terms) >= 2 and bool((weights >= 0).all())
            and sum(t.postings for t in terms) >= max(PRUNE_FROM, 4 * n))


def best_rows(bm25: "SegmentedBM25", terms: list[Term], n: int, weights: np.ndarray, positive: bool,
              lang: str | None, allow: np.ndarray | None) -> tuple[np.ndarray, np.ndarray] | None:
    """(rowids, scores) of a set of rows that holds the best ``n`` (of ``lang``, among
    ``allow``), each scored in full; None when no row is hit. Falls back to scoring every
    hit row where the rare terms do not settle the best ``n`` early (:data:`MAX_TAKEN_SHARE`)."""
    norms = bm25.norms()
    order = sorted(range(len(terms)), key=lambda i: (-terms[i].bound, i))
    left = math.fsum(t.bound for t in terms)
    budget = MAX_TAKEN_SHARE * sum(t.postings for t in terms)
    found = [_Found(seg, lang, allow) for seg in bm25.segments]
    try:
        read = 0
        for at, i in enumerate(order):
            term = terms[i]
            read += term.postings
            if read > budget:
                break
            for si, rows, tf in term.found:
                found[si].add(rows, term.scores(tf, weights, norms[si][rows]))
            left = max(0.0, left - term.bound)
            partial = np.concatenate([f.partial() for f in found])
            if partial.size >= n and _nth(partial, n) > left * (1 + SLACK):
                # no row outside those hit so far can reach the best n: the other terms are
                # looked up for those rows alone, the rows that can no longer reach it dropped
                rows = _within_reach(found, [f.kept_rows() for f in found], n, left)
                for j in order[at + 1:]:
                    rows = _narrowed(found, terms[j], rows, weights, norms)
                    left = max(0.0, left - terms[j].bound)
                    rows = _within_reach(found, rows, n, left)
                return _scored(bm25, terms, [np.sort(r) for r in rows], weights, norms, positive)
    finally:
        for f in found:
            f.give_back()
    return bm25.full_totals(terms, weights, positive, lang)


def _nth(values: np.ndarray, n: int) -> float:
    """The n-th largest of ``values`` (at least n of them), less the slack."""
    return float(np.partition(values, values.size - n)[values.size - n]) * (1 - SLACK)


def _narrowed(found: list["_Found"], term: Term, rows: list[np.ndarray], weights: np.ndarray,
              norms: list[np.ndarray]) -> list[np.ndarray]:
    """``term``'s weight added to the partial totals of ``rows`` (per segment), looked up in
    its postings (a binary search each); the rows as they were."""
    for si, posted, tf in term.found:
        mine = rows[si]
        if mine.size == 0:
            continue
        at, held = positions(posted, mine)      # (a term's postings in a segment are never empty)
        at = at[held]
        found[si].totals[mine[held]] += term.scores(tf[at], weights, norms[si][posted[at]])
    return rows


def _within_reach(found: list["_Found"], rows: list[np.ndarray], n: int, left: float) -> list[np.ndarray]:
    """Of ``rows`` (per segment), those whose partial total plus ``left`` (what the terms not
    yet added can give) reaches the n-th best partial total among them."""
    partial = [f.totals[r] for f, r in zip(found, rows)]
    every = np.concatenate(partial)
    if every.size <= n:
        return rows
    least = _nth(every, n) - left * (1 + SLACK)
    return [r[p * (1 + SLACK) >= least] for r, p in zip(rows, partial)]


def summed(seg, parts: list[tuple[np.ndarray, np.ndarray]], positive: bool,
           lang: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(rowids, totals) of the rows of one segment that ``parts`` (each term's local rows and
    scores, in query order) hit, of ``lang``; only those whose total is above 0 where
    ``positive``. Summed term by term in a lent per-row array: the same sums, to the last
    bit, as ``bincount`` gives, at a cost in the postings rather than in the segment's rows."""
    found = _Found(seg, lang, None)
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


class _Found:
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


def _scored(bm25: "SegmentedBM25", terms: list[Term], rows_of: list[np.ndarray], weights: np.ndarray,
            norms: list[np.ndarray], positive: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """(rowids, scores) of the rows ``rows_of`` (per segment, local, ascending), each term's
    weight looked up in its postings and summed in query order (as the full scoring sums)."""
    ids, scores = [], []
    for si, (seg, rows) in enumerate(zip(bm25.segments, rows_of)):
        if rows.size == 0:
            continue
        total = np.zeros(rows.size)
        for term in terms:
            for tsi, posted, tf in term.found:
                if tsi != si:
                    continue
                at, held = positions(posted, rows)
                at = at[held]
                total[held] += term.scores(tf[at], weights, norms[si][posted[at]])
        keep = total > 0 if positive else slice(None)
        ids.append(np.asarray(seg.rowids)[rows[keep]])
        scores.append(total[keep])
    if not ids:
        return None
    return np.concatenate(ids), np.concatenate(scores)
