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

A query term never becomes tsquery syntax: the terms travel as one ``text[]``
parameter and each one goes through ``phraseto_tsquery('simple', term)``, which
reads its input as plain text (the same parser as the documents, so a term that
the parser splits matches the same split in a document); the per-term queries are
OR-ed together by a small aggregate over ``tsquery_or``.

Vectors live in a pgvector ``vector(dim)`` column with an HNSW index
(``vector_cosine_ops``); scores are cosine similarity, ``1 - (a <=> b)``. The
dimension is fixed by the first chunk written (or by ``dim=`` on a new store).

The schema is created and migrated by chaja: ``schema_version`` records each
applied step of :data:`MIGRATIONS`, each step runs in its own transaction under an
advisory lock, so two processes opening a new database at once do not race.

One store object holds one connection and serialises its own calls with a lock;
give each thread or process its own object for parallel reads. Readers never
block each other or the writer (PostgreSQL MVCC), and every ``put_document`` is
one transaction, so readers see either the old or the new version of a document.
"""
from __future__ import annotations

import contextlib
import math
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chaja.documents import Chunk, ChunkRecord, Document, DocumentInfo, Hit, Location, StoreStats
from chaja.filters import Filters
from chaja.stores import postgres_keywords
from chaja.stores.base import StoreError, flat_vector, staged_prefix
from chaja.stores.bm25_segments import SegmentedBM25
from chaja.stores.one_view import OneViewReads

if TYPE_CHECKING:  # pragma: no cover
    import psycopg

#: Oldest pgvector with HNSW indexes.
MIN_PGVECTOR = (0, 5, 0)
#: BM25's parameters, as FTS5's ``bm25()`` in the SQLite store.
BM25_K1, BM25_B = 1.2, 0.75
#: ``postings``: the reader keeps the postings (chaja.stores.postgres_keywords) and
#: scores only the query terms' lists; ``sql``: every matching row is ranked in SQL.
KEYWORD_ENGINES = ("postings", "sql")

#: HNSW build parameters (pgvector's defaults) and the default floor for ``hnsw.ef_search``.
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
HNSW_EF_SEARCH_MIN = 40
#: Each vector query searches the graph with ``hnsw.ef_search`` ≥ this many times n.
#: Query vectors with the language direction projected out sit off the stored
#: vectors' distribution, and the graph finds their neighbours less well: on the
#: React docs (3,896 chunks, n = 60) ef_search = n returned 0.90 of the exact top 60
#: and cost 0.053 nDCG@10; 4n returns 0.995 of it, 8n 0.9997, for 1-3 ms more per query.
HNSW_EF_SEARCH_FACTOR = 8
#: Tables with at most this many rows are searched exactly (a sequential scan),
#: where an approximate index buys little time and costs recall: on the React docs
#: (3,896 chunks) HNSW at ef_search = 8n still left vector-only nDCG@10 0.003
#: below the exact search.
EXACT_BELOW = 20_000
#: Seconds a table's row count is reused before it is counted again.
ROW_COUNT_TTL = 30.0
#: Vectors of at most this many dimensions (6 KB) stay inside their row; longer
#: ones would not fit a page beside the rest of the row and may move to TOAST.
INLINE_MAX_DIM = 1536
#: pgvector caps ``hnsw.ef_search`` at 1000 and indexes at most 2000 dimensions.
HNSW_EF_SEARCH_MAX = 1000
HNSW_MAX_DIM = 2000

_TEXT_CONFIG = "pg_catalog.simple"

# Each migration: (version, description, SQL statements). ``{s}`` is the quoted
# schema name. A step, once released, is never edited: later changes are new steps.
MIGRATIONS: list[tuple[int, str, list[str]]] = [
    (1, "documents, chunks, full-text and vector columns", [
        """CREATE TABLE {s}.meta (
            key text PRIMARY KEY,
            value text NOT NULL
        )""",
        """CREATE TABLE {s}.documents (
            id text PRIMARY KEY,
            fingerprint text NOT NULL,
            title text NOT NULL,
            lang text NOT NULL,
            source text NOT NULL,
            doc_type text NOT NULL,
            date text,
            path text NOT NULL,
            n_chunks integer NOT NULL,
            indexed_at timestamptz NOT NULL DEFAULT now()
        )""",
        """CREATE TABLE {s}.chunks (
            seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
            id text PRIMARY KEY,
            doc_id text NOT NULL REFERENCES {s}.documents (id) ON DELETE CASCADE,
            ordinal integer NOT NULL,
            title text NOT NULL,
            heading_path text[] NOT NULL,
            text text NOT NULL,
            lang text NOT NULL,
            source text NOT NULL,
            doc_type text NOT NULL,
            date text,
            title_terms text NOT NULL,
            heading_terms text NOT NULL,
            body_terms text NOT NULL,
            embedding vector NOT NULL
        )""",
        "CREATE INDEX chunks_doc_id ON {s}.chunks (doc_id)",
        "CREATE INDEX chunks_lang ON {s}.chunks (lang)",
        # The full-text side in its own narrow table: a chunks row with text, terms
        # and a 384-dimension vector is wide enough that PostgreSQL moves the
        # tsvector out of line (TOAST), and fetching it back for every matching
        # row made keyword ranking about twice as slow.
        """CREATE TABLE {s}.chunk_fts (
            chunk_id text PRIMARY KEY REFERENCES {s}.chunks (id) ON DELETE CASCADE,
            seq bigint NOT NULL,
            lang text NOT NULL,
            tsv tsvector NOT NULL,
            title_tsv tsvector NOT NULL
        )""",
        "CREATE INDEX chunk_fts_tsv ON {s}.chunk_fts USING gin (tsv)",
        "CREATE INDEX chunk_fts_title_tsv ON {s}.chunk_fts USING gin (title_tsv)",
        # OR of any number of tsqueries, so a text[] of terms becomes one query.
        """CREATE AGGREGATE {s}.tsquery_or_all (tsquery) (
            SFUNC = pg_catalog.tsquery_or, STYPE = tsquery
        )""",
    ]),
    (2, "heading vectors", [
        # One row per chunk that has a heading: the vector of its section name.
        # The chunks of one section share that vector; only the section's first
        # chunk (``lead``) enters the HNSW index, because a graph full of identical
        # points loses recall (measured: nDCG@10 -0.054 on the React docs). A
        # search finds sections by their lead rows, then returns all their chunks.
        # The column gets its dimension (and its index) with the chunk vectors'.
        """CREATE TABLE {s}.chunk_headings (
            chunk_id text PRIMARY KEY REFERENCES {s}.chunks (id) ON DELETE CASCADE,
            seq bigint NOT NULL,
            doc_id text NOT NULL,
            lang text NOT NULL,
            section text NOT NULL,
            lead boolean NOT NULL,
            embedding vector NOT NULL
        )""",
        "CREATE INDEX chunk_headings_section ON {s}.chunk_headings (doc_id, section)",
    ]),
    (3, "chunk length in tokens, for BM25", [
        # tokens in a tsvector = positions summed over its lexemes
        """CREATE FUNCTION {s}.tsvector_tokens(tsvector) RETURNS integer
           LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS
           $$ SELECT coalesce(sum(coalesce(array_length(u.positions, 1), 1)), 0)::integer FROM unnest($1) AS u $$""",
        "ALTER TABLE {s}.chunk_fts ADD COLUMN n_tokens integer NOT NULL DEFAULT 0",
        "UPDATE {s}.chunk_fts SET n_tokens = {s}.tsvector_tokens(tsv)",
    ]),
    (4, "vectors kept in the row", [
        # A chunks row (text, terms, a 384-d vector: about 3 KB) is over PostgreSQL's
        # 2 KB TOAST target, and the vector, the largest value that may move, went
        # out of line: every exact distance then fetched it from the TOAST table.
        # Stored inline, an exact top-60 over the React docs' 3,896 chunks takes
        # 2.0 ms instead of 7.3. Rows written before this step keep their layout
        # until they are written again. New stores get this when their dimension
        # is fixed (see _keep_inline).
        """DO $$ BEGIN
             IF (SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
                 JOIN pg_namespace n ON n.oid = c.relnamespace
                 WHERE n.nspname = current_schema() AND c.relname = 'chunks'
                 AND a.attname = 'embedding') BETWEEN 1 AND 1536 THEN
               ALTER TABLE {s}.chunks ALTER COLUMN embedding SET STORAGE PLAIN;
               ALTER TABLE {s}.chunk_headings ALTER COLUMN embedding SET STORAGE PLAIN;
             END IF;
           END $$""",
    ]),
    (5, "BM25 statistics kept on write", [
        # N and the total length of all chunks, for idf and avgdl: adjusted in each
        # document's transaction, so a query no longer scans chunk_fts for them
        # (at 100k chunks that scan was 67 of a keyword query's 82 ms).
        """CREATE TABLE {s}.fts_stats (
            one boolean PRIMARY KEY DEFAULT true CHECK (one),
            chunks bigint NOT NULL,
            tokens bigint NOT NULL
        )""",
        "INSERT INTO {s}.fts_stats (chunks, tokens) SELECT count(*), coalesce(sum(n_tokens), 0) FROM {s}.chunk_fts",
    ]),
    (6, "aligned vectors", [
        # The aligned encoder's vectors of each chunk's passage and section name
        # (chaja.encoders.aligned), of their own dimension; searched exactly.
        """CREATE TABLE {s}.chunk_aligned (
            chunk_id text PRIMARY KEY REFERENCES {s}.chunks (id) ON DELETE CASCADE,
            seq bigint NOT NULL,
            lang text NOT NULL,
            embedding vector NOT NULL,
            name_embedding vector
        )""",
        # two 512-d vectors (4 KB) fit a page: kept in the row, as migration 4 does
        "ALTER TABLE {s}.chunk_aligned ALTER COLUMN embedding SET STORAGE PLAIN,"
        " ALTER COLUMN name_embedding SET STORAGE PLAIN",
    ]),
    (7, "large documents staged a batch at a time", [
        # The finished chunks of a document longer than one ingest batch, committed a
        # batch at a time where no search reads them, then moved into the tables above
        # in one transaction (put_staged); see chaja.stores.sqlite_staging.
        """CREATE TABLE {s}.staged_chunks (
            doc_id text NOT NULL,
            stage_key text NOT NULL,
            ordinal integer NOT NULL,
            id text NOT NULL,
            title text NOT NULL,
            heading_path text[] NOT NULL,
            text text NOT NULL,
            lang text NOT NULL,
            source text NOT NULL,
            doc_type text NOT NULL,
            date text,
            title_terms text NOT NULL,
            heading_terms text NOT NULL,
            body_terms text NOT NULL,
            embedding vector NOT NULL,
            section text,
            heading_embedding vector,
            aligned_embedding vector,
            aligned_name_embedding vector,
            PRIMARY KEY (doc_id, ordinal)
        )""",
    ]),
    (8, "keyword change log, for postings held by readers", [
        # One row per chunk added or removed, written in the chunk's own transaction
        # after the fts_stats row lock that orders writers: readers that keep postings
        # (chaja.stores.postgres_keywords) apply the entries after their own.
        """CREATE TABLE {s}.keyword_log (
            seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            row bigint NOT NULL,
            added boolean NOT NULL
        )""",
        # names the readers' cache files; a new schema (or a new database) gets a new one
        "INSERT INTO {s}.meta (key, value) VALUES ('store_id', md5(random()::text || clock_timestamp()::text))"
        " ON CONFLICT (key) DO NOTHING",
    ]),
    (9, "each chunk's location in its file", [
        # chaja.documents.Location.encode(): 'page:3:4', 'row:2:41:Prices'; NULL where none
        "ALTER TABLE {s}.chunks ADD COLUMN location text",
        "ALTER TABLE {s}.staged_chunks ADD COLUMN location text",
    ]),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]

#: The table behind each vector ``field``, and which of its rows its HNSW index
#: holds (None: all; heading vectors: one lead row per section).
_VECTOR_TABLES = {"chunk": ("chunks", None), "heading": ("chunk_headings", "lead")}
#: aligned fields: (table, id column, vector column); always searched exactly
_ALIGNED = {"aligned": ("chunk_aligned", "embedding"), "aligned_heading": ("chunk_aligned", "name_embedding")}
#: the HNSW index of each aligned column (built once the columns have their dimension)
_ALIGNED_INDEXES = {"embedding": "chunk_aligned_embedding_hnsw", "name_embedding": "chunk_aligned_name_hnsw"}
#: every field: (table, chunk id column, vector column), for scoring given chunks and sampling
_FIELD_COLUMNS = {"chunk": ("chunks", "id", "embedding"), "heading": ("chunk_headings", "chunk_id", "embedding"),
                  "aligned": ("chunk_aligned", "chunk_id", "embedding"),
                  "aligned_heading": ("chunk_aligned", "chunk_id", "name_embedding")}

# Title terms weigh A, heading terms B, body terms D (ts_rank_cd's weights array
# is ordered {D, C, B, A}). to_tsvector keeps positions, which ts_rank_cd needs.
_FTS_INSERT = """
INSERT INTO {s}.chunk_fts (chunk_id, seq, lang, tsv, title_tsv, n_tokens)
SELECT chunk_id, seq, lang, tsv, title_tsv, {s}.tsvector_tokens(tsv) FROM (
  SELECT id AS chunk_id, seq, lang,
         setweight(to_tsvector('pg_catalog.simple'::regconfig, title_terms), 'A')
         || setweight(to_tsvector('pg_catalog.simple'::regconfig, heading_terms), 'B')
         || setweight(to_tsvector('pg_catalog.simple'::regconfig, body_terms), 'D') AS tsv,
         setweight(to_tsvector('pg_catalog.simple'::regconfig, title_terms), 'A') AS title_tsv
  FROM {s}.chunks WHERE doc_id = %s) AS c
