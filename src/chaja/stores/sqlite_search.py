"""The candidate lists: the best ``n`` chunks for a query by keyword and by vector.

Keyword: BM25 from the postings file (:mod:`chaja.stores.sqlite_keywords`); no query
text reaches SQL, so nothing a user types is syntax. Vector: an exact scan of the field's matrix, or a
walk of its HNSW graph with the rows written since rescored exactly
(:mod:`chaja.stores.sqlite_ann`). A search filter keeps the rows :meth:`CandidateSearch.allowed_rowids`
gives, before the top ``n``: the passing rows are scored, or, where that costs more than
a wider walk of the graph (a filter passing many rows of a large field,
:func:`walk_width`), the graph is walked and its passing candidates kept, the passing
rows scored after all when the best :data:`WALK_HEAD` of the walk holds fewer than ``n``.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from chaja.documents import Hit
from chaja.filters import Filters
from chaja.stores import quantized, side_by_side, sqlite_ann, sqlite_vectors
from chaja.stores.base import StoreError, allowed_rows
from chaja.stores.bm25_segments import SegmentedBM25
from chaja.stores.sorted_keys import held_in, positions


#: the share of a field's rows a filter must let pass for every row to be scored and the rest
#: masked; below it only the passing rows are scored (each row scores the same either way:
#: quantized.row_scores). Measured at 100,000 int8 rows (benchmarks/results/filtered-100000.md)
#: scoring the passing rows alone costs in proportion to them and no more than a whole scan at
#: 81%, so it is always done (1.0; 0.0 scores every row)
SCORE_EVERY_ROW_ABOVE = 1.0
#: a filtered search walks the field's graph (:func:`walk_width`) when the walk costs less
#: than scoring the passing rows: a walk candidate costs about this many scored rows. At
#: 1,000,000 benchmark chunks a walk of 512 candidates took 8.3 ms and scoring the 194,600
#: rows ``lang=ko`` passes 35 ms (``benchmarks/results/filtered-1000000.md``): 16 µs a
#: candidate, 0.18 µs a row
ROWS_PER_WALK_CANDIDATE = 90
#: a filtered walk asks for this many times the candidates its passing share needs to
#: hold ``n`` passing rows on average, and counts on the best :data:`WALK_HEAD` of them
#: (fewer found there: the passing rows are scored instead)
WALK_MARGIN = 4.0
#: the share of a filtered walk's candidates, best first, that must hold the ``n`` passing rows:
#: at 1,000,000 benchmark chunks, ``lang=ko`` kept recall@10 0.956 (that of scoring every
#: passing row) with a third, and fell to 0.938 with half (the tail of a walk's candidates
#: is where it misses rows)
WALK_HEAD = 1 / 3


def _exact(q: np.ndarray, n: int, mat: np.ndarray, ids, langs: np.ndarray, lang: str | None,
           passing: np.ndarray | None) -> list[Hit]:
    """Best ``n`` rows of ``mat`` by ``mat @ q`` (of ``lang``, of the ``passing`` rows), ties by row.
    With a filter only the rows that pass are scored (:data:`SCORE_EVERY_ROW_ABOVE`)."""
    keep = passing
    if lang:
        keep = (langs == lang) if keep is None else keep & (langs == lang)
    if keep is not None and np.count_nonzero(keep) <= SCORE_EVERY_ROW_ABOVE * len(keep):
        rows = np.flatnonzero(keep)
        scores = quantized.row_scores(mat, q, rows)
    else:
        rows = None
        scores = quantized.row_scores(mat, q)
        if keep is not None:
            scores = np.where(keep, scores, -np.inf)
    n = min(n, int(np.isfinite(scores).sum()))
    if n == 0:
        return []
    top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
    top = top[np.lexsort((top, -scores[top]))]        # (rows ascend, so ties still go by row)
    at = top if rows is None else rows[top]
    return [Hit(cid, s) for cid, s in zip(sqlite_vectors.ids_at(ids, at), scores[top].tolist())]


def walk_width(graph: sqlite_ann.Graph, n: int, passing: int, rows: int) -> int | None:
    """How many candidates a filtered search for the best ``n`` asks ``graph`` for, when a
    walk is cheaper than scoring the ``passing`` rows of the field's ``rows``; None when it
    is not. The walk must hold ``n`` passing rows: with a passing share ``s`` it asks for
    ``max(graph.candidates(n), WALK_MARGIN · n / s)``, and walks when that many candidates
    cost less than ``passing`` scored rows (:data:`ROWS_PER_WALK_CANDIDATE`)."""
    if rows <= 0 or passing <= 4 * n:
        return None
    width = max(graph.candidates(n), int(np.ceil(WALK_MARGIN * n * rows / passing)))
    return width if width * ROWS_PER_WALK_CANDIDATE < passing else None


def _filtered_walk(graph: sqlite_ann.Graph, q: np.ndarray, n: int, mat: np.ndarray, ids, langs: np.ndarray,
                   rowids: np.ndarray, touched: np.ndarray, allow: np.ndarray, width: int) -> list[Hit]:
    """Best ``n`` of the rows ``allow`` lets through: from a walk of ``width`` candidates
    when the best :data:`WALK_HEAD` of them holds ``n`` (the walk's candidates are the best rows it
    found, so the passing rows among them are the best passing rows), else by scoring the
    passing rows."""
    hits = _approximate(graph, q, n, mat, ids, rowids, touched, allow=allow, width=width)
    if hits is not None:
        return hits
    return _exact(q, n, mat, ids, langs, None, np.isin(rowids, allow, assume_unique=True))


def _approximate(graph: sqlite_ann.Graph, q: np.ndarray, n: int, mat: np.ndarray, ids, rowids: np.ndarray,
                 touched: np.ndarray, *, allow: np.ndarray | None = None, width: int = 0) -> list[Hit] | None:
    """Top ``n`` from the graph's candidates (:meth:`~chaja.stores.sqlite_ann.Graph.candidates`,
    or ``width``) and the members of their groups that may reach the top
    (:meth:`~chaja.stores.sqlite_ann.Graph.members`), plus every row written since it
    (``touched``), rescored exactly as the exact search scores them (see
    :mod:`chaja.stores.sqlite_ann`). ``allow``: the sorted rowids a filter lets through;
    only they count (the groups of every candidate are read, since a member can pass where
    its node does not), and None comes back where the best :data:`WALK_HEAD` of the candidates holds
    fewer than ``n`` of them."""
    basis = graph.basis
    part = basis @ q if basis.size else None
    if allow is not None:
        touched = touched[held_in(allow, touched)]
    if part is not None and float(np.abs(part).max()) > 1e-4 * float(np.abs(q).max()):
        # a query with its language component, on a graph without it (sqlite_ann)
        walk, top = (q - basis.T @ part).astype(np.float32), sqlite_ann.RAW_QUERY_FACTOR * n
        wide = int(sqlite_ann.RAW_QUERY_WIDTH * graph.expansion)
        keys = graph.search(walk, max(width, wide, graph.candidates(n, sqlite_ann.RAW_QUERY_FACTOR)) + touched.size)
    else:
        top = n
        keys = graph.search(q, max(width, graph.candidates(n)) + touched.size)

    def scored(keys: np.ndarray, only_passing: bool = True) -> tuple[np.ndarray, np.ndarray]:
        if touched.size:
            keys = keys[~np.isin(keys, touched)]
        if allow is not None and only_passing:
            keys = keys[held_in(allow, keys)]
        pos, hit = positions(rowids, keys)
        return pos[hit], quantized.row_scores(mat, q, pos[hit])

    # the walk's nodes, every one scored: a node that does not pass can lead to members that do
    rows, scores = scored(keys, only_passing=False)
    grouped = graph.groups is not None and rows.size > 0
    best = np.argsort(-scores, kind="stable") if grouped or allow is not None else None
    keep = None
    if allow is not None:
        # the passing rows are the best passing rows only where the walk is reliable: its
        # best WALK_HEAD (the tail of a walk's candidates is where it misses rows)
        keep = held_in(allow, rowids[rows])
        if np.count_nonzero(keep[best[:max(n, int(best.size * WALK_HEAD))]]) < n:
            return None
    if grouped:
        more, more_scores = graph.members(rowids[rows[best]], scores[best], top, float(np.linalg.norm(q)), scored,
                                          None if keep is None else keep[best])
    if keep is not None:
        rows, scores = rows[keep], scores[keep]
    if grouped:
        rows, scores = np.concatenate([rows, more]), np.concatenate([scores, more_scores])
    if touched.size:
        pos, hit = positions(rowids, touched)
        rows = np.concatenate([rows, pos[hit]])
        scores = np.concatenate([scores, quantized.row_scores(mat, q, pos[hit])])
    rows, first = np.unique(rows, return_index=True)
    scores = scores[first]
    order = np.lexsort((rows, -scores))[:n]
    return [Hit(cid, s) for cid, s in zip(sqlite_vectors.ids_at(ids, rows[order]), scores[order].tolist())]


class CandidateSearch:
    """:meth:`keyword` and :meth:`vector` of :class:`~chaja.stores.sqlite.SqliteStore`,
    over its keyword index (``_keywords``) and cached matrices
    (:class:`~chaja.stores.sqlite_matrices.CachedMatrices`); ``_allowed`` keeps the rows
    recent filters let through."""

    def _tokens(self, terms: list[str]) -> list[str]:
        """The query terms as the postings' tokens: each term one token, or, for a term of
        several (which no analyser of the store writes), its words."""
        tokens = SegmentedBM25.query_tokens(terms)
        return tokens if tokens is not None else SegmentedBM25.word_tokens(terms)

    def keyword(self, terms: list[str], n: int, *, title_weight: float = 2.0,
                heading_weight: float = 1.5, field: str = "all", lang: str | None = None,
                where: Filters | None = None) -> list[Hit]:
        tokens = [t for t in self._tokens(terms) if t]
        if n <= 0 or not tokens:
            return []
        index = self._keywords.refresh()
        allow = self.allowed_rowids(where) if where else None
        hits = index.search(tokens, n, title_weight=title_weight, heading_weight=heading_weight,
                            field=field, lang=lang, allow=allow)
        ids = self._ids_of([r for r, _ in hits])
        return [Hit(ids[r], s) for r, s in hits if r in ids]

    @staticmethod
    def _filter_sql(where: Filters | None, args: list, table: str = "") -> list[str]:
        if not where:
            return []

        def param(value: object) -> str:
            args.append(value)
            return "?"
        return where.sql(lambda name: table + name, param, lambda col, ph: f"instr({col}, {ph}) = 1")

    def allowed_rowids(self, where: Filters) -> np.ndarray:
        """Sorted rowids of the chunks that pass ``where`` (kept until the next write)."""
        self._fresh()
        def read() -> list:
            args: list = []
            conds = self._filter_sql(where, args)
            return self._db.execute("SELECT rowid FROM chunks WHERE " + " AND ".join(conds) + " ORDER BY rowid",
                                    args).fetchall()
        return allowed_rows(self._allowed, (where, self._keywords.seq), read)

    def vector(self, query: np.ndarray, n: int, *, lang: str | None = None, field: str = "chunk",
               where: Filters | None = None) -> list[Hit]:
        return self._vector_job(query, n, lang, field, where)[0]()

    def vector_many(self, requests: Sequence[tuple[np.ndarray, int, str]], where: Filters | None = None, *,
                    meanwhile: Callable[[], object] | None = None) -> list[list[Hit]]:
        """:meth:`vector` for each (query, n, field) of ``requests``: the same hits, in the
        same order, as one call each. Graph walks run side by side
        (:mod:`chaja.stores.side_by_side`); exact scans run first, one at a time, since
        their matrix product already uses every core and its threads stall a walk beside it.
        ``meanwhile``: the caller's own work (a search's keyword lists), run in this
        thread while the pool walks the graphs."""
        jobs = [self._vector_job(q, n, None, field, where) for q, n, field in requests]
        found: list = [None if on_graph else job() for job, on_graph in jobs]
        walks = [i for i, (_, on_graph) in enumerate(jobs) if on_graph]
        first = [meanwhile] if meanwhile is not None else []
        done = side_by_side.run(first + [jobs[i][0] for i in walks])
        for i, hits in zip(walks, done[len(first):]):
            found[i] = hits
        return found

    def _vector_job(self, query: np.ndarray, n: int, lang: str | None, field: str,
                    where: Filters | None) -> tuple[Callable[[], list[Hit]], bool]:
        """Read what a vector search needs from the store now (in this thread), and return
        the search itself, which only computes on those arrays, and whether it walks a graph.
        (``allowed_rowids`` and ``_vectors`` bring the store up to date first.)"""
        allow = self.allowed_rowids(where) if where else None
        mat, ids, langs = self._vectors(field)
        if n <= 0 or mat.shape[0] == 0:
            return list, False
        q = np.asarray(query, dtype=np.float32).ravel()
        if q.size != mat.shape[1]:
            raise StoreError(f"query vector has dimension {q.size}, the store holds {mat.shape[1]}")
        rowids = self._matrix_rowids[field]
        graph = self._graph(field) if lang is None and 4 * n < mat.shape[0] else None
        width = None if graph is None or allow is None else walk_width(graph, n, allow.size, mat.shape[0])
        if graph is not None and (allow is None or width is not None):
            touched = np.fromiter(self._keywords.touched, dtype=np.int64, count=len(self._keywords.touched))
            if allow is None:
                return functools.partial(_approximate, graph, q, n, mat, ids, rowids, touched), True
            return functools.partial(_filtered_walk, graph, q, n, mat, ids, langs, rowids, touched, allow, width), True
        passing = np.isin(rowids, allow, assume_unique=True) if allow is not None else None
        return functools.partial(_exact, q, n, mat, ids, langs, lang, passing), False
