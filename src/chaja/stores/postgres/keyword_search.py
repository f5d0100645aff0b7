"""Keyword search: BM25 over the query terms, from the postings this reader keeps
(:mod:`chaja.stores.postgres.keywords`, the ``postings`` engine), from the postings the
database keeps (:mod:`chaja.stores.postgres.stored_search`, the ``stored`` engine) or ranked
in SQL over the full-text index (the ``sql`` engine), and which query terms each chunk holds.

A query term never becomes tsquery syntax: the terms travel as one ``text[]``
parameter and each one goes through ``phraseto_tsquery('simple', term)``, which
reads its input as plain text (the same parser as the documents, so a term that
the parser splits matches the same split in a document); the per-term queries are
OR-ed together by a small aggregate over ``tsquery_or``.
"""
from __future__ import annotations

import math

import numpy as np

from chaja.documents import Hit
from chaja.filters import Filters
from chaja.stores.base import allowed_rows
from chaja.stores.bm25_segments import SegmentedBM25
from chaja.stores.postgres import stored_postings
from chaja.stores.postgres.stored_search import keyword_stored
from chaja.stores.postgres.reads import passing_seqs
from chaja.stores.postgres.values import clean, filter_sql

#: BM25's parameters, as FTS5's ``bm25()`` in the SQLite store.
BM25_K1, BM25_B = 1.2, 0.75
#: ``postings``: the reader keeps the postings (chaja.stores.postgres.keywords) and
#: scores only the query terms' lists; ``stored``: the database keeps them and a search
#: fetches its terms' lists (chaja.stores.postgres.stored_postings); ``sql``: every
#: matching row is ranked in SQL.
KEYWORD_ENGINES = ("postings", "stored", "sql")

_TEXT_CONFIG = "pg_catalog.simple"


def query_terms(terms: list[str]) -> list[str]:
    """Distinct, storable terms: no NULs, no blanks, no unencodable strings."""
    out: dict[str, None] = {}
    for t in terms:
        if not isinstance(t, str):
            continue
        t = clean(t)
        if not t or not t.strip():
            continue
        try:
            t.encode("utf-8")
        except UnicodeEncodeError:
            continue
        out[t] = None
    return list(out)


def keyword(store, terms: list[str], n: int, *, title_weight: float = 2.0,
            heading_weight: float = 1.5, field: str = "all",
            lang: str | None = None, where: Filters | None = None) -> list[Hit]:
    """Best ``n`` chunks by BM25 over any of ``terms``, best first, the same formula
    as the SQLite store's FTS5 ``bm25()``:

        score(d) = Σ_t idf(t) · tf · (k1 + 1) / (tf + k1 · (1 − b + b · |d| / avgdl))
        idf(t)   = max(ln((N − df(t) + 0.5) / (df(t) + 0.5)), 1e-6)
        tf       = ts_rank_cd(weights, tsv(d), t, 0)

    (Robertson & Spärck Jones; k1 = 1.2, b = 0.75; N chunks, df(t) chunks holding
    t, |d| the chunk's tokens, avgdl their mean). For a one-word query ``t`` every
    occurrence is a cover of its own weight, so ``ts_rank_cd`` without
    normalisation is the weighted term frequency Σ_field w_field · hits_field.
    ``ts_rank_cd`` over the OR of all terms has no notion of how rare a term is
    (KorQuAD keyword-only nDCG@10 0.742 against SQLite's 0.956); idf with
    ts_rank_cd's own saturation r/(r+1) gave 0.942; BM25 proper matches SQLite.
    The weights are relative to body text (1.0); ``ts_rank_cd`` takes weights of at
    most 1, so all three are divided by the largest and tf multiplied back. Ties
    go to the earlier-stored chunk.
    """
    if field not in ("all", "title"):
        raise ValueError(f"field must be 'all' or 'title', not {field!r}")
    for name, w in (("title_weight", title_weight), ("heading_weight", heading_weight)):
        if not math.isfinite(w) or w < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {w!r}")
    if n <= 0:
        return []
    tokens = SegmentedBM25.query_tokens(terms) if store.keyword_engine != "sql" else None
    if tokens is not None and store.keyword_engine == "stored":
        return store._run("keyword search failed", lambda: keyword_stored(
            store, tokens, n, title_weight=title_weight, heading_weight=heading_weight, field=field,
            lang=clean(lang) or None, where=where))
    if tokens is not None:
        return store._run("keyword search failed", lambda: keyword_postings(
            store, tokens, n, title_weight=title_weight, heading_weight=heading_weight, field=field,
            lang=clean(lang) or None, where=where))
    words = query_terms(terms)
    if not words:
        return []
    return _keyword_sql(store, words, n, title_weight=title_weight, heading_weight=heading_weight,
                        field=field, lang=lang, where=where)