"""


_EXTRA_HINT = "the PostgreSQL store needs the postgres extra: pip install 'chaja[postgres]'"


def _psycopg():
    try:
        import psycopg
    except ImportError as exc:
        raise ImportError(_EXTRA_HINT) from exc
    return psycopg


def _register_vector():
    try:
        from pgvector.psycopg import register_vector
    except ImportError as exc:
        raise ImportError(_EXTRA_HINT) from exc
    return register_vector


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for p in text.split("."):
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _clean(value: str | None) -> str | None:
    """PostgreSQL text cannot hold U+0000; the store drops that character."""
    if value is None:
        return None
    return value.replace("\x00", "") if "\x00" in value else value


def _section(chunk) -> str:
    """The key that groups a document's chunks into sections in ``chunk_headings``."""
    return _clean(chunk.heading_passage() or chunk.id)


def _query_terms(terms: list[str]) -> list[str]:
    """Distinct, storable terms: no NULs, no blanks, no unencodable strings."""
    out: dict[str, None] = {}
    for t in terms:
        if not isinstance(t, str):
            continue
        t = _clean(t)
        if not t or not t.strip():
            continue
        try:
            t.encode("utf-8")
        except UnicodeEncodeError:
            continue
        out[t] = None
    return list(out)


def _array(vec) -> np.ndarray:
    """A pgvector value (or a plain sequence) as a float32 array."""
    return np.asarray(vec.to_numpy() if hasattr(vec, "to_numpy") else vec, dtype=np.float32)


def _describe(dsn: str) -> str:
    """The connection target without secrets, for error messages."""
    try:
        from psycopg.conninfo import conninfo_to_dict

        info = conninfo_to_dict(dsn)
    except Exception:
        return "the given connection string"
    host = info.get("host") or "localhost"
    port = info.get("port") or "5432"
    db = info.get("dbname") or info.get("user") or ""
    return f"{host}:{port}/{db}"


