"""The embedded store: one SQLite file holding documents, chunks, their analysed
terms and the chunk vectors.

Keyword search is BM25 (Robertson/Spärck Jones, k1 = 1.2, b = 0.75, the scores of
SQLite FTS5's ``bm25()``) over three columns (title, heading path, body) whose weights
the caller sets. Each chunk's terms come already analysed: joined by spaces and split as
FTS5's ``ascii`` tokenizer splits them (on those spaces only, every non-ASCII character
kept), so a stored term matches exactly the same query term. They are kept as a row
(``chunk_terms``) unless the store's own analyser made them, which derives them again
from the chunk (:mod:`chaja.stores.derived_terms`). No query text reaches SQL, so nothing
a user types is syntax.

Vector search scores by dot product (cosine, as vectors are L2-normalised) over one
matrix a field: exact below :data:`~chaja.stores.sqlite_ann.ANN_THRESHOLD` vectors, over an
HNSW graph's candidates above it. A field's file keeps its vectors as int8 codes with an
offset and a scale per dimension (:mod:`chaja.stores.quantized`) unless the store is set to float32.
Heading vectors (one per chunk that has a heading) sit beside the chunk vector
and are searched the same way (``field="heading"``).

Aligned vectors (``field="aligned"`` for the passage, ``"aligned_heading"`` for
the section name) come from a second, cross-lingually aligned encoder and have a
dimension of their own (meta ``aligned_dim``).

Keyword top-k is served by :mod:`chaja.stores.sqlite_keywords` (postings in a file
beside the store, ``<store>-keywords``, kept in step by a change log, built from each
chunk's terms), without scoring every matching row.

An older file is brought up to date when opened, and searches as before
(:mod:`chaja.stores.sqlite_schema` keeps the schema's history).
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np

from chaja.stores import sqlite_ann, sqlite_errors, sqlite_keywords, sqlite_spool
from chaja.stores.base import StoreError
from chaja.stores.one_view import OneViewReads
from chaja.stores.sqlite_compaction import Compaction
from chaja.stores.sqlite_connection import SqliteConnection
from chaja.stores.sqlite_matrices import CachedMatrices
from chaja.stores.sqlite_reads import ChunkReads
from chaja.stores.sqlite_schema import SCHEMA_VERSION, VECTOR_FIELDS
from chaja.stores.sqlite_search import CandidateSearch
from chaja.stores.sqlite_writes import DocumentWrites

__all__ = ["KEYWORD_ENGINES", "SCHEMA_VERSION", "VECTOR_FIELDS", "SqliteStore"]

#: keyword engines (``keyword_engine``): the postings alone, since schema 7 (an FTS5 engine read
#: an inverted index the store no longer keeps)
KEYWORD_ENGINES = ("postings",)


class SqliteStore(SqliteConnection, DocumentWrites, CandidateSearch, ChunkReads, Compaction, CachedMatrices,
                  OneViewReads):
    """One-file store. Safe for one writer and many readers (WAL); one object per thread.

    A write waits up to ``busy_timeout_s`` (default :data:`~chaja.stores.sqlite_errors.BUSY_TIMEOUT_S`,
    30 s, or ``$CHAJA_BUSY_TIMEOUT_S``) for another process's write lock, then raises
    :class:`~chaja.stores.base.StoreBusy`; a full disk, a read-only file and the like raise
    :class:`StoreError` with one sentence (:mod:`chaja.stores.sqlite_errors`), the write rolled
    back. A store that cannot be written (a read-only file or file system: ``read_only`` says
    why) opens read-only, for searching.

    Each concern lives in a module of its own: the connection and its transactions
    (:mod:`~chaja.stores.sqlite_connection`), writes (:mod:`~chaja.stores.sqlite_writes`),
    the candidate lists (:mod:`~chaja.stores.sqlite_search`), reads by id
    (:mod:`~chaja.stores.sqlite_reads`), compaction (:mod:`~chaja.stores.sqlite_compaction`)
    and the matrices and graphs held in memory (:mod:`~chaja.stores.sqlite_matrices`)."""

    def __init__(self, path: str | os.PathLike, *, keyword_engine: str = "postings",
                 ann_threshold: int | None = None, busy_timeout_s: float | None = None):
        if keyword_engine not in KEYWORD_ENGINES:
            raise StoreError(f"keyword_engine must be one of {', '.join(KEYWORD_ENGINES)}, not {keyword_engine!r}")
        self.path = Path(path)
        self._db = None
        self.busy_timeout_s = (sqlite_errors.default_busy_timeout() if busy_timeout_s is None
                               else max(0.0, float(busy_timeout_s)))
        store_id = self._open()
        self.keyword_engine = keyword_engine
        self._keywords = sqlite_keywords.SqliteKeywordIndex(self._db, Path(f"{self.path}-keywords"), store_id,
                                                            self.text_packing)
        self.ann_threshold = sqlite_ann.ANN_THRESHOLD if ann_threshold is None else ann_threshold
        self._lock = threading.Lock()
        self._matrix: dict[str, tuple[np.ndarray, list[str], np.ndarray]] = {}
        self._matrix_rowids: dict[str, np.ndarray] = {}
        self._matrix_seq = -1
        self._matrix_base: int | None = None   # the keyword file's log entry when the matrices were read
        self._allowed: dict[tuple, np.ndarray] = {}   # (filters, log seq) → sorted rowids that pass
        self._base_ids: dict[str, tuple] = {}   # field → (a file's mapped ids, those ids decoded)
        self._spools: dict[str, tuple[str, sqlite_spool.Spool]] = {}   # field → (its record, its spool)
        self._vector_files_done: list[str] = []   # records of the vector files the running compaction wrote
        self._vector_bytes_moved = 0             # ... and the bytes of the blobs it emptied
        self._columns_to_empty: list[tuple[str, int | None]] = []   # ... (column, its previous file's entry)
        self._rows: dict = {}   # field → chunk id → row (chaja.stores.id_rows.IdRows)
        self._graphs: dict[str, tuple[str | None, sqlite_ann.Graph | None]] = {}   # field → (its meta, graph)
        self._graphs_seq: int | None = -1
        self._chunk_digests: tuple[int, object, np.ndarray] | None = None   # (log entry, ids, digests): sqlite_reads
        self.write_transactions = 0      # this object's write transactions, ended (sqlite_connection._transaction)
        self._kept_counts: tuple | None = None   # the counts stats() read, and when (sqlite_reads)

    def check(self) -> list[str]:
        """Faults that make this store less than whole (:mod:`chaja.stores.sqlite_check`);
        empty when it is whole. One read transaction, so a writer beside it does not
        show as a fault."""
        from chaja.stores import sqlite_check

        with self._lock:
            self._db.execute("BEGIN")
            try:
                return sqlite_check.faults(self._db, SCHEMA_VERSION)
            finally:
                self._db.execute("COMMIT")

    def repair(self, analyzer) -> list[str]:
        """Mend what :meth:`check` finds that can be derived without encoding again
        (:func:`chaja.stores.sqlite_check.repair`), then rebuild the keyword file from
        the keyword rows; returns what was done."""
        from chaja.stores import sqlite_check

        with self._writing() as cur:
            done = sqlite_check.repair(cur, analyzer, self._delete)
        if done:
            self._keywords.path.unlink(missing_ok=True)       # rebuilt from the keyword rows themselves
            self._keywords.bm25 = None
            self._keywords.feed.close()
            self._matrix, self._rows, self._matrix_rowids = {}, {}, {}
            self._matrix_seq = -1
            self.compact(force=True)
        return done

    def close(self) -> None:
        keywords = getattr(self, "_keywords", None)     # (None: the open failed)
        if keywords is not None:
            keywords.feed.close()       # its helper ends with it
        super().close()

    def __enter__(self) -> "SqliteStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