def _keyword_sql(store, words: list[str], n: int, *, title_weight: float, heading_weight: float,
                 field: str, lang: str | None, where: Filters | None) -> list[Hit]:
    """The ``sql`` engine: :func:`keyword`'s BM25, every matching row ranked in SQL."""
    scale = max(1.0, float(title_weight), float(heading_weight))
    # ts_rank_cd's weights array is {D, C, B, A}: body, (unused), heading, title.
    weights = [1.0 / scale, 1.0 / scale, heading_weight / scale, title_weight / scale]
    column = "title_tsv" if field == "title" else "tsv"
    params = {"weights": weights, "terms": words, "lang": clean(lang), "n": int(n),
              "scale": scale, "k1": BM25_K1, "b": BM25_B}
    condition = (" AND f.lang = %(lang)s" if lang else "") + filter_sql(where, params, "f.chunk_id")
    query = store._q(
        "WITH q AS (SELECT DISTINCT phraseto_tsquery('" + _TEXT_CONFIG + "'::regconfig, t) AS tq"
        "           FROM unnest(%(terms)s::text[]) AS t),"
        # LIMIT 1 tells the planner it is one row (it cannot know the table holds one)
        " total AS (SELECT chunks::float8 AS n, greatest(tokens::float8 / greatest(chunks, 1), 1) AS avgdl"
        "           FROM {s}.fts_stats LIMIT 1),"
        " w AS (SELECT q.tq, greatest(ln((total.n - d.df + 0.5) / (d.df + 0.5)), 1e-6) AS idf"
        "       FROM q CROSS JOIN total CROSS JOIN LATERAL"
        "       (SELECT count(*)::float8 AS df FROM {s}.chunk_fts AS g WHERE g." + column + " @@ q.tq) AS d"
        "       WHERE d.df > 0),"
        " m AS (SELECT f.chunk_id, f.seq, w.idf, f.n_tokens / total.avgdl AS rel,"
        "              %(scale)s * ts_rank_cd(%(weights)s::float4[], f." + column + ", w.tq, 0) AS tf"
        "       FROM w CROSS JOIN total JOIN {s}.chunk_fts AS f ON f." + column + " @@ w.tq" + condition + ")"
        " SELECT chunk_id, sum(idf * tf * (%(k1)s + 1) / (tf + %(k1)s * (1 - %(b)s + %(b)s * rel))) AS score"
        " FROM m GROUP BY chunk_id, seq ORDER BY score DESC, seq LIMIT %(n)s"
    )
    rows = store._run("keyword search failed", lambda: store.conn.execute(query, params).fetchall())
    return [Hit(cid, float(score)) for cid, score in rows]


def keyword_postings(store, tokens: list[str], n: int, *, title_weight: float, heading_weight: float,
                     field: str, lang: str | None, where: Filters | None) -> list[Hit]:
    """The keyword list from the postings this reader keeps (the ``postings`` engine):
    the same BM25 as the SQL path, reading only the query terms' postings."""
    index = store._keywords.refresh()
    allow = allowed_seqs(store, where) if where else None
    hits = index.search(tokens, n, title_weight=title_weight, heading_weight=heading_weight,
                        field=field, lang=lang, allow=allow)
    if not hits:
        return []
    ids = dict(store.conn.execute(store._q("SELECT seq, id FROM {s}.chunks WHERE seq = ANY(%s)"),
                                  ([r for r, _ in hits],)).fetchall())
    return [Hit(ids[r], score) for r, score in hits if r in ids]   # a chunk deleted since: left out


def allowed_seqs(store, where: Filters) -> np.ndarray:
    """Sorted ``seq`` of the chunks that pass ``where``, kept until the log moves on."""
    return allowed_rows(store._allowed, (where, store._keywords.seq), lambda: passing_seqs(store, where))


def matched_terms(store, terms: list[str], ids: list[str]) -> dict[str, set[str]]:
    """Which of ``terms`` each listed chunk holds (``chunk_terms(ids)[c] & set(terms)``),
    from the postings when this reader keeps them (no chunk text is read)."""
    tokens = SegmentedBM25.query_tokens(terms) if store.keyword_engine == "postings" else None
    if tokens is None or tokens != list(dict.fromkeys(terms)):
        wanted = set(terms)
        return {c: t & wanted for c, t in store.chunk_terms(ids).items()}
    wanted_ids = [i for i in (clean(x) for x in ids) if i is not None]

    def read() -> dict[str, set[str]]:
        index = store._keywords.refresh()
        seq_of = dict(store.conn.execute(store._q("SELECT id, seq FROM {s}.chunks WHERE id = ANY(%s::text[])"),
                                         (wanted_ids,)).fetchall())
        held = index.holding(tokens, list(seq_of.values()))
        return {c: held[r] for c, r in seq_of.items()}

    return store._run("cannot read chunk terms", read) if wanted_ids else {}


def refresh(store) -> bool:
    """Apply what the store's writers have committed to the keyword postings this
    reader keeps (a search does it first; the hub calls it after each write to take
    that off the next search); True when there was something to apply."""
    if store.keyword_engine != "postings":
        return False
    before = store._keywords.seq
    store._run("cannot bring the keyword index up to date", store._keywords.refresh)
    return store._keywords.seq != before


def compact(store, *, progress=None) -> bool:
    """Fold the keyword log into the stored postings where the database keeps them
    (:func:`~chaja.stores.postgres.stored_postings.fold`), then prune it to what readers
    still need (:meth:`~chaja.stores.postgres.keywords.PostgresKeywordIndex.prune`);
    ``Index.add`` and ``Index.delete`` call it, telling ``progress`` ``"keyword log"``.
    True when either changed something. Nothing to do on a replica, which the primary's
    work reaches by replication."""
    if store.replica:
        return False
    if progress is not None:
        progress("keyword log")
    folded = store._run("cannot fold the keyword log into the stored postings", lambda: stored_postings.fold(store))
    kept = store._run("cannot read the stored postings' place", lambda: stored_postings.covered(store))
    pruned = store._run("cannot prune the keyword log", lambda: store._keywords.prune(kept))
    return folded or pruned > 0
