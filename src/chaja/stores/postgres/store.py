"""The PostgreSQL store's one object: its settings, its connection and lock, and the
caches its calls share. Each call of the store interface is answered by the module of its
concern, whose plain functions take this object as their first argument."""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from chaja.documents import Chunk, ChunkRecord, Document, DocumentInfo, Hit, StoreStats
from chaja.filters import Filters
from chaja.stores.base import StoreError
from chaja.stores.one_view import OneViewReads
from chaja.stores.postgres.check import check, repair
from chaja.stores.postgres.connection import connect, describe, load_psycopg, load_register_vector, run, set_up
from chaja.stores.postgres.documents import delete_document, put_aligned_vectors, put_document
from chaja.stores.postgres.hnsw import build_vector_index, bulk_load
from chaja.stores.postgres.keyword_search import KEYWORD_ENGINES, compact, keyword, matched_terms, refresh
from chaja.stores.postgres.keywords import PostgresKeywordIndex, default_cache
from chaja.stores.postgres.migrations import current_version
from chaja.stores.postgres.reads import (chunk_sample, chunk_terms, chunks,
                                         chunks_without_aligned, column_of, documents, fingerprints, get_meta,
                                         sample_fingerprint, set_meta, stats)
from chaja.stores.postgres.replica import replica_status
from chaja.stores.postgres.staging import discard_staged, put_staged, resume_staged, stage_chunks, staged
from chaja.stores.postgres import stored_postings
from chaja.stores.postgres.stored_search import one_view
from chaja.stores.postgres.vectors import (EXACT_BELOW, HNSW_EF_SEARCH_MAX, HNSW_EF_SEARCH_MIN, language_means,
                                           row_count, stored_vectors, vector, vector_sample, vector_scores)

if TYPE_CHECKING:  # pragma: no cover
    import psycopg


