"""The vector columns' dimension and their HNSW indexes: a column gets its dimension from
the first vector written (or ``dim=`` on a new store), keeps its vectors in the row where
they fit, and is indexed then; a bulk load drops the indexes and builds them once."""
from __future__ import annotations

import contextlib

from chaja.stores.base import StoreError
from chaja.stores.postgres.migrations import advisory_lock

#: HNSW build parameters (pgvector's defaults).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 64
#: Vectors of at most this many dimensions (6 KB) stay inside their row; longer
#: ones would not fit a page beside the rest of the row and may move to TOAST.
INLINE_MAX_DIM = 1536
#: pgvector indexes at most 2000 dimensions.
HNSW_MAX_DIM = 2000

#: The table behind each vector ``field``, and which of its rows its HNSW index
#: holds (None: all; heading vectors: one lead row per section).
VECTOR_TABLES = {"chunk": ("chunks", None), "heading": ("chunk_headings", "lead")}
#: the HNSW index of each aligned column (built once the columns have their dimension)
ALIGNED_INDEXES = {"embedding": "chunk_aligned_embedding_hnsw", "name_embedding": "chunk_aligned_name_hnsw"}


def stored_dim(store, table: str = "chunks", column: str = "embedding") -> int | None:
    """The dimension ``column`` of ``table`` is typed with (None: not yet)."""
    row = store._conn.execute(
        "SELECT a.atttypmod FROM pg_attribute a"
        " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = %s AND c.relname = %s AND a.attname = %s",
        (store.schema, table, column),
    ).fetchone()
    if row is None or row[0] is None or row[0] <= 0:
        return None
    return int(row[0])


def stored_dim_safe(store) -> int | None:
    """:func:`stored_dim` after a failed write: the dimension known before when it cannot be read."""
    try:
        with store._lock:
            return stored_dim(store) if store._conn is not None else None
    except Exception:
        return store._dim


def open_columns(store, dim: int | None) -> None:
    """Read the columns' dimensions as a store opens: type the heading and aligned columns
    of a store written before they were typed, and fix (or check) ``dim``."""
    store._dim = stored_dim(store)
    if store._dim is not None and stored_dim(store, "chunk_headings") is None:
        with store._conn.transaction():   # a store from before heading vectors
            advisory_lock(store)
            type_heading_column(store, store._dim)
    store._aligned_dim = stored_dim(store, "chunk_aligned")
    if store._aligned_dim is None and not store.replica:
        found = store._conn.execute(store._q(
            "SELECT vector_dims(embedding) FROM {s}.chunk_aligned LIMIT 1")).fetchone()
        if found is not None:            # aligned vectors written before they were typed
            with store._conn.transaction():
                type_aligned_columns(store, int(found[0]))
    if dim is not None:
        if dim <= 0:
            raise StoreError(f"vector dimension must be positive, got {dim}")
        if store._dim is None:
            with store._conn.transaction():
                fix_dim(store, int(dim))
        elif store._dim != dim:
            raise StoreError(
                f"dimension mismatch: the store in schema {store.schema!r} holds "
                f"{store._dim}-dimensional vectors, {dim} was asked for"
            )


def fix_dim(store, dim: int) -> None:
    """Give the vector column its dimension and build the HNSW index (in a transaction)."""
    advisory_lock(store)
    stored = stored_dim(store)
    if stored is None:
        store._conn.execute(store._q(
            f"ALTER TABLE {{s}}.chunks ALTER COLUMN embedding TYPE vector({int(dim)})"
        ))
        keep_inline(store, "chunks", dim)
        stored = dim
        store._dim = dim
        type_heading_column(store, dim)
    if stored != dim:
        raise StoreError(
            f"dimension mismatch: the store holds {stored}-dimensional vectors, got {dim}"
        )
    store._dim = stored


def keep_inline(store, table: str, dim: int) -> None:
    """Store ``table``'s vectors in the row (see migration 4), when they fit."""
    if dim <= INLINE_MAX_DIM:
        store._conn.execute(store._q(f"ALTER TABLE {{s}}.{table} ALTER COLUMN embedding SET STORAGE PLAIN"))


