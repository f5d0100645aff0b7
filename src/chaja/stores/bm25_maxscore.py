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

from chaja.stores.bm25_sums import LentTotals
from chaja.stores.sorted_keys import positions
from chaja.stores import tf_codes
from chaja.stores.tf_codes import CodedTf

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


def idf(n_rows: int, df: int) -> float:
    """FTS5's ``ln((N − n + 0.5) / (n + 0.5))``, or 1e-6 where that is not positive."""
    value = math.log((n_rows - df + 0.5) / (df + 0.5))
    return value if value > 0.0 else 1e-6


def length_norms(lengths: np.ndarray, avgdl: float) -> np.ndarray:
    """BM25's length term of rows of ``lengths`` tokens, ``K1·(1 − B + B·D/avgdl)``."""
    return K1 * (1 - B + B * np.asarray(lengths).astype(np.float64) / avgdl)


def column_weights(title_weight: float, heading_weight: float, field: str) -> tuple[np.ndarray, bool]:
    """(the title, heading and body weights a search reads frequencies with: title alone for
    ``field="title"``; whether every posting kept then scores above 0, so that a row's total
    says it was hit)."""
    title_only = field == "title"
    weights = np.array([title_weight, 0.0 if title_only else heading_weight, 0.0 if title_only else 1.0])
    return weights, (title_weight > 0 if title_only else bool((weights > 0).all()))


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

    def scores(self, tf: np.ndarray | CodedTf, weights: np.ndarray, norms: np.ndarray) -> np.ndarray:
        """BM25 weight of the term on postings with frequencies ``tf`` and rows' length terms
        ``norms``: ``IDF · f·(k1 + 1) / (f + norm)``, f = Σ_columns w_c · tf_c."""
        f = tf_codes.weighted(tf, weights)      # column by column, as FTS5 sums them
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
    found = [LentTotals(seg, lang, allow) for seg in bm25.segments]
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
                    for si, posted, tf in terms[j].found:
                        held, w = _weights_at(terms[j], posted, tf, rows[si], weights, norms[si])
                        found[si].totals[rows[si][held]] += w
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


def _weights_at(term: Term, posted: np.ndarray, tf: np.ndarray, rows: np.ndarray, weights: np.ndarray,
                norms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(held, weight): which of ``rows`` (local rows of one segment) the term's postings there
    (``posted``, ``tf``) hold, found by binary search, and its BM25 weight on each of them."""
    if not rows.size:
        return np.zeros(0, dtype=bool), np.zeros(0)
    at, held = positions(posted, rows)      # (a term's postings in a segment are never empty)
    at = at[held]
    return held, term.scores(tf[at], weights, norms[posted[at]])


def _within_reach(found: list[LentTotals], rows: list[np.ndarray], n: int, left: float) -> list[np.ndarray]:
    """Of ``rows`` (per segment), those whose partial total plus ``left`` (what the terms not
    yet added can give) reaches the n-th best partial total among them."""
    partial = [f.totals[r] for f, r in zip(found, rows)]
    every = np.concatenate(partial)
    if every.size <= n:
        return rows
    least = _nth(every, n) - left * (1 + SLACK)
    return [r[p * (1 + SLACK) >= least] for r, p in zip(rows, partial)]


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
                if tsi == si:
                    held, w = _weights_at(term, posted, tf, rows, weights, norms[si])
                    total[held] += w
        keep = total > 0 if positive else slice(None)
        ids.append(np.asarray(seg.rowids)[rows[keep]])
        scores.append(total[keep])
    if not ids:
        return None
    return np.concatenate(ids), np.concatenate(scores)
