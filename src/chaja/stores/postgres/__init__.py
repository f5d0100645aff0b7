"""The PostgreSQL store: documents, chunks, a full-text index and an HNSW vector
index in one schema of a PostgreSQL database (the ``postgres`` extra).

Keyword search uses PostgreSQL's own full-text search. chaja analyses text itself
(Hangul bigrams, lower-cased words), so the store only indexes those terms: each
chunk's term strings go through ``to_tsvector('simple', ...)`` into a stored
``tsvector`` (title terms weighted A, heading terms B, body terms D) with a GIN
index. The tsvectors live in a narrow companion table, ``chunk_fts``, one row per
chunk, so that ranking reads them inline instead of out of line from TOAST. ``to_tsvector`` keeps word positions; ``ts_rank_cd`` (cover density)
needs them, and a string cast straight to ``tsvector`` has none, which ranks every
document 0. Scores sum, per query term, BM25's idf times the term's saturated
``ts_rank_cd`` with the caller's title and heading weights (body = 1): close to,
but not on the same scale as, the SQLite store's BM25.

A query term never becomes tsquery syntax (:mod:`~chaja.stores.postgres.keyword_search`).

Vectors live in a pgvector ``vector(dim)`` column with an HNSW index
(``vector_cosine_ops``); scores are cosine similarity, ``1 - (a <=> b)``. The
dimension is fixed by the first chunk written (or by ``dim=`` on a new store).

The schema is created and migrated by chaja (:mod:`.migrations`).

One store object holds one connection and serialises its own calls with a lock;
give each thread or process its own object for parallel reads. Readers never
block each other or the writer (PostgreSQL MVCC), and every ``put_document`` is
one transaction, so readers see either the old or the new version of a document.

The modules, one concern each: :mod:`.store` (the object, its state and its calls),
:mod:`.connection` (opening, errors), :mod:`.migrations` (the schema),
:mod:`.hnsw` (vector columns and their indexes), :mod:`.documents` (writing and
deleting), :mod:`.staging` (long documents a batch at a time), :mod:`.keyword_search`
(BM25), :mod:`.keywords` (the postings a reader keeps), :mod:`.vectors` (vector
search), :mod:`.reads` (chunks, documents, metadata, statistics), :mod:`.replica`
(hot standbys), :mod:`.check` (check and repair), :mod:`.values` (values as written).
"""
from __future__ import annotations

from chaja.stores.postgres.connection import MIN_PGVECTOR
from chaja.stores.postgres.hnsw import HNSW_EF_CONSTRUCTION, HNSW_M, HNSW_MAX_DIM, INLINE_MAX_DIM
from chaja.stores.postgres.keyword_search import BM25_B, BM25_K1, KEYWORD_ENGINES
from chaja.stores.postgres.migrations import MIGRATIONS, SCHEMA_VERSION
from chaja.stores.postgres.store import PostgresStore
from chaja.stores.postgres.vectors import (EXACT_BELOW, HNSW_EF_SEARCH_FACTOR, HNSW_EF_SEARCH_MAX,
                                           HNSW_EF_SEARCH_MIN, ROW_COUNT_TTL)

__all__ = ["BM25_B", "BM25_K1", "EXACT_BELOW", "HNSW_EF_CONSTRUCTION", "HNSW_EF_SEARCH_FACTOR",
           "HNSW_EF_SEARCH_MAX", "HNSW_EF_SEARCH_MIN", "HNSW_M", "HNSW_MAX_DIM", "INLINE_MAX_DIM",
           "KEYWORD_ENGINES", "MIGRATIONS", "MIN_PGVECTOR", "ROW_COUNT_TTL", "SCHEMA_VERSION", "PostgresStore"]
