"""The keyword list from the postings the database keeps (``keyword_engine="stored"``,
:mod:`chaja.stores.postgres.stored_postings`): a reader keeps nothing between searches.

One search, in one repeatable-read snapshot:

1. one statement reads the stored postings' log entry, N and the total length
   (``fts_stats``), the rows removed from a part, and the log entries no fold has taken yet;
2. one reads the rows of the query's terms (``keyword_postings``, each part's row);
3. rows the untaken entries added are read and tokenised here, as a small part of their
   own (none after ``Index.add``, whose compaction folds them);
4. each term's live postings are scored with the same BM25 as every other engine
   (:mod:`chaja.stores.bm25_segments`; IDF from the live postings, avgdl from ``fts_stats``),
   summed per row in query-term order, and the best ``n`` are named by one more read.

It reads every posting of the query's terms, where the default engine's MaxScore skips
the long lists of common terms; what it saves is the reader's memory and its first build.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from chaja.documents import Hit
from chaja.filters import Filters
from chaja.stores import bm25_maxscore, posting_blobs, postings
from chaja.stores.base import StoreError
from chaja.stores.bm25_maxscore import Term
from chaja.stores.bm25_segments import top_rows
from chaja.stores.postgres import stored_postings
from chaja.stores.postgres.keywords import rows_segment
from chaja.stores.postgres.reads import passing_seqs
from chaja.stores.tf_codes import CodedTf

#: rows are summed in an array spanning the hit rows while it is at most this many times
#: the postings (or 2²¹ rows); past that, by sorting
SPAN_PER_POSTING = 4
#: a filtered search asks the filter of its best rows in batches of these many times ``n``
#: before it reads every row the filter keeps
FILTER_BATCHES = (4, 60)

_STATE = (
    "SELECT m.value, f.chunks, f.tokens,"
    " (SELECT rows FROM {s}.keyword_removed),"
    " (SELECT array_agg(row ORDER BY seq) FROM {s}.keyword_log WHERE seq > m.value::bigint),"
    " (SELECT array_agg(added ORDER BY seq) FROM {s}.keyword_log WHERE seq > m.value::bigint)"
    " FROM {s}.fts_stats f LEFT JOIN {s}.meta m ON m.key = %s LIMIT 1"
)
_POSTINGS = ("SELECT k.term, p.low, p.langs, k.postings FROM {s}.keyword_postings k"
             " JOIN {s}.keyword_parts p ON p.part = k.part WHERE k.term = ANY(%s::text[])")

Piece = tuple[np.ndarray, "CodedTf | np.ndarray", np.ndarray, np.ndarray]   # rows, tf, lengths, languages


def keyword_stored(store, tokens: list[str], n: int, *, title_weight: float, heading_weight: float,
                   field: str, lang: str | None, where: Filters | None) -> list[Hit]:
    """The keyword list of ``tokens`` (FTS5 tokens) from the stored postings, in a snapshot of
    its own, or in the caller's transaction (:func:`one_view`) where there is one."""
    if store.conn.info.transaction_status == 0:
        ready(store)
    with _snapshot(store.conn):
        return _search(store, tokens, n, title_weight=title_weight, heading_weight=heading_weight,
                       field=field, lang=lang, where=where)


def ready(store) -> None:
    """Write the stored postings on a primary that keeps none; on a replica, say how to."""
    if stored_postings.covered(store) is not None:
        return
    if store.replica:
        raise StoreError("this database keeps no keyword postings yet: open the store once on the primary "
                         "with keyword_engine='stored', which writes them")
    stored_postings.build(store)


@contextmanager
def one_view(store) -> Iterator:
    """``store.reading()`` for the stored engine: the block's reads run in one repeatable-read
    transaction, so they see the store as of the block's start (a nested block, or one
    inside a transaction already open, reads in that one), holding the store's lock."""
    with store._lock:
        if store.conn.info.transaction_status == 0:
            store._run("cannot read the stored keyword postings", lambda: ready(store))
        with _snapshot(store.conn):
            yield store


@contextmanager
def _snapshot(conn) -> Iterator[None]:
    """One repeatable-read transaction for the block; the transaction already open, if any."""
    if conn.info.transaction_status != 0:
        yield
        return
    with conn.transaction():
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield


def _search(store, tokens, n, *, title_weight, heading_weight, field, lang, where) -> list[Hit]:
    q, conn = store._q, store.conn
    state = conn.execute(q(_STATE), (stored_postings.META_KEY,)).fetchone()
    if state is None or state[0] is None:
        raise StoreError("the stored keyword postings are gone (the store was rebuilt?): search again")
    _, n_rows, n_tokens, removed, log_rows, log_added = state
    if not n_rows:
        return []
    dead, tail = _untaken(store, log_rows or [], log_added or [])
    if removed:
        dead = np.union1d(dead, stored_postings.decode_rows(removed))
    pieces: dict[str, list[Piece]] = {t: [] for t in tokens}
    for term, low, langs, blob in conn.execute(q(_POSTINGS), (list(pieces),), binary=True):
        got = posting_blobs.decode(blob, low)
        pieces[term].append((got.rows, got.tf, got.lengths, _named(got.langs, langs, lang)))
    if tail is not None:
        for term in pieces:
            rows, tf = tail.postings(term)
            if rows.size:
                pieces[term].append((np.asarray(tail.rowids)[rows], tf, np.asarray(tail.lengths)[rows],
                                     _named(np.asarray(tail.langs)[rows], tail.lang_names, lang)))
    found = best_rows([pieces[t] for t in tokens if t], n_rows=int(n_rows), n_tokens=int(n_tokens),
                      title_weight=title_weight, heading_weight=heading_weight, field=field,
                      lang=lang, dead=dead)
    if found is None:
        return []
    hits = _filtered_top(store, *found, n, where) if where else top_rows(*found, n, None)
    if not hits:
        return []
    ids = dict(conn.execute(q("SELECT seq, id FROM {s}.chunks WHERE seq = ANY(%s)"), ([r for r, _ in hits],)))
    return [Hit(ids[r], score) for r, score in hits if r in ids]