class PostgresStore(OneViewReads):
    """A chaja store in PostgreSQL (with pgvector ≥ 0.5).

    ``dsn`` is a libpq connection string or URL. ``dim`` fixes the vector dimension
    of a new store (an existing store must match it). ``schema`` holds all of
    chaja's tables, so several stores can share one database. ``ef_search`` is the
    floor for pgvector's ``hnsw.ef_search``: each vector query uses
    ``max(ef_search, 8 n)``, at most 1000 (higher: better recall, slower queries).
    Tables of at most ``exact_below`` rows are searched exactly instead.
    ``keyword_engine``: ``postings`` (the reader keeps the keyword postings, mapped from a
    file under ``keyword_cache``), ``stored`` (the database keeps them, written by this
    object's first search where none are; the reader keeps nothing) or ``sql`` (every
    match ranked in SQL); the same scores from all three.

    Not for sharing across threads at full speed: calls on one object are
    serialised by a lock. Open one object per thread for parallel reads.
    """

    def __init__(self, dsn: str, *, dim: int | None = None, schema: str = "chaja",
                 ef_search: int = HNSW_EF_SEARCH_MIN, exact_below: int = EXACT_BELOW,
                 keyword_engine: str = "postings", keyword_cache: str | os.PathLike | None = "auto"):
        psycopg = load_psycopg()
        register_vector = load_register_vector()
        from psycopg import sql

        if not schema or len(schema.encode("utf-8")) > 63 or "\x00" in schema:
            raise StoreError(f"invalid schema name {schema!r}")
        self._sql = sql
        self.schema = schema
        self._s = sql.Identifier(schema)
        self._lock = threading.RLock()
        self._target = describe(dsn)
        self._conn: psycopg.Connection | None = None
        self._dim: int | None = None
        self._iterative_scan = False
        self._aligned_dim: int | None = None   # the aligned columns' dimension, once typed
        self._bulk = False
        if not 1 <= int(ef_search) <= HNSW_EF_SEARCH_MAX:
            raise StoreError(f"ef_search must be between 1 and {HNSW_EF_SEARCH_MAX}, got {ef_search}")
        self.ef_search = int(ef_search)
        self.exact_below = int(exact_below)
        self._row_counts: dict[str, tuple[float, int]] = {}
        if keyword_engine not in KEYWORD_ENGINES:
            raise StoreError(f"keyword_engine must be one of {', '.join(KEYWORD_ENGINES)}, not {keyword_engine!r}")
        self.keyword_engine = keyword_engine
        cache = default_cache() if keyword_cache == "auto" else keyword_cache
        self._keywords = PostgresKeywordIndex(self, None if cache is None else Path(cache))
        self._allowed: dict[tuple, np.ndarray] = {}   # (filters, log seq) → sorted seqs that pass

        self._conn = connect(dsn, self._target)
        try:
            set_up(self, dim, register_vector)
        except psycopg.Error as exc:
            self._conn.close()
            self._conn = None
            raise StoreError(
                f"cannot set up the chaja schema {schema!r} at {self._target}: {str(exc).strip()}"
            ) from exc
        except BaseException:
            self._conn.close()
            self._conn = None
            raise

    # ---- the connection ------------------------------------------------------
    def _q(self, template: str):
        """A statement from a trusted template, with ``{s}`` the quoted schema."""
        return self._sql.SQL(template).format(s=self._s)

    @property
    def conn(self) -> "psycopg.Connection":
        if self._conn is None:
            raise StoreError("the PostgreSQL store is closed")
        return self._conn

    def _run(self, what: str, fn):
        """Call ``fn`` under the lock, turning database errors into StoreError."""
        return run(self, what, fn)

    def schema_version(self) -> int:
        return self._run("cannot read the schema version", lambda: current_version(self))

    def keyword_status(self) -> dict:
        """The keyword engine and, where the database keeps keyword postings, their state
        (:func:`chaja.stores.postgres.stored_postings.status`)."""
        return {"engine": self.keyword_engine,
                "stored": self._run("cannot read the stored keyword postings", lambda: stored_postings.status(self))}

    def replica_status(self) -> dict | None:
        """None on a primary; on a streaming replica, how far its replay has come
        (:func:`chaja.stores.postgres.replica.replica_status`)."""
        return replica_status(self)

    @property
    def dim(self) -> int | None:
        """The vector dimension, or ``None`` before the first chunk."""
        return self._dim

    def bulk_load(self, *, maintenance_work_mem: str = "1GB"):
        """Load many documents, then build the HNSW index once, with ``maintenance_work_mem``
        (a context manager: :func:`chaja.stores.postgres.hnsw.bulk_load`)."""
        return bulk_load(self, maintenance_work_mem=maintenance_work_mem)

    def build_vector_index(self, *, maintenance_work_mem: str = "1GB") -> None:
        """(Re)build the HNSW index if it is missing; a no-op when it exists."""
        build_vector_index(self, maintenance_work_mem=maintenance_work_mem)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                finally:
                    self._conn = None

    def __enter__(self) -> "PostgresStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- writing (documents, staging) ------------------------------------------
    def put_document(self, doc: Document, records: list[ChunkRecord]) -> None:
        put_document(self, doc, records)

    def delete_document(self, doc_id: str) -> bool:
        return delete_document(self, doc_id)

    def put_aligned_vectors(self, items: list[tuple[str, np.ndarray, np.ndarray | None]]) -> int:
        """Aligned vectors for stored chunks that have none (:mod:`chaja.aligned_fill`)."""
        return put_aligned_vectors(self, items)

    def chunks_without_aligned(self, after: str = "", limit: int = 256) -> list[Chunk]:
        return chunks_without_aligned(self, after, limit)

    def resume_staged(self, doc_id: str, key: str) -> int:
        """How many leading chunks of ``doc_id`` an earlier run staged under ``key``."""
        return resume_staged(self, doc_id, key)

    def stage_chunks(self, key: str, records: list[ChunkRecord]) -> None:
        """Commit one batch of a large document's chunks where no search sees them."""
        stage_chunks(self, key, records)

    def put_staged(self, doc: Document, key: str, n_chunks: int) -> None:
        """Replace the stored ``doc`` with its ``n_chunks`` staged chunks, in one transaction."""
        put_staged(self, doc, key, n_chunks)

    def staged(self) -> dict[str, int]:
        """doc_id → chunks staged by a run that has not published the document (yet)."""
        return staged(self)

    def discard_staged(self) -> int:
        """Delete every staged chunk (an interrupted large document); how many."""
        return discard_staged(self)

    # ---- keyword search (keyword_search, keywords) ----------------------------
    def keyword(self, terms: list[str], n: int, *, title_weight: float = 2.0,
                heading_weight: float = 1.5, field: str = "all",
                lang: str | None = None, where: Filters | None = None) -> list[Hit]:
        """Best ``n`` chunks by BM25 over any of ``terms``, best first, as the SQLite store
        ranks them (the formula: :func:`chaja.stores.postgres.keyword_search.keyword`)."""
        return keyword(self, terms, n, title_weight=title_weight, heading_weight=heading_weight,
                       field=field, lang=lang, where=where)

    def matched_terms(self, terms: list[str], ids: list[str]) -> dict[str, set[str]]:
        """Which of ``terms`` each listed chunk holds (``chunk_terms(ids)[c] & set(terms)``)."""
        return matched_terms(self, terms, ids)

    def _catch_up(self) -> None:
        self.refresh()

    def reading(self):
        """Several reads against one view of the store (:mod:`chaja.stores.one_view`; with the
        ``stored`` engine, one repeatable-read transaction: :func:`chaja.stores.postgres.stored_search.one_view`)."""
        return one_view(self) if self.keyword_engine == "stored" else super().reading()

    def refresh(self) -> bool:
        """Apply what the store's writers have committed to the keyword postings this
        reader keeps; True when there was something to apply."""
        return refresh(self)

    def compact(self, *, progress=None, graphs: bool = True) -> bool:
        """Prune the keyword log to what readers still need; True when entries were
        deleted (:func:`chaja.stores.postgres.keyword_search.compact`). ``graphs`` is the
        SQLite store's (a bulk load defers its vector graphs); PostgreSQL keeps its vector
        indexes itself, so it changes nothing here."""
        return compact(self, progress=progress)

    # ---- vector search (vectors) ----------------------------------------------
    def vector(self, query: np.ndarray, n: int, *, lang: str | None = None, field: str = "chunk",
               where: Filters | None = None) -> list[Hit]:
        """Best ``n`` chunks by cosine similarity, best first
        (:func:`chaja.stores.postgres.vectors.vector`)."""
        return vector(self, query, n, lang=lang, field=field, where=where)

    def vector_scores(self, query: np.ndarray, ids: list[str], *, field: str = "chunk") -> dict[str, float]:
        """Cosine of ``query`` with the ``field`` vector of each chunk in ``ids`` that has one."""
        return vector_scores(self, query, ids, field=field)

    def stored_vectors(self, ids: list[str], field: str = "chunk") -> dict[str, np.ndarray]:
        """The stored ``field`` vector of each listed chunk that has one."""
        return stored_vectors(self, ids, field)

    def vector_sample(self, n: int, *, field: str = "chunk") -> np.ndarray:
        """At most ``n`` stored ``field`` vectors, in :func:`chaja.stores.base.sample_order`."""
        return vector_sample(self, n, field=field)

    def _row_count(self, table: str) -> int:
        """Rows in ``table``, counted at most every ``ROW_COUNT_TTL`` seconds."""
        return row_count(self, table)

    def language_means(self) -> dict[str, tuple[int, np.ndarray]]:
        """language → (chunk count, mean chunk vector), computed in the database."""
        return language_means(self)

    # ---- reading (reads) -------------------------------------------------------
    def fingerprints(self, ids: list[str] | None = None) -> dict[str, str]:
        return fingerprints(self, ids)

    def chunks(self, ids: list[str]) -> dict[str, Chunk]:
        return chunks(self, ids)

    def chunk_sample(self, n: int) -> list[Chunk]:
        """At most ``n`` stored chunks, in :func:`chaja.stores.base.sample_order`."""
        return chunk_sample(self, n)

    def sample_fingerprint(self, n: int) -> str:
        """A digest of what :meth:`chunk_sample` of ``n`` reads
        (:func:`chaja.stores.postgres.reads.sample_fingerprint`)."""
        return sample_fingerprint(self, n)

    def doc_ids(self, ids: list[str]) -> dict[str, str]:
        return column_of(self, ids, "doc_id", "documents")

    def chunk_languages(self, ids: list[str]) -> dict[str, str]:
        return {cid: lang or "" for cid, lang in column_of(self, ids, "lang", "languages").items()}

    def chunk_terms(self, ids: list[str]) -> dict[str, set[str]]:
        return chunk_terms(self, ids)

    def get_meta(self, key: str) -> str | None:
        return get_meta(self, key)

    def set_meta(self, key: str, value: str) -> None:
        set_meta(self, key, value)

    def documents(self, *, after: str | None = None, limit: int = 100,
                  ids: list[str] | None = None) -> list[DocumentInfo]:
        return documents(self, after=after, limit=limit, ids=ids)

    def stats(self) -> StoreStats:
        return stats(self)

    # ---- check and repair (check) ----------------------------------------------
    def check(self, limit: int = 50) -> list[str]:
        """Faults that make this store less than whole, one line each (empty: whole)."""
        return check(self, limit)

    def repair(self, analyzer=None) -> list[str]:
        """Mend what :meth:`check` finds without encoding anything again; what was done,
        one line per act. ``analyzer`` is unused (the terms are stored)."""
        return repair(self)