def type_heading_column(store, dim: int) -> None:
    store._conn.execute(store._q(
        f"ALTER TABLE {{s}}.chunk_headings ALTER COLUMN embedding TYPE vector({int(dim)})"
    ))
    keep_inline(store, "chunk_headings", dim)
    if not store._bulk:
        create_vector_index(store)


def create_vector_index(store) -> None:
    if store._dim is not None and store._dim <= HNSW_MAX_DIM:
        for table, indexed in VECTOR_TABLES.values():
            store._conn.execute(store._q(
                f"CREATE INDEX IF NOT EXISTS {table}_embedding_hnsw ON {{s}}.{table}"
                " USING hnsw (embedding vector_cosine_ops)"
                f" WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
                + (f" WHERE {indexed}" if indexed else "")
            ))
    aligned = stored_dim(store, "chunk_aligned")
    if aligned is not None and aligned <= HNSW_MAX_DIM:
        for column, index in ALIGNED_INDEXES.items():
            store._conn.execute(store._q(
                f"CREATE INDEX IF NOT EXISTS {index} ON {{s}}.chunk_aligned"
                f" USING hnsw ({column} vector_cosine_ops)"
                f" WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"
            ))


def type_aligned_columns(store, dim: int) -> None:
    """Give the aligned vector columns their dimension, as the chunk vectors get theirs
    with the first write, so that HNSW can index them (in a transaction)."""
    advisory_lock(store)
    stored = stored_dim(store, "chunk_aligned")
    if stored is None:
        store._conn.execute(store._q(
            f"ALTER TABLE {{s}}.chunk_aligned ALTER COLUMN embedding TYPE vector({int(dim)}),"
            f" ALTER COLUMN name_embedding TYPE vector({int(dim)})"))
        store._conn.execute(store._q("ALTER TABLE {s}.chunk_aligned ALTER COLUMN embedding SET STORAGE PLAIN,"
                                     " ALTER COLUMN name_embedding SET STORAGE PLAIN"))
        if not store._bulk:
            create_vector_index(store)
    elif stored != dim:
        raise StoreError(f"dimension mismatch: the store's aligned vectors have {stored} dimensions, got {dim}")
    store._aligned_dim = dim


@contextlib.contextmanager
def bulk_load(store, *, maintenance_work_mem: str = "1GB"):
    """Load many documents, then build the HNSW index once.

    Each row added to an HNSW index costs a graph search and rewrites the pages
    of its neighbours; building the index once over all rows is many times
    faster. Inside this block the index is dropped, so vector search (for this
    and every other connection) is an exact scan: correct, but slower. On leaving
    the block the index is rebuilt with ``maintenance_work_mem`` (the graph
    should fit in it: roughly rows x (4 x dim + 200) bytes).
    """
    def drop() -> None:
        with store.conn.transaction():
            advisory_lock(store)
            store.conn.execute(store._q("DROP INDEX IF EXISTS {s}.chunks_embedding_hnsw"))
            store.conn.execute(store._q("DROP INDEX IF EXISTS {s}.chunk_headings_embedding_hnsw"))
            for index in ALIGNED_INDEXES.values():
                store.conn.execute(store._q(f"DROP INDEX IF EXISTS {{s}}.{index}"))
        store._bulk = True

    store._run("cannot start a bulk load", drop)
    try:
        yield store
    finally:
        store._bulk = False
        build_vector_index(store, maintenance_work_mem=maintenance_work_mem)


def build_vector_index(store, *, maintenance_work_mem: str = "1GB") -> None:
    """(Re)build the HNSW index if it is missing; a no-op when it exists."""
    def build() -> None:
        with store.conn.transaction():
            advisory_lock(store)
            store.conn.execute("SELECT set_config('maintenance_work_mem', %s, true)",
                               (maintenance_work_mem,))
            create_vector_index(store)

    store._run("cannot build the vector index", build)