def _named(codes: np.ndarray, names: list[str], lang: str | None) -> np.ndarray:
    """Whether each posting's row is in ``lang`` (all True without one)."""
    if lang is None:
        return np.ones(codes.size, bool)
    return codes == (names.index(lang) if lang in names else -1)


def _untaken(store, rows: list[int], added: list[bool]) -> tuple[np.ndarray, postings.Segment | None]:
    """(rows the untaken log entries removed from a part, sorted; the rows they added as one
    segment, or None): :func:`~chaja.stores.postgres.stored_postings.changes`."""
    dead, new = stored_postings.changes(rows, added)
    return dead, (rows_segment(store, new) if new else None)


def _filtered_top(store, ids: np.ndarray, scores: np.ndarray, n: int,
                  where: Filters) -> list[tuple[int, float]]:
    """The best ``n`` (row, score) of those ``where`` keeps, as :func:`~chaja.stores.bm25_segments.top_rows` orders them: the
    filter is asked of the best rows, :data:`FILTER_BATCHES` batches at most, in order, and
    of every row of the store only where that leaves fewer than ``n`` (a filter that keeps
    few rows), so a filter that keeps most rows costs one short read, not a list of them all."""
    order = np.lexsort((ids, -scores))
    kept: list[int] = []
    start = 0
    for size in FILTER_BATCHES:
        batch = order[start:start + size * n]
        start += batch.size
        if batch.size:
            passing = _passing(store, where, ids[batch])
            kept += [int(i) for i in batch if int(ids[i]) in passing]
        if len(kept) >= n or start >= order.size:
            return [(int(ids[i]), float(scores[i])) for i in kept[:n]]
    return top_rows(ids, scores, n, _passing_rows(store, where))


def _passing(store, where: Filters, rows: np.ndarray) -> set[int]:
    return {r for (r,) in passing_seqs(store, where, rows.tolist())}


def _passing_rows(store, where: Filters) -> np.ndarray:
    """Every row ``where`` keeps, sorted."""
    return np.fromiter((r for (r,) in passing_seqs(store, where)), np.int64)


def best_rows(terms: list[list[Piece]], *, n_rows: int, n_tokens: int, title_weight: float,
              heading_weight: float, field: str, lang: str | None,
              dead: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(rows, scores) of every live row of ``lang`` a term hit, each term's pieces (one per
    part) scored with BM25 as :meth:`~chaja.stores.bm25_segments.SegmentedBM25.search`
    scores them: IDF over the term's live postings (in titles, for ``field="title"``), N
    and avgdl from ``n_rows`` and ``n_tokens``, rows in ``dead`` left out; None when none."""
    title_only = field == "title"
    weights, positive = bm25_maxscore.column_weights(title_weight, heading_weight, field)
    avgdl = n_tokens / n_rows
    rows_out, scores_out = [], []
    alive = _alive_test(dead)
    for pieces in terms:
        live = [_live(p, title_only, alive) for p in pieces]
        df = sum(p[0].size for p in live)
        if not df:
            continue
        term = Term(bm25_maxscore.idf(n_rows, df), [])
        for rows, tf, lengths, in_lang in live:
            if not in_lang.all():
                rows, tf, lengths = rows[in_lang], tf[in_lang], lengths[in_lang]
            if rows.size:
                rows_out.append(rows)
                scores_out.append(term.scores(tf, weights, bm25_maxscore.length_norms(lengths, avgdl)))
    if not rows_out:
        return None
    return _summed(np.concatenate(rows_out), np.concatenate(scores_out), positive)


def _alive_test(dead: np.ndarray):
    """A function giving which of some rows are not in ``dead`` (sorted): a mask over the
    span of ``dead`` read at each row, so a posting costs one lookup however many rows died;
    None when none did."""
    if not dead.size:
        return None
    low = int(dead[0])
    mask = np.zeros(int(dead[-1]) - low + 1, bool)
    mask[dead - low] = True

    def alive(rows: np.ndarray) -> np.ndarray:
        at = rows - low
        inside = (at >= 0) & (at < mask.size)
        return ~(inside & mask[np.where(inside, at, 0)])
    return alive


def _live(piece: Piece, title_only: bool, alive) -> Piece:
    """The piece's postings of live rows (in titles, ``title_only``); ``alive``: :func:`_alive_test`'s."""
    rows, tf, lengths, in_lang = piece
    keep = None
    if title_only:
        keep = tf[:, 0] > 0          # (a CodedTf indexes as its decoded array does)
    if alive is not None:
        living = alive(rows)
        keep = living if keep is None else keep & living
    if keep is None or keep.all():
        return piece
    return rows[keep], tf[keep], lengths[keep], in_lang[keep]


def _summed(rows: np.ndarray, scores: np.ndarray, positive: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each row's total, its scores added in the order given (the terms' order)."""
    low, high = int(rows.min()), int(rows.max())
    if high - low < max(SPAN_PER_POSTING * rows.size, 2 ** 21):
        keys, at = None, rows - low
    else:
        keys, at = np.unique(rows, return_inverse=True)
    total = np.bincount(at, scores, minlength=high - low + 1 if keys is None else 0)
    hit = np.flatnonzero(total > 0 if positive else np.bincount(at, minlength=total.size))
    return (hit + low if keys is None else keys[hit]).astype(np.int64), total[hit]