class PostgresStore(OneViewReads):
    """A chaja store in PostgreSQL (with pgvector ≥ 0.5).

    ``dsn`` is a libpq connection string or URL. ``dim`` fixes the vector dimension
    of a new store (an existing store must match it). ``schema`` holds all of
    chaja's tables, so several stores can share one database. ``ef_search`` is the
    floor for pgvector's ``hnsw.ef_search``: each vector query uses
    ``max(ef_search, 8 n)``, at most 1000 (higher: better recall, slower queries).
    Tables of at most ``exact_below`` rows are searched exactly instead.

    Not for sharing across threads at full speed: calls on one object are
    serialised by a lock. Open one object per thread for parallel reads.
    """

    def __init__(self, dsn: str, *, dim: int | None = None, schema: str = "chaja",
                 ef_search: int = HNSW_EF_SEARCH_MIN, exact_below: int = EXACT_BELOW,
                 keyword_engine: str = "postings", keyword_cache: str | os.PathLike | None = "auto"):
        psycopg = _psycopg()
        register_vector = _register_vector()
        from psycopg import sql

        if not schema or len(schema.encode("utf-8")) > 63 or "\x00" in schema:
            raise StoreError(f"invalid schema name {schema!r}")
        self._sql = sql
        self.schema = schema
        self._s = sql.Identifier(schema)
        self._lock = threading.RLock()
        self._target = _describe(dsn)
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
        cache = postgres_keywords.default_cache() if keyword_cache == "auto" else keyword_cache
        self._keywords = postgres_keywords.PostgresKeywordIndex(self, None if cache is None else Path(cache))
        self._allowed: dict[tuple, np.ndarray] = {}   # (filters, log seq) → sorted seqs that pass

        kwargs: dict[str, Any] = {"autocommit": True, "application_name": "chaja"}
        try:
            from psycopg.conninfo import conninfo_to_dict

            if "connect_timeout" not in conninfo_to_dict(dsn):
                kwargs["connect_timeout"] = 10
        except psycopg.ProgrammingError as exc:
            raise StoreError(f"invalid PostgreSQL connection string: {exc}") from None
        try:
            self._conn = psycopg.connect(dsn, **kwargs)
        except psycopg.Error as exc:
            raise StoreError(
                f"cannot connect to PostgreSQL at {self._target}: {str(exc).strip()}"
            ) from None
        try:
            self._conn.execute("SET client_min_messages = warning")
            self.replica = bool(self._conn.execute("SELECT pg_is_in_recovery()").fetchone()[0])
            ext_schema = self._ensure_pgvector()
            self._conn.execute(
                "SELECT set_config('search_path', %s, false)",
                (", ".join(sql.Identifier(n).as_string(self._conn) for n in dict.fromkeys((schema, ext_schema))),),
            )
            self._migrate()
            register_vector(self._conn)
            self._dim = self._stored_dim()
            if self._dim is not None and self._stored_dim("chunk_headings") is None:
                with self._conn.transaction():   # a store from before heading vectors
                    self._advisory_lock()
                    self._type_heading_column(self._dim)
            self._aligned_dim = self._stored_dim("chunk_aligned")
            if self._aligned_dim is None and not self.replica:
                found = self._conn.execute(self._q(
                    "SELECT vector_dims(embedding) FROM {s}.chunk_aligned LIMIT 1")).fetchone()
                if found is not None:            # aligned vectors written before they were typed
                    with self._conn.transaction():
                        self._type_aligned_columns(int(found[0]))
            if dim is not None:
                if dim <= 0:
                    raise StoreError(f"vector dimension must be positive, got {dim}")
                if self._dim is None:
                    with self._conn.transaction():
                        self._fix_dim(int(dim))
                elif self._dim != dim:
                    raise StoreError(
                        f"dimension mismatch: the store in schema {schema!r} holds "
                        f"{self._dim}-dimensional vectors, {dim} was asked for"
                    )
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

    # ---- setup -----------------------------------------------------------
    def _q(self, template: str):
        """A statement from a trusted template, with ``{s}`` the quoted schema."""
        return self._sql.SQL(template).format(s=self._s)

    @staticmethod
    def _filter_sql(where: Filters | None, params: dict, id_column: str | None = None) -> str:
        """`` AND …`` for a search filter: over the chunks table's own columns, or with
        ``id_column`` as a test that the row's chunk id is one of the passing chunks."""
        if not where:
            return ""

        def param(value: object) -> str:
            name = f"filter{len([k for k in params if k.startswith('filter')])}"
            params[name] = value
            return f"%({name})s"
        conds = " AND ".join(where.sql(lambda name: name, param, lambda col, ph: f"strpos({col}, {ph}) = 1"))
        if id_column is None:
            return " AND " + conds
        return f" AND {id_column} IN (SELECT id FROM {{s}}.chunks WHERE {conds})"

    def _advisory_lock(self) -> None:
        self._conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext('chaja.schema:' || %s))", (self.schema,)
        )

    def _ensure_pgvector(self) -> str:
        """Create the vector extension if needed; return the schema that holds it."""
        psycopg = _psycopg()
        conn = self._conn
        row = conn.execute(
            "SELECT e.extversion, n.nspname FROM pg_extension e"
            " JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
        ).fetchone()
        if row is None:
            available = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            if self.replica:
                raise StoreError(self._not_replayed("the vector extension"))
            if available is None:
                raise StoreError(
                    f"pgvector is missing: the PostgreSQL server at {self._target} has no "
                    "'vector' extension installed; install pgvector (0.5 or newer) on the server"
                )
            try:
                with conn.transaction():
                    self._advisory_lock()
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.errors.InsufficientPrivilege:
                raise StoreError(
                    "pgvector is missing from this database and this role may not create it: "
                    "ask an administrator to run CREATE EXTENSION vector"
                ) from None
            row = conn.execute(
                "SELECT e.extversion, n.nspname FROM pg_extension e"
                " JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
            ).fetchone()
        version, ext_schema = row
        vt = _version_tuple(version)
        if vt < MIN_PGVECTOR:
            raise StoreError(
                f"pgvector {version} is too old: chaja needs 0.5 or newer (HNSW indexes); "
                "run ALTER EXTENSION vector UPDATE after upgrading pgvector"
            )
        # Filtered HNSW scans that keep going until enough rows pass (pgvector 0.8+).
        self._iterative_scan = vt >= (0, 8, 0)
        self.pgvector_version = version
        return ext_schema

    def _current_version(self) -> int:
        row = self._conn.execute(
            self._q("SELECT coalesce(max(version), 0) FROM {s}.schema_version")
        ).fetchone()
        return int(row[0])

    def _migrate(self) -> None:
        conn = self._conn
        exists = conn.execute(
            "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relname = 'schema_version'", (self.schema,)
        ).fetchone()
        if exists is None and self.replica:
            raise StoreError(self._not_replayed(f"the chaja schema {self.schema!r}"))
        if exists is None:
            with conn.transaction():
                self._advisory_lock()
                conn.execute(self._q("CREATE SCHEMA IF NOT EXISTS {s}"))
                conn.execute(self._q(
                    "CREATE TABLE IF NOT EXISTS {s}.schema_version ("
                    " version integer PRIMARY KEY,"
                    " description text NOT NULL,"
                    " applied_at timestamptz NOT NULL DEFAULT now())"
                ))
        current = self._current_version()
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"the schema {self.schema!r} is at version {current}, written by a newer "
                f"chaja (this one knows up to {SCHEMA_VERSION}); upgrade chaja"
            )
        if self.replica and current < SCHEMA_VERSION:
            raise StoreError(self._not_replayed(f"version {SCHEMA_VERSION} of the chaja schema {self.schema!r} "
                                                f"(it has version {current})"))
        for version, description, steps in MIGRATIONS:
            if version <= current:
                continue
            with conn.transaction():
                self._advisory_lock()
                if self._current_version() >= version:  # another process got here first
                    continue
                for step in steps:
                    conn.execute(self._q(step))
                conn.execute(
                    self._q("INSERT INTO {s}.schema_version (version, description) VALUES (%s, %s)"),
                    (version, description),
                )

    def _not_replayed(self, what: str) -> str:
        return (f"{self._target} is a read-only replica (hot standby) and holds no {what} yet: "
                "open the store on the primary first (chaja index creates it there), then wait for "
                "the replica to replay it")

    def replica_status(self) -> dict | None:
        """None on a primary. On a streaming replica: ``behind_bytes``, WAL it has received
        and not yet replayed (0: what it shows is all it has been sent); ``last_replay_s``,
        seconds since the primary committed the last transaction it replayed (it grows
        while the primary is idle, so read it beside ``behind_bytes``); ``paused``,
        whether replay is paused (``pg_wal_replay_pause()``)."""
        def read() -> dict | None:
            if not self.conn.execute("SELECT pg_is_in_recovery()").fetchone()[0]:
                return None
            behind, since, paused = self.conn.execute(
                "SELECT coalesce(pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()), 0),"
                " extract(epoch FROM now() - pg_last_xact_replay_timestamp()), pg_is_wal_replay_paused()"
            ).fetchone()
            return {"behind_bytes": max(int(behind), 0),
                    "last_replay_s": None if since is None else round(float(since), 3), "paused": bool(paused)}

        return self._run("cannot read the replica's state", read)

    def _stored_dim(self, table: str = "chunks", column: str = "embedding") -> int | None:
        row = self._conn.execute(
            "SELECT a.atttypmod FROM pg_attribute a"
            " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = %s AND c.relname = %s AND a.attname = %s",
            (self.schema, table, column),
        ).fetchone()
        if row is None or row[0] is None or row[0] <= 0:
            return None
        return int(row[0])

    def _fix_dim(self, dim: int) -> None:
        """Give the vector column its dimension and build the HNSW index (in a transaction)."""
        self._advisory_lock()
        stored = self._stored_dim()
        if stored is None:
            self._conn.execute(self._q(
                f"ALTER TABLE {{s}}.chunks ALTER COLUMN embedding TYPE vector({int(dim)})"
            ))
            self._keep_inline("chunks", dim)
            stored = dim
            self._dim = dim
            self._type_heading_column(dim)
        if stored != dim:
            raise StoreError(
                f"dimension mismatch: the store holds {stored}-dimensional vectors, got {dim}"
            )
        self._dim = stored

    def _keep_inline(self, table: str, dim: int) -> None:
        """Store ``table``'s vectors in the row (see migration 4), when they fit."""
        if dim <= INLINE_MAX_DIM:
            self._conn.execute(self._q(f"ALTER TABLE {{s}}.{table} ALTER COLUMN embedding SET STORAGE PLAIN"))

    def _type_heading_column(self, dim: int) -> None:
        self._conn.execute(self._q(
            f"ALTER TABLE {{s}}.chunk_headings ALTER COLUMN embedding TYPE vector({int(dim)})"
        ))
        self._keep_inline("chunk_headings", dim)
        if not self._bulk:
            self._create_vector_index()

    def _create_vector_index(self) -> None:
        if self._dim is not None and self._dim <= HNSW_MAX_DIM:
            for table, indexed in _VECTOR_TABLES.values():
                self._conn.execute(self._q(
                    f"CREATE INDEX IF NOT EXISTS {table}_embedding_hnsw ON {{s}}.{table}"
                    " USING hnsw (embedding vector_cosine_ops)"
                    f" WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
                    + (f" WHERE {indexed}" if indexed else "")
                ))
        aligned = self._stored_dim("chunk_aligned")
        if aligned is not None and aligned <= HNSW_MAX_DIM:
            for column, index in _ALIGNED_INDEXES.items():
                self._conn.execute(self._q(
                    f"CREATE INDEX IF NOT EXISTS {index} ON {{s}}.chunk_aligned"
                    f" USING hnsw ({column} vector_cosine_ops)"
                    f" WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
                ))

    def _type_aligned_columns(self, dim: int) -> None:
        """Give the aligned vector columns their dimension, as the chunk vectors get theirs
        with the first write, so that HNSW can index them (in a transaction)."""
        self._advisory_lock()
        stored = self._stored_dim("chunk_aligned")
        if stored is None:
            self._conn.execute(self._q(
                f"ALTER TABLE {{s}}.chunk_aligned ALTER COLUMN embedding TYPE vector({int(dim)}),"
                f" ALTER COLUMN name_embedding TYPE vector({int(dim)})"))
            self._conn.execute(self._q("ALTER TABLE {s}.chunk_aligned ALTER COLUMN embedding SET STORAGE PLAIN,"
                                       " ALTER COLUMN name_embedding SET STORAGE PLAIN"))
            if not self._bulk:
                self._create_vector_index()
        elif stored != dim:
            raise StoreError(f"dimension mismatch: the store's aligned vectors have {stored} dimensions, got {dim}")
        self._aligned_dim = dim

    @contextlib.contextmanager
    def bulk_load(self, *, maintenance_work_mem: str = "1GB"):
        """Load many documents, then build the HNSW index once.

        Each row added to an HNSW index costs a graph search and rewrites the pages
        of its neighbours; building the index once over all rows is many times
        faster. Inside this block the index is dropped, so vector search (for this
        and every other connection) is an exact scan: correct, but slower. On leaving
        the block the index is rebuilt with ``maintenance_work_mem`` (the graph
        should fit in it: roughly rows x (4 x dim + 200) bytes).
        """
        def drop() -> None:
            with self.conn.transaction():
                self._advisory_lock()
                self.conn.execute(self._q("DROP INDEX IF EXISTS {s}.chunks_embedding_hnsw"))
                self.conn.execute(self._q("DROP INDEX IF EXISTS {s}.chunk_headings_embedding_hnsw"))
                for index in _ALIGNED_INDEXES.values():
                    self.conn.execute(self._q(f"DROP INDEX IF EXISTS {{s}}.{index}"))
            self._bulk = True

        self._run("cannot start a bulk load", drop)
        try:
            yield self
        finally:
            self._bulk = False
            self.build_vector_index(maintenance_work_mem=maintenance_work_mem)

    def build_vector_index(self, *, maintenance_work_mem: str = "1GB") -> None:
        """(Re)build the HNSW index if it is missing; a no-op when it exists."""
        def build() -> None:
            with self.conn.transaction():
                self._advisory_lock()
                self.conn.execute("SELECT set_config('maintenance_work_mem', %s, true)",
                                  (maintenance_work_mem,))
                self._create_vector_index()

        self._run("cannot build the vector index", build)

    @property
    def conn(self) -> "psycopg.Connection":
        if self._conn is None:
            raise StoreError("the PostgreSQL store is closed")
        return self._conn

    def _run(self, what: str, fn):
        """Call ``fn`` under the lock, turning database errors into StoreError."""
        psycopg = _psycopg()
        with self._lock:
            self.conn  # raises when closed
            try:
                return fn()
            except StoreError:
                raise
            except psycopg.errors.ReadOnlySqlTransaction:
                raise StoreError(f"{what}: {self._target} is a read-only replica (hot standby); "
                                 "write to the primary, and search here") from None
            except psycopg.Error as exc:
                if self._conn.broken or self._conn.closed:
                    raise StoreError(
                        f"{what}: lost the connection to PostgreSQL at {self._target} "
                        f"({str(exc).strip()}); open the store again"
                    ) from exc
                raise StoreError(f"{what}: {str(exc).strip()}") from exc

    # ---- writing ---------------------------------------------------------
    def put_document(self, doc: Document, records: list[ChunkRecord]) -> None:
        self._row_counts.clear()
        vectors = [flat_vector(r.vector) for r in records]
        headings, sections = [], set()
        for r in records:
            if r.heading_vector is not None:
                section = _section(r.chunk)
                headings.append((flat_vector(r.heading_vector), section, section not in sections, _clean(r.chunk.id)))
                sections.add(section)
        dims = sorted({v.size for v in vectors} | {h[0].size for h in headings})
        if len(dims) > 1:
            raise StoreError(f"dimension mismatch: the chunks of {doc.id!r} have vectors of {dims} dimensions")
        for r in records:
            if r.chunk.doc_id != doc.id:
                raise StoreError(f"chunk {r.chunk.id!r} belongs to {r.chunk.doc_id!r}, not {doc.id!r}")
        dim = dims[0] if dims else None
        aligned = [(flat_vector(r.aligned_vector), flat_vector(r.aligned_heading_vector), _clean(r.chunk.id))
                   for r in records if r.aligned_vector is not None]

        def write() -> None:
            conn = self.conn
            with conn.transaction():
                # Remove the old version first: a failure below rolls this back too.
                self._count_fts(doc.id, -1)
                self._log_chunks(doc.id, False)
                conn.execute(self._q("DELETE FROM {s}.documents WHERE id = %s"), (_clean(doc.id),))
                if dim is not None and self._dim != dim:
                    self._fix_dim(dim)  # first write, or raises on a mismatch
                conn.execute(
                    self._q(
                        "INSERT INTO {s}.documents (id, fingerprint, title, lang, source, doc_type,"
                        " date, path, n_chunks) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    ),
                    (_clean(doc.id), doc.fingerprint(), _clean(doc.title), _clean(doc.lang or ""),
                     _clean(doc.source or ""), _clean(doc.doc_type or ""), _clean(doc.date),
                     _clean(doc.path or ""), len(records)),
                )
                if records:
                    with conn.cursor() as cur:
                        cur.executemany(
                            self._q(
                                "INSERT INTO {s}.chunks (id, doc_id, ordinal, title, heading_path, text,"
                                " lang, source, doc_type, date, title_terms, heading_terms, body_terms,"
                                " embedding, location)"
                                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %b, %s)"
                            ),
                            [self._chunk_row(r, v) for r, v in zip(records, vectors)],
                        )
                    # The tsvectors are computed in the database from the stored terms.
                    conn.execute(self._q(_FTS_INSERT), (_clean(doc.id),))
                    self._count_fts(doc.id, +1)
                    self._log_chunks(doc.id, True)
                if headings:
                    with conn.cursor() as cur:
                        cur.executemany(self._q(
                            "INSERT INTO {s}.chunk_headings (chunk_id, seq, doc_id, lang, section, lead, embedding)"
                            " SELECT id, seq, doc_id, lang, %s, %s, %b FROM {s}.chunks WHERE id = %s"),
                            [(section, lead, v, cid) for v, section, lead, cid in headings])
                if aligned:
                    if self._aligned_dim != aligned[0][0].size:
                        self._type_aligned_columns(aligned[0][0].size)   # first write, or raises on a mismatch
                    with conn.cursor() as cur:
                        cur.executemany(self._q(
                            "INSERT INTO {s}.chunk_aligned (chunk_id, seq, lang, embedding, name_embedding)"
                            " SELECT id, seq, lang, %b, %b FROM {s}.chunks WHERE id = %s"), aligned)

        try:
            self._run(f"cannot store document {doc.id!r}", write)
        except StoreError:
            self._dim = self._stored_dim_safe()
            self._aligned_dim = None             # read again: the write may have typed it, then rolled back
            raise

    # ---- large documents, a batch at a time (see chaja.stores.sqlite_staging) --------
    def resume_staged(self, doc_id: str, key: str) -> int:
        """How many leading chunks of ``doc_id`` an earlier run staged under ``key`` (rows
        under another key, or after a gap, are deleted)."""
        def resume() -> int:
            conn = self.conn
            with conn.transaction():
                conn.execute(self._q("DELETE FROM {s}.staged_chunks WHERE doc_id = %s AND stage_key != %s"),
                             (_clean(doc_id), key))
                ordinals = [r[0] for r in conn.execute(self._q(
                    "SELECT ordinal FROM {s}.staged_chunks WHERE doc_id = %s ORDER BY ordinal"), (_clean(doc_id),))]
                done = staged_prefix(ordinals)
                conn.execute(self._q("DELETE FROM {s}.staged_chunks WHERE doc_id = %s AND ordinal >= %s"),
                             (_clean(doc_id), done))
                return done

        return self._run(f"cannot read the staged chunks of {doc_id!r}", resume)

    def stage_chunks(self, key: str, records: list[ChunkRecord]) -> None:
        """Commit one batch of a large document's chunks where no search sees them."""
        rows = []
        for r in records:
            vec = flat_vector(r.vector)
            if self._dim is not None and vec.size != self._dim:
                raise StoreError(f"dimension mismatch: the store holds {self._dim}-dimensional vectors, "
                                 f"got {vec.size}")
            section = _section(r.chunk) if r.heading_vector is not None else None
            rows.append((_clean(r.chunk.doc_id), key) + self._chunk_row(r, vec)[2:] + (
                _clean(r.chunk.id), section, flat_vector(r.heading_vector), flat_vector(r.aligned_vector),
                flat_vector(r.aligned_heading_vector)))

        def stage() -> None:
            with self.conn.transaction(), self.conn.cursor() as cur:
                cur.execute(self._q("DELETE FROM {s}.staged_chunks WHERE doc_id = %s AND ordinal = ANY(%s)"),
                            (rows[0][0], [row[2] for row in rows]))
                cur.executemany(self._q(
                    "INSERT INTO {s}.staged_chunks (doc_id, stage_key, ordinal, title, heading_path, text, lang,"
                    " source, doc_type, date, title_terms, heading_terms, body_terms, embedding, location, id,"
                    " section, heading_embedding, aligned_embedding, aligned_name_embedding)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %b, %s, %s, %s, %b, %b, %b)"), rows)

        if rows:
            self._run("cannot stage chunks", stage)

    def put_staged(self, doc: Document, key: str, n_chunks: int) -> None:
        """Replace the stored ``doc`` with its ``n_chunks`` staged chunks, in one transaction
        that moves the rows inside PostgreSQL."""
        self._row_counts.clear()
        did = _clean(doc.id)

        def write() -> None:
            conn = self.conn
            with conn.transaction():
                got, dim = conn.execute(self._q(
                    "SELECT count(*), max(vector_dims(embedding)) FROM {s}.staged_chunks"
                    " WHERE doc_id = %s AND stage_key = %s"), (did, key)).fetchone()
                if got != n_chunks:
                    raise StoreError(f"{doc.id}: {got} of its {n_chunks} chunks are staged")
                self._count_fts(doc.id, -1)
                self._log_chunks(doc.id, False)
                conn.execute(self._q("DELETE FROM {s}.documents WHERE id = %s"), (did,))
                if dim is not None and self._dim != dim:
                    self._fix_dim(int(dim))
                conn.execute(self._q(
                    "INSERT INTO {s}.documents (id, fingerprint, title, lang, source, doc_type, date, path, n_chunks)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"),
                    (did, doc.fingerprint(), _clean(doc.title), _clean(doc.lang or ""), _clean(doc.source or ""),
                     _clean(doc.doc_type or ""), _clean(doc.date), _clean(doc.path or ""), n_chunks))
                staged = " FROM {s}.staged_chunks s WHERE s.doc_id = %s AND s.stage_key = %s"
                conn.execute(self._q(
                    "INSERT INTO {s}.chunks (id, doc_id, ordinal, title, heading_path, text, lang, source, doc_type,"
                    " date, title_terms, heading_terms, body_terms, embedding, location) SELECT s.id, s.doc_id,"
                    " s.ordinal, s.title, s.heading_path, s.text, s.lang, s.source, s.doc_type, s.date,"
                    " s.title_terms, s.heading_terms, s.body_terms, s.embedding, s.location" + staged + " ORDER BY s.ordinal"), (did, key))
                conn.execute(self._q(_FTS_INSERT), (did,))
                self._count_fts(doc.id, +1)
                self._log_chunks(doc.id, True)
                # a section's first chunk leads it in the heading index (as put_document does)
                conn.execute(self._q(
                    "INSERT INTO {s}.chunk_headings (chunk_id, seq, doc_id, lang, section, lead, embedding)"
                    " SELECT c.id, c.seq, c.doc_id, c.lang, s.section,"
                    " s.ordinal = min(s.ordinal) OVER (PARTITION BY s.section), s.heading_embedding"
                    " FROM {s}.staged_chunks s JOIN {s}.chunks c ON c.id = s.id"
                    " WHERE s.doc_id = %s AND s.stage_key = %s AND s.heading_embedding IS NOT NULL"), (did, key))
                (adim,) = conn.execute(self._q(
                    "SELECT max(vector_dims(aligned_embedding)) FROM {s}.staged_chunks"
                    " WHERE doc_id = %s AND stage_key = %s"), (did, key)).fetchone()
                if adim is not None and self._aligned_dim != adim:
                    self._type_aligned_columns(int(adim))
                conn.execute(self._q(
                    "INSERT INTO {s}.chunk_aligned (chunk_id, seq, lang, embedding, name_embedding)"
                    " SELECT c.id, c.seq, c.lang, s.aligned_embedding, s.aligned_name_embedding"
                    " FROM {s}.staged_chunks s JOIN {s}.chunks c ON c.id = s.id"
                    " WHERE s.doc_id = %s AND s.stage_key = %s AND s.aligned_embedding IS NOT NULL"), (did, key))
                conn.execute(self._q("DELETE FROM {s}.staged_chunks WHERE doc_id = %s"), (did,))

        try:
            self._run(f"cannot store document {doc.id!r}", write)
        except StoreError:
            self._dim = self._stored_dim_safe()
            self._aligned_dim = None             # read again: the write may have typed it, then rolled back
            raise

    def staged(self) -> dict[str, int]:
        """doc_id → chunks staged by a run that has not published the document (yet)."""
        return self._run("cannot read the staged chunks", lambda: dict(self.conn.execute(self._q(
            "SELECT doc_id, count(*) FROM {s}.staged_chunks GROUP BY doc_id")).fetchall()))

    def discard_staged(self) -> int:
        """Delete every staged chunk (an interrupted large document); how many."""
        def discard() -> int:
            with self.conn.transaction():
                return self.conn.execute(self._q("DELETE FROM {s}.staged_chunks")).rowcount

        return self._run("cannot discard the staged chunks", discard)

    def _count_fts(self, doc_id: str, sign: int) -> None:
        """Add (+1) or remove (−1) a stored document's chunks and tokens in fts_stats."""
        self.conn.execute(self._q(
            "UPDATE {s}.fts_stats SET chunks = chunks + %(sign)s * d.n, tokens = tokens + %(sign)s * d.t"
            " FROM (SELECT count(*) AS n, coalesce(sum(f.n_tokens), 0) AS t FROM {s}.chunk_fts AS f"
            "       JOIN {s}.chunks AS c ON c.id = f.chunk_id WHERE c.doc_id = %(doc)s) AS d"),
            {"sign": int(sign), "doc": _clean(doc_id)})

    def _log_chunks(self, doc_id: str, added: bool) -> None:
        """Append the document's chunk rows to ``keyword_log``, as added or as removed.
        Every caller has already updated ``fts_stats`` in this transaction, whose row
        lock orders the store's writers, so the log's ``seq`` grows in commit order."""
        self.conn.execute(self._q(
            "INSERT INTO {s}.keyword_log (row, added) SELECT seq, %s FROM {s}.chunks WHERE doc_id = %s ORDER BY seq"),
            (bool(added), _clean(doc_id)))

    def _stored_dim_safe(self) -> int | None:
        try:
            with self._lock:
                return self._stored_dim() if self._conn is not None else None
        except Exception:
            return self._dim

    @staticmethod
    def _chunk_row(r: ChunkRecord, vec: np.ndarray) -> tuple:
        c = r.chunk
        return (
            _clean(c.id), _clean(c.doc_id), int(c.ordinal), _clean(c.title),
            [_clean(h) for h in c.heading_path], _clean(c.text), _clean(c.lang or ""),
            _clean(c.source or ""), _clean(c.doc_type or ""), _clean(c.date),
            _clean(" ".join(r.title_terms)), _clean(" ".join(r.heading_terms)),
            _clean(" ".join(r.body_terms)), vec, c.location and _clean(c.location.encode()),
        )

    def delete_document(self, doc_id: str) -> bool:
        self._row_counts.clear()
        def delete() -> bool:
            with self.conn.transaction():
                self._count_fts(doc_id, -1)
                self._log_chunks(doc_id, False)
                cur = self.conn.execute(self._q("DELETE FROM {s}.documents WHERE id = %s"), (_clean(doc_id),))
                return cur.rowcount > 0

        return self._run(f"cannot delete document {doc_id!r}", delete)

    # ---- reading ---------------------------------------------------------
    def fingerprints(self) -> dict[str, str]:
        return self._run("cannot read fingerprints", lambda: dict(
            self.conn.execute(self._q("SELECT id, fingerprint FROM {s}.documents")).fetchall()
        ))

    def keyword(self, terms: list[str], n: int, *, title_weight: float = 2.0,
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
        tokens = SegmentedBM25.query_tokens(terms) if self.keyword_engine == "postings" else None
        if tokens is not None:
            return self._run("keyword search failed", lambda: self._keyword_postings(
                tokens, n, title_weight=title_weight, heading_weight=heading_weight, field=field,
                lang=_clean(lang) or None, where=where))
        words = _query_terms(terms)
        if not words:
            return []
        scale = max(1.0, float(title_weight), float(heading_weight))
        # ts_rank_cd's weights array is {D, C, B, A}: body, (unused), heading, title.
        weights = [1.0 / scale, 1.0 / scale, heading_weight / scale, title_weight / scale]
        column = "title_tsv" if field == "title" else "tsv"
        params = {"weights": weights, "terms": words, "lang": _clean(lang), "n": int(n),
                  "scale": scale, "k1": BM25_K1, "b": BM25_B}
        condition = (" AND f.lang = %(lang)s" if lang else "") + self._filter_sql(where, params, "f.chunk_id")
        query = self._q(
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
        rows = self._run("keyword search failed", lambda: self.conn.execute(query, params).fetchall())
        return [Hit(cid, float(score)) for cid, score in rows]

    def _keyword_postings(self, tokens: list[str], n: int, *, title_weight: float, heading_weight: float,
                          field: str, lang: str | None, where: Filters | None) -> list[Hit]:
        """The keyword list from the postings this reader keeps (the ``postings`` engine):
        the same BM25 as the SQL path, reading only the query terms' postings."""
        index = self._keywords.refresh()
        allow = self._allowed_seqs(where) if where else None
        hits = index.search(tokens, n, title_weight=title_weight, heading_weight=heading_weight,
                            field=field, lang=lang, allow=allow)
        if not hits:
            return []
        ids = dict(self.conn.execute(self._q("SELECT seq, id FROM {s}.chunks WHERE seq = ANY(%s)"),
                                     ([r for r, _ in hits],)).fetchall())
        return [Hit(ids[r], score) for r, score in hits if r in ids]   # a chunk deleted since: left out

    def _catch_up(self) -> None:
        self.refresh()

    def refresh(self) -> bool:
        """Apply what the store's writers have committed to the keyword postings this
        reader keeps (a search does it first; the hub calls it after each write to take
        that off the next search); True when there was something to apply."""
        if self.keyword_engine != "postings":
            return False
        before = self._keywords.seq
        self._run("cannot bring the keyword index up to date", self._keywords.refresh)
        return self._keywords.seq != before

    def compact(self, *, progress=None, graphs: bool = True) -> bool:
        """Prune the keyword log to what readers still need
        (:meth:`~chaja.stores.postgres_keywords.PostgresKeywordIndex.prune`; ``Index.add`` and
        ``Index.delete`` call it, telling ``progress`` ``"keyword log"``); True when entries
        were deleted. Nothing to do on a replica, which the primary's pruning reaches by
        replication. ``graphs`` is the SQLite store's (a bulk load defers its vector
        graphs); PostgreSQL keeps its vector indexes itself, so it changes nothing here."""
        if self.replica:
            return False
        if progress is not None:
            progress("keyword log")
        return self._run("cannot prune the keyword log", self._keywords.prune) > 0

    def _allowed_seqs(self, where: Filters) -> np.ndarray:
        """Sorted ``seq`` of the chunks that pass ``where``, kept until the log moves on."""
        key = (where, self._keywords.seq)
        got = self._allowed.get(key)
        if got is None:
            params: dict = {}
            cond = self._filter_sql(where, params)
            rows = self.conn.execute(self._q("SELECT seq FROM {s}.chunks WHERE true" + cond + " ORDER BY seq"),
                                     params).fetchall()
            got = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            if len(self._allowed) > 32:
                self._allowed.clear()
            self._allowed[key] = got
        return got

    def matched_terms(self, terms: list[str], ids: list[str]) -> dict[str, set[str]]:
        """Which of ``terms`` each listed chunk holds (``chunk_terms(ids)[c] & set(terms)``),
        from the postings when this reader keeps them (no chunk text is read)."""
        tokens = SegmentedBM25.query_tokens(terms) if self.keyword_engine == "postings" else None
        if tokens is None or tokens != list(dict.fromkeys(terms)):
            wanted = set(terms)
            return {c: t & wanted for c, t in self.chunk_terms(ids).items()}
        wanted_ids = [i for i in (_clean(x) for x in ids) if i is not None]

        def read() -> dict[str, set[str]]:
            index = self._keywords.refresh()
            seq_of = dict(self.conn.execute(self._q("SELECT id, seq FROM {s}.chunks WHERE id = ANY(%s::text[])"),
                                            (wanted_ids,)).fetchall())
            held = index.holding(tokens, list(seq_of.values()))
            return {c: held[r] for c, r in seq_of.items()}

        return self._run("cannot read chunk terms", read) if wanted_ids else {}

    def vector(self, query: np.ndarray, n: int, *, lang: str | None = None, field: str = "chunk",
               where: Filters | None = None) -> list[Hit]:
        """Best ``n`` chunks by cosine similarity, best first (``field="heading"``: by
        the vectors of their headings, from ``chunk_headings``).

        The HNSW index answers with ``hnsw.ef_search`` ≥ ``n``. When it returns fewer
        than ``n`` rows although more chunks qualify (a ``lang`` filter that rejects
        most of the candidates the index visits, or ``n`` above pgvector's limit of
        1000), the query is answered again by an exact scan.
        """
        q = np.asarray(query, dtype=np.float32).ravel()
        if self._dim is None:  # another process may have written since we opened
            self._dim = self._run("cannot read the vector dimension", self._stored_dim)
        if n <= 0 or self._dim is None:
            return []
        if q.size != self._dim and field not in _ALIGNED:
            raise StoreError(
                f"dimension mismatch: the query vector has {q.size} dimensions, the store holds {self._dim}"
            )
        if not np.all(np.isfinite(q)) or not np.any(q):
            return []
        if field in _ALIGNED:
            return self._aligned_vector(q, int(n), lang, field, where)
        if field not in _VECTOR_TABLES:
            raise StoreError(f"vector field must be one of {', '.join(_FIELD_COLUMNS)}, not {field!r}")
        table, indexed = _VECTOR_TABLES[field]
        n = int(n)
        params = {"q": q, "lang": _clean(lang), "n": n}
        passing = self._filter_sql(where, params, None if field == "chunk" else "chunk_id")
        conditions = [c for c in (indexed, "lang = %(lang)s" if lang else None) if c]
        condition = "WHERE " + " AND ".join(conditions + ["TRUE"]) + passing
        if field == "chunk":
            inner = (
                "SELECT id, seq, embedding <=> %(q)b AS dist FROM {s}.chunks " + condition +
                " ORDER BY embedding <=> %(q)b LIMIT %(n)s"
            )
            stmt = self._q("SELECT id, 1 - dist FROM (" + inner + ") AS best ORDER BY dist, seq")
        else:  # the n best sections by their lead rows, then every chunk of them
            inner = (
                "SELECT doc_id, section, embedding <=> %(q)b AS dist FROM {s}.chunk_headings " + condition +
                " ORDER BY embedding <=> %(q)b LIMIT %(n)s"
            )
            stmt = self._q(
                "SELECT h.chunk_id, 1 - best.dist FROM (" + inner + ") AS best"
                " JOIN {s}.chunk_headings AS h ON h.doc_id = best.doc_id AND h.section = best.section"
                + self._filter_sql(where, params, "h.chunk_id") +
                " ORDER BY best.dist, h.seq LIMIT %(n)s"
            )

        # every row that could be returned (for headings: every chunk of every section)
        count = self._q(f"SELECT count(*) FROM {{s}}.{table} WHERE " + ("lang = %(lang)s" if lang else "TRUE") + passing)
        rows = self._run("vector search failed", lambda: self._nearest(
            table, stmt, stmt, count, params, n, filtered=bool(lang or where)))
        return [Hit(cid, float(score)) for cid, score in rows]

    def _nearest(self, table: str, indexed, exact, count, params: dict, n: int, *, filtered: bool,
                 exact_only: bool = False) -> list[tuple]:
        """Rows of a nearest-neighbour statement, in one transaction: ``exact`` with index
        scans off for a table of at most ``exact_below`` rows (or ``exact_only``); above it
        ``indexed`` with ``hnsw.ef_search = max(ef_search, 8n)`` (iterative scans for a
        ``filtered`` query where pgvector has them), and ``exact`` again when the index
        returned fewer than ``n`` rows although ``count`` says more qualify."""
        conn = self.conn
        with conn.transaction():
            if exact_only or self._row_count(table) <= self.exact_below:
                conn.execute("SELECT set_config('enable_indexscan', 'off', true)")
                return conn.execute(exact, params).fetchall()
            ef = min(HNSW_EF_SEARCH_MAX, max(self.ef_search, HNSW_EF_SEARCH_FACTOR * n))
            conn.execute("SELECT set_config('hnsw.ef_search', %s, true)", (str(ef),))
            if filtered and self._iterative_scan:
                conn.execute("SELECT set_config('hnsw.iterative_scan', 'strict_order', true)")
            rows = conn.execute(indexed, params).fetchall()
            if len(rows) < n and conn.execute(count, params).fetchone()[0] > len(rows):
                # Exact answer: a sequential scan with a top-n sort.
                conn.execute("SELECT set_config('enable_indexscan', 'off', true)")
                rows = conn.execute(exact, params).fetchall()
        return rows

    def _aligned_vector(self, q: np.ndarray, n: int, lang: str | None, field: str,
                        where: Filters | None = None) -> list[Hit]:
        """The aligned fields as the chunk field: an exact scan up to ``exact_below`` rows,
        above it their HNSW index (once the columns are typed), again exactly when the
        index returns fewer than ``n`` of the rows that qualify."""
        table, column = _ALIGNED[field]
        params = {"q": q, "lang": _clean(lang), "n": n}
        condition = (f"WHERE {column} IS NOT NULL" + (" AND lang = %(lang)s" if lang else "")
                     + self._filter_sql(where, params, "chunk_id"))
        exact = self._q(
            f"SELECT chunk_id, 1 - ({column} <=> %(q)b) FROM {{s}}.{table} {condition}"
            f" ORDER BY {column} <=> %(q)b, seq LIMIT %(n)s")
        indexed = self._q(
            f"SELECT chunk_id, 1 - dist FROM (SELECT chunk_id, seq, {column} <=> %(q)b AS dist"
            f" FROM {{s}}.{table} {condition} ORDER BY {column} <=> %(q)b LIMIT %(n)s) AS best ORDER BY dist, seq")

        count = self._q(f"SELECT count(*) FROM {{s}}.{table} {condition}")

        def search() -> list[tuple[str, float]]:
            if self._aligned_dim is None:            # another process may have typed them since
                self._aligned_dim = self._stored_dim(table)
            dim = self._aligned_dim
            if dim is None:                          # untyped columns: the dimension of a stored row
                found = self.conn.execute(self._q(f"SELECT vector_dims({column}) FROM {{s}}.{table} "
                                                  f"WHERE {column} IS NOT NULL LIMIT 1")).fetchone()
                if found is None:
                    return []
                dim = found[0]
            if dim != q.size:
                raise StoreError(f"dimension mismatch: the query vector has {q.size} dimensions, "
                                 f"the store's {field} vectors {dim}")
            return self._nearest(table, indexed, exact, count, params, n, filtered=bool(lang or where),
                                 exact_only=self._aligned_dim is None)

        return [Hit(cid, float(score)) for cid, score in self._run("vector search failed", search)]

    def vector_scores(self, query: np.ndarray, ids: list[str], *, field: str = "chunk") -> dict[str, float]:
        """Cosine of ``query`` with the ``field`` vector of each chunk in ``ids`` that has one."""
        if field not in _FIELD_COLUMNS:
            raise StoreError(f"vector field must be one of {', '.join(_FIELD_COLUMNS)}, not {field!r}")
        table, key, column = _FIELD_COLUMNS[field]
        wanted = [i for i in (_clean(x) for x in dict.fromkeys(ids)) if i is not None]
        q = np.asarray(query, dtype=np.float32).ravel()
        if not wanted or not np.all(np.isfinite(q)):
            return {}
        stmt = self._q(f"SELECT {key}, 1 - ({column} <=> %(q)b) FROM {{s}}.{table}"
                       f" WHERE {key} = ANY(%(ids)s::text[]) AND {column} IS NOT NULL")
        rows = self._run("cannot score chunks", lambda: self.conn.execute(
            stmt, {"q": q, "ids": wanted}).fetchall())
        return {cid: float(score) for cid, score in rows}

    def stored_vectors(self, ids: list[str], field: str = "chunk") -> dict[str, np.ndarray]:
        """The stored ``field`` vector of each listed chunk that has one."""
        if field not in _FIELD_COLUMNS:
            raise StoreError(f"vector field must be one of {', '.join(_FIELD_COLUMNS)}, not {field!r}")
        table, key, column = _FIELD_COLUMNS[field]
        wanted = [i for i in (_clean(x) for x in dict.fromkeys(ids)) if i is not None]
        if not wanted:
            return {}
        stmt = self._q(f"SELECT {key}, {column} FROM {{s}}.{table}"
                       f" WHERE {key} = ANY(%(ids)s::text[]) AND {column} IS NOT NULL")
        rows = self._run("cannot read vectors", lambda: self.conn.execute(stmt, {"ids": wanted}).fetchall())
        return {cid: _array(vec) for cid, vec in rows}

    def vector_sample(self, n: int, *, field: str = "chunk") -> np.ndarray:
        """At most ``n`` stored ``field`` vectors: the first ``n`` by md5 of the chunk id,
        as :func:`chaja.stores.base.sample_order` orders them."""
        if field not in _FIELD_COLUMNS:
            raise StoreError(f"vector field must be one of {', '.join(_FIELD_COLUMNS)}, not {field!r}")
        table, key, column = _FIELD_COLUMNS[field]
        rows = self._run("cannot read vectors", lambda: self.conn.execute(self._q(
            f"SELECT {column} FROM {{s}}.{table} WHERE {column} IS NOT NULL"
            f" ORDER BY md5({key}) LIMIT %s"), (int(n),)).fetchall())
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([_array(r[0]) for r in rows])

    def chunk_sample(self, n: int) -> list[Chunk]:
        """At most ``n`` stored chunks: the first ``n`` by md5 of the chunk id, as
        :func:`chaja.stores.base.sample_order` orders them."""
        rows = self._run("cannot read chunks", lambda: self.conn.execute(self._q(
            "SELECT id FROM {s}.chunks ORDER BY md5(id) LIMIT %s"), (int(n),)).fetchall())
        ids = [r[0] for r in rows]
        found = self.chunks(ids)
        return [found[i] for i in ids if i in found]

    def _row_count(self, table: str) -> int:
        """Rows in ``table``, counted at most every ROW_COUNT_TTL seconds (and after
        this object's own writes); decides between exact and HNSW search."""
        now = time.monotonic()
        seen = self._row_counts.get(table)
        if seen is None or now - seen[0] > ROW_COUNT_TTL:
            count = self.conn.execute(self._q(f"SELECT count(*) FROM {{s}}.{table}")).fetchone()[0]
            seen = self._row_counts[table] = (now, int(count))
        return seen[1]

    def language_means(self) -> dict[str, tuple[int, np.ndarray]]:
        """language → (chunk count, mean chunk vector), computed in the database."""
        rows = self._run("cannot compute language means", lambda: self.conn.execute(
            self._q("SELECT lang, count(*), avg(embedding) FROM {s}.chunks GROUP BY lang ORDER BY lang")
        ).fetchall())
        out = {}
        for lang, count, mean in rows:
            arr = mean.to_numpy() if hasattr(mean, "to_numpy") else mean
            out[lang] = (int(count), np.asarray(arr, dtype=np.float32).copy())
        return out

    def chunks(self, ids: list[str]) -> dict[str, Chunk]:
        wanted = [i for i in (_clean(x) for x in ids) if i is not None]
        if not wanted:
            return {}

        def read() -> list[tuple]:
            return self.conn.execute(
                self._q(
                    "SELECT id, doc_id, ordinal, title, heading_path, text, lang, source, doc_type, date, location"
                    " FROM {s}.chunks WHERE id = ANY(%s::text[])"
                ),
                (wanted,),
            ).fetchall()

        out: dict[str, Chunk] = {}
        for row in self._run("cannot read chunks", read):
            out[row[0]] = Chunk(id=row[0], doc_id=row[1], ordinal=row[2], title=row[3],
                                heading_path=tuple(row[4]), text=row[5], lang=row[6],
                                source=row[7], doc_type=row[8], date=row[9], location=Location.decode(row[10]))
        return out

    def _column_of(self, ids: list[str], column: str, what: str) -> dict[str, object]:
        """chunk id → one column of each listed chunk that exists (no text read)."""
        wanted = [i for i in (_clean(x) for x in ids) if i is not None]
        if not wanted:
            return {}
        return dict(self._run(f"cannot read chunk {what}", lambda: self.conn.execute(
            self._q(f"SELECT id, {column} FROM {{s}}.chunks WHERE id = ANY(%s::text[])"), (wanted,)).fetchall()))

    def doc_ids(self, ids: list[str]) -> dict[str, str]:
        return self._column_of(ids, "doc_id", "documents")

    def chunk_languages(self, ids: list[str]) -> dict[str, str]:
        return {cid: lang or "" for cid, lang in self._column_of(ids, "lang", "languages").items()}

    def chunk_terms(self, ids: list[str]) -> dict[str, set[str]]:
        wanted = [i for i in (_clean(x) for x in ids) if i is not None]
        if not wanted:
            return {}
        rows = self._run("cannot read chunk terms", lambda: self.conn.execute(
            self._q(
                "SELECT id, title_terms, heading_terms, body_terms FROM {s}.chunks"
                " WHERE id = ANY(%s::text[])"
            ),
            (wanted,),
        ).fetchall())
        return {cid: set(f"{t} {h} {b}".split()) for cid, t, h, b in rows}

    def get_meta(self, key: str) -> str | None:
        row = self._run("cannot read metadata", lambda: self.conn.execute(
            self._q("SELECT value FROM {s}.meta WHERE key = %s"), (_clean(key),)
        ).fetchone())
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._run("cannot write metadata", lambda: self.conn.execute(
            self._q(
                "INSERT INTO {s}.meta (key, value) VALUES (%s, %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value"
            ),
            (_clean(key), _clean(value)),
        ))

    def check(self, limit: int = 50) -> list[str]:
        """Faults that make this store less than whole, one line each (empty: whole): the
        schema version, each document's chunks, keyword rows both ways, the keyword
        statistics (``fts_stats``) against the rows. One repeatable-read snapshot."""
        def read() -> list[str]:
            out: list[str] = []
            conn = self.conn
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                version = self._current_version()
                if version > SCHEMA_VERSION:
                    out.append(f"schema: version {version} is not one this chaja knows")
                for doc_id, want, got in conn.execute(self._q(
                        "SELECT d.id, d.n_chunks, count(c.id) FROM {s}.documents d LEFT JOIN {s}.chunks c"
                        " ON c.doc_id = d.id GROUP BY d.id, d.n_chunks HAVING count(c.id) != d.n_chunks LIMIT %s"),
                        (limit,)):
                    out.append(f"document {doc_id!r}: records {want} chunks, holds {got}")
                for (cid,) in conn.execute(self._q(
                        "SELECT c.id FROM {s}.chunks c LEFT JOIN {s}.chunk_fts f ON f.chunk_id = c.id"
                        " WHERE f.chunk_id IS NULL LIMIT %s"), (limit,)):
                    out.append(f"chunk {cid!r}: no keyword row")
                chunks, fts, tokens, recorded = conn.execute(self._q(
                    "SELECT (SELECT count(*) FROM {s}.chunks), (SELECT count(*) FROM {s}.chunk_fts),"
                    " (SELECT coalesce(sum(n_tokens), 0) FROM {s}.chunk_fts),"
                    " (SELECT row(chunks, tokens)::text FROM {s}.fts_stats LIMIT 1)")).fetchone()
                if fts != chunks:
                    out.append(f"keyword rows: {fts} for {chunks} chunks")
                if recorded != f"({fts},{tokens})":
                    out.append(f"keyword statistics: fts_stats says {recorded}, the rows hold ({fts},{tokens})")
            return out

        return self._run("cannot check the store", read)

    def repair(self, analyzer=None) -> list[str]:
        """Mend what :meth:`check` finds without encoding anything again, in one
        transaction: a document whose chunks do not match its record is removed (index
        its file again); a chunk without its keyword row gets it back from the terms the
        chunk row keeps; ``fts_stats`` is recounted from the rows. ``analyzer`` is unused
        (the terms are stored); returns what was done, one line per act."""
        def mend() -> list[str]:
            done: list[str] = []
            conn = self.conn
            with conn.transaction():
                # the fts_stats row lock first, as every writer takes it (the log's order)
                conn.execute(self._q("SELECT 1 FROM {s}.fts_stats FOR UPDATE"))
                broken = [r[0] for r in conn.execute(self._q(
                    "SELECT d.id FROM {s}.documents d LEFT JOIN {s}.chunks c ON c.doc_id = d.id"
                    " GROUP BY d.id, d.n_chunks HAVING count(c.id) != d.n_chunks ORDER BY d.id"))]
                for doc_id in broken:
                    self._log_chunks(doc_id, False)
                    conn.execute(self._q("DELETE FROM {s}.documents WHERE id = %s"), (doc_id,))
                    done.append(f"removed document {doc_id!r} (damaged; index its file again)")
                missing = [r[0] for r in conn.execute(self._q(
                    "SELECT c.id FROM {s}.chunks c LEFT JOIN {s}.chunk_fts f ON f.chunk_id = c.id"
                    " WHERE f.chunk_id IS NULL ORDER BY c.id"))]
                if missing:
                    conn.execute(self._q(_FTS_INSERT.replace("WHERE doc_id = %s", "WHERE id = ANY(%s)")),
                                 (missing,))
                    done += [f"rebuilt the keyword row of chunk {cid!r}" for cid in missing]
                row = conn.execute(self._q(
                    "SELECT (SELECT count(*) FROM {s}.chunk_fts), (SELECT coalesce(sum(n_tokens), 0)"
                    " FROM {s}.chunk_fts), (SELECT row(chunks, tokens)::text FROM {s}.fts_stats LIMIT 1)")).fetchone()
                if row[2] != f"({row[0]},{row[1]})":
                    conn.execute(self._q("DELETE FROM {s}.fts_stats"))
                    conn.execute(self._q("INSERT INTO {s}.fts_stats (chunks, tokens) VALUES (%s, %s)"), row[:2])
                    done.append(f"recounted the keyword statistics ({row[0]} rows, {row[1]} tokens)")
            return done

        self._row_counts.clear()
        return self._run("cannot repair the store", mend)

    def documents(self, *, after: str | None = None, limit: int = 100,
                  ids: list[str] | None = None) -> list[DocumentInfo]:
        cols = "SELECT id, title, lang, source, doc_type, date, path, fingerprint, n_chunks FROM {s}.documents"
        if ids is not None:
            stmt, params = self._q(cols + " WHERE id = ANY(%s) ORDER BY id"), ([_clean(i) for i in ids],)
        else:
            stmt, params = self._q(cols + " WHERE id > %s ORDER BY id LIMIT %s"), (_clean(after or ""), int(limit))
        rows = self._run("cannot list documents", lambda: self.conn.execute(stmt, params).fetchall())
        return [DocumentInfo(r[0], r[1], r[2] or "", r[3] or "", r[4] or "", r[5], r[6] or "", r[7], int(r[8]))
                for r in rows]

    def stats(self) -> StoreStats:
        def read() -> StoreStats:
            conn = self.conn

            def counts(col: str) -> dict[str, int]:
                rows = conn.execute(self._q(
                    f"SELECT {col}, count(*) FROM {{s}}.documents GROUP BY {col} ORDER BY {col}"
                )).fetchall()
                return {k or "": int(v) for k, v in rows}

            docs = conn.execute(self._q("SELECT count(*) FROM {s}.documents")).fetchone()[0]
            chunks = conn.execute(self._q("SELECT count(*) FROM {s}.chunks")).fetchone()[0]
            size = conn.execute(
                "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = %s AND c.relkind = 'r'", (self.schema,)
            ).fetchone()[0]
            return StoreStats(documents=int(docs), chunks=int(chunks), by_lang=counts("lang"),
                              by_source=counts("source"), by_doc_type=counts("doc_type"),
                              size_bytes=int(size))

        return self._run("cannot read statistics", read)

    @property
    def dim(self) -> int | None:
        """The vector dimension, or ``None`` before the first chunk."""
        return self._dim

    def schema_version(self) -> int:
        return self._run("cannot read the schema version", self._current_version)

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
