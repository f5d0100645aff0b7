"""BM25 over postings segments, with the scores SQLite FTS5's ``bm25()`` gives.

FTS5 scores a row for the OR of phrases ``q_i`` (``fts5_aux.c``, Robertson/Spärck Jones
BM25 with k1 = 1.2, b = 0.75)::

    score = Σ_i IDF_i · f_i·(k1 + 1) / (f_i + k1·(1 − b + b·D/avgdl))
    IDF_i = ln((N − n_i + 0.5) / (n_i + 0.5)), or 1e-6 where that is not positive
    f_i   = Σ_columns w_c · tf_{i,c}        (column weights; title-only: title hits alone)

with N the number of rows, n_i the rows that hold ``q_i`` (in the title, for a
title-only query), D the row's tokens over every column and avgdl the mean of D.
Here every term's postings are read from each segment, rows deleted since a segment
was written are masked out, and the per-row sums are accumulated in query-term order
(the order FTS5 sums them in), so scores agree with FTS5's to the last bits or so and
no row that holds no query term is ever touched. Top ``n`` is by score, then rowid.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from chaja.stores import bm25_maxscore, bm25_sums
from chaja.stores.bm25_maxscore import Term
from chaja.stores.postings import Segment, fts_tokens, merge

#: a segment with this many times more rows than a query's postings in it sums them in a
#: lent per-row array (:func:`chaja.stores.bm25_sums.summed`) rather than by ``bincount``
SPARSE = 8


class SegmentedBM25:
    """Live segments (each with an alive mask) and their row and token totals."""

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.alive: list[np.ndarray] = []
        #: per segment, whether every row is still alive (no mask to apply)
        self.whole: list[bool] = []
        self.n_rows = 0
        self.n_tokens = 0
        #: per segment, BM25's length term of each row for the mean length ``_norms_avgdl``
        self._norm_rows: list[np.ndarray | None] = []
        self._norms_avgdl = 0.0

    @classmethod
    def of(cls, seg: Segment) -> "SegmentedBM25":
        """An index of one segment, every row alive."""
        bm25 = cls()
        bm25.add(seg)
        bm25.recount()
        return bm25

    def apply(self, changes: list[tuple[int, bool]], read: Callable[[list[int]], Segment]) -> set[int]:
        """Apply a change log's ``(rowid, added)`` entries, oldest first: every row they
        touch is masked out of the segments that hold it, and the rows whose last entry
        added them come back as one new segment of ``read(rowids)``. Call :meth:`recount`
        after. Returns the rows touched."""
        last: dict[int, bool] = {}
        for row, added in changes:
            last[int(row)] = bool(added)
        if last:
            self.kill(np.fromiter(last, dtype=np.int64, count=len(last)))
            added = sorted(r for r, a in last.items() if a)
            if added:
                self.add(read(added))
        return set(last)

    def _norms(self, avgdl: float) -> list[np.ndarray]:
        """Per segment, BM25's length term of each row, ``K1·(1 − B + B·D/avgdl)``, kept
        while avgdl stays the same (each search would otherwise gather it per posting)."""
        if avgdl != self._norms_avgdl:
            self._norm_rows, self._norms_avgdl = [None] * len(self.segments), avgdl
        for i, seg in enumerate(self.segments):
            if self._norm_rows[i] is None:
                self._norm_rows[i] = bm25_maxscore.length_norms(seg.lengths, avgdl)
        return self._norm_rows

    def recount(self) -> None:
        self.n_rows = int(sum(int(a.sum()) for a in self.alive))
        self.n_tokens = int(sum(int(np.asarray(s.lengths, np.int64)[a].sum())
                                for s, a in zip(self.segments, self.alive)))

    def add(self, seg: Segment) -> None:
        self._norm_rows.append(None)
        self.segments.append(seg)
        self.alive.append(np.ones(seg.n_rows, dtype=bool))
        self.whole.append(True)

    def merged(self, first: int = 0) -> Segment:
        """The live rows of the segments from ``first`` on, in one segment (:func:`postings.merge`)."""
        return merge(list(zip(self.segments[first:], self.alive[first:])))

    def fold_tail(self, tail: Segment) -> None:
        """Replace every segment after the first with ``tail``, their live rows merged into
        one (every row of it alive). Call :meth:`recount` after."""
        self.segments, self.alive, self.whole = self.segments[:1], self.alive[:1], self.whole[:1]
        self._norm_rows = self._norm_rows[:1]
        self.add(tail)

    def kill(self, rowids: np.ndarray) -> None:
        """Mark these rowids dead wherever a segment holds them."""
        if rowids.size == 0:
            return
        rowids = np.sort(np.asarray(rowids, np.int64))
        for i, (seg, alive) in enumerate(zip(self.segments, self.alive)):
            local = seg.local_rows(rowids)
            if local.size:
                alive[local] = False
                self.whole[i] = False

    @staticmethod
    def single_token(term: str) -> str | None:
        """The one FTS5 token a query term is, or None when it is several (a phrase)."""
        tokens = fts_tokens(term)
        return tokens[0] if len(tokens) == 1 else ("" if not tokens else None)

    @classmethod
    def query_tokens(cls, terms: list[str]) -> list[str] | None:
        """The query terms (NULs dropped, duplicates, blank terms and terms that are not
        text left out) as single FTS5 tokens, or None when a term is several tokens (a
        phrase, which only FTS5 or SQL can match)."""
        cleaned = dict.fromkeys(t.replace("\x00", "") for t in terms if _text(t))
        tokens = [cls.single_token(t) for t in cleaned if t.strip()]
        return None if None in tokens else tokens

    @staticmethod
    def word_tokens(terms: list[str]) -> list[str]:
        """Every token of the query terms, each once (NULs dropped, terms that are not text
        left out): a term of several tokens is matched as its words, wherever they stand in a chunk."""
        return list(dict.fromkeys(t for term in terms if _text(term) for t in fts_tokens(term.replace("\x00", ""))))

    def holding(self, tokens: list[str], rowids: list[int]) -> dict[int, set[str]]:
        """The tokens each live row of ``rowids`` holds (in any column), by binary search
        in each token's postings (sorted by row), without reading the rows' text."""
        out: dict[int, set[str]] = {r: set() for r in rowids}
        want = np.asarray(sorted(out), np.int64)
        for seg, alive in zip(self.segments, self.alive):
            local = seg.local_rows(want)
            local = local[alive[local]] if local.size else local
            if local.size == 0:
                continue
            ids = np.asarray(seg.rowids)[local]
            for token in dict.fromkeys(tokens):
                rows, _ = seg.postings(token) if token else (seg.rows[:0], None)
                if rows.size == 0:
                    continue
                pos = np.minimum(np.searchsorted(rows, local), rows.size - 1)
                for r in ids[rows[pos] == local]:
                    out[int(r)].add(token)
        return out

    def search(self, tokens: list[str], n: int, *, title_weight: float, heading_weight: float,
               field: str = "all", lang: str | None = None,
               allow: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Best ``n`` (rowid, score) for the OR of ``tokens`` (already FTS5 tokens);
        ``allow``: sorted rowids the result is kept to (a search filter). Where the query's
        postings are many, only the rows that can still reach the best ``n`` are scored
        (:mod:`chaja.stores.bm25_maxscore`); the result is the same to the last bit."""
        if n <= 0 or self.n_rows == 0:
            return []
        weights, positive = bm25_maxscore.column_weights(title_weight, heading_weight, field)
        terms = self.query_terms(tokens, field == "title")
        if bm25_maxscore.worth_pruning(terms, n, weights):
            found = bm25_maxscore.best_rows(self, terms, n, weights, positive, lang, allow)
        else:
            found = self.full_totals(terms, weights, positive, lang)
        if found is None:
            return []
        return top_rows(*found, n, allow)

    def query_terms(self, tokens: list[str], title_only: bool) -> list[Term]:
        """The query tokens that some live row holds (in its title, ``title_only``), in
        query order, each with its IDF and its live postings."""
        terms = []
        for token in tokens:
            if not token:
                continue
            found = self._live_postings(token, title_only)
            df = sum(rows.size for _, rows, _ in found)
            if not df:
                continue
            terms.append(Term(bm25_maxscore.idf(self.n_rows, df), found))
        return terms

    def norms(self) -> list[np.ndarray]:
        """Per segment, BM25's length term of each row at the current mean length."""
        return self._norms(self.n_tokens / self.n_rows)

    def full_totals(self, terms: list[Term], weights: np.ndarray, positive: bool,
                    lang: str | None) -> tuple[np.ndarray, np.ndarray] | None:
        """(rowids, scores) of every row a query term hit (of ``lang``): every posting scored."""
        return self._row_totals(self._term_scores(terms, weights), positive, lang)

    def _term_scores(self, terms: list[Term], weights: np.ndarray) -> list[list[tuple[np.ndarray, np.ndarray]]]:
        """Per segment, (local rows, score) of each query term's live postings, in query order."""
        norms = self.norms()
        per_seg: list[list[tuple[np.ndarray, np.ndarray]]] = [[] for _ in self.segments]
        for term in terms:
            for si, rows, tf in term.found:
                per_seg[si].append((rows, term.scores(tf, weights, norms[si][rows])))
        return per_seg

    def _live_postings(self, token: str, title_only: bool) -> list[tuple[int, np.ndarray, np.ndarray]]:
        """(segment, local rows, tf) of the token's postings in each segment that holds it
        in a live row (in its title, ``title_only``)."""
        found = []
        for si, (seg, alive) in enumerate(zip(self.segments, self.alive)):
            rows, tf = seg.postings(token)
            if rows.size == 0:
                continue
            keep = tf[:, 0] > 0 if title_only else None
            if not self.whole[si]:             # a segment that lost rows: mask them out
                keep = alive[rows] if keep is None else keep & alive[rows]
            if keep is not None:
                rows, tf = rows[keep], tf[keep]
            if rows.size:
                found.append((si, rows, tf))
        return found

    def _row_totals(self, per_seg: list[list[tuple[np.ndarray, np.ndarray]]], positive: bool,
                    lang: str | None) -> tuple[np.ndarray, np.ndarray] | None:
        """(rowids, scores) of every row a query token hit (of ``lang``), its scores summed;
        None when there is none."""
        cand_ids, cand_scores = [], []
        for seg, parts in zip(self.segments, per_seg):
            if not parts:
                continue
            rows = np.concatenate([r for r, _ in parts])
            if rows.size * SPARSE < seg.n_rows:
                # few postings in a large segment: summed in a per-row array it lends, not in a
                # fresh one the size of the segment (zeroed, its pages faulted in, then scanned)
                ids, scores = bm25_sums.summed(seg, parts, positive, lang)
                cand_ids.append(ids)
                cand_scores.append(scores)
                continue
            total = np.bincount(rows, np.concatenate([s for _, s in parts]), minlength=seg.n_rows)
            hit = np.flatnonzero(total > 0 if positive else np.bincount(rows, minlength=seg.n_rows))
            if lang is not None:
                code = seg.lang_names.index(lang) if lang in seg.lang_names else -1
                hit = hit[np.asarray(seg.langs)[hit] == code]
            cand_ids.append(np.asarray(seg.rowids)[hit])
            cand_scores.append(total[hit])
        if not cand_ids:
            return None
        return np.concatenate(cand_ids), np.concatenate(cand_scores)


def _text(term) -> bool:
    """Whether a query term is text a store can hold: a ``str`` with no lone surrogate (which
    no stored term holds, and which has no UTF-8 to hash)."""
    if not isinstance(term, str):
        return False
    try:
        term.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def top_rows(ids: np.ndarray, scores: np.ndarray, n: int, allow: np.ndarray | None) -> list[tuple[int, float]]:
    """The best ``n`` (rowid, score) of those ``allow`` keeps (all, for None), by score, then rowid."""
    if allow is not None:
        keep = np.isin(ids, allow)
        ids, scores = ids[keep], scores[keep]
    if ids.size > n:
        cut = np.partition(scores, ids.size - n)[ids.size - n]
        keep = scores >= cut
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:n]
    return [(int(ids[i]), float(scores[i])) for i in order]
