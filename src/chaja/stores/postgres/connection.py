"""Opening a PostgreSQL store: the driver, the connection, pgvector, the session's search
path, then the schema and the vector columns as they stand; and the database errors of a
call as :class:`~chaja.stores.base.StoreError`."""
from __future__ import annotations

from typing import Any

from chaja.stores.base import StoreError
from chaja.stores.postgres.hnsw import open_columns
from chaja.stores.postgres.migrations import advisory_lock, migrate
from chaja.stores.postgres.replica import not_replayed, read_only

#: Oldest pgvector with HNSW indexes.
MIN_PGVECTOR = (0, 5, 0)

_EXTRA_HINT = "the PostgreSQL store needs the postgres extra: pip install 'chaja[postgres]'"


def load_psycopg():
    try:
        import psycopg
    except ImportError as exc:
        raise ImportError(_EXTRA_HINT) from exc
    return psycopg


def load_register_vector():
    try:
        from pgvector.psycopg import register_vector
    except ImportError as exc:
        raise ImportError(_EXTRA_HINT) from exc
    return register_vector


def version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for p in text.split("."):
        digits = "".join(ch for ch in p if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def describe(dsn: str) -> str:
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


def connect(dsn: str, target: str):
    """An autocommit connection to ``dsn`` (10 s to connect unless the string says)."""
    psycopg = load_psycopg()
    kwargs: dict[str, Any] = {"autocommit": True, "application_name": "chaja"}
    try:
        from psycopg.conninfo import conninfo_to_dict

        if "connect_timeout" not in conninfo_to_dict(dsn):
            kwargs["connect_timeout"] = 10
    except psycopg.ProgrammingError as exc:
        raise StoreError(f"invalid PostgreSQL connection string: {exc}") from None
    try:
        return psycopg.connect(dsn, **kwargs)
    except psycopg.Error as exc:
        raise StoreError(
            f"cannot connect to PostgreSQL at {target}: {str(exc).strip()}"
        ) from None


def set_up(store, dim: int | None, register_vector) -> None:
    """Everything a new connection needs before the store's first call: quiet notices,
    whether this is a replica, pgvector, the search path, the schema brought up to
    date, vectors as numpy arrays, and the vector columns' dimensions."""
    conn = store._conn
    conn.execute("SET client_min_messages = warning")
    store.replica = bool(conn.execute("SELECT pg_is_in_recovery()").fetchone()[0])
    ext_schema = ensure_pgvector(store)
    sql = store._sql
    conn.execute(
        "SELECT set_config('search_path', %s, false)",
        (", ".join(sql.Identifier(n).as_string(conn) for n in dict.fromkeys((store.schema, ext_schema))),),
    )
    migrate(store)
    register_vector(conn)
    open_columns(store, dim)


def ensure_pgvector(store) -> str:
    """Create the vector extension if needed; return the schema that holds it."""
    psycopg = load_psycopg()
    conn = store._conn
    row = conn.execute(
        "SELECT e.extversion, n.nspname FROM pg_extension e"
        " JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'vector'"
    ).fetchone()
    if row is None:
        available = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
        if store.replica:
            raise StoreError(not_replayed(store._target, "the vector extension"))
        if available is None:
            raise StoreError(
                f"pgvector is missing: the PostgreSQL server at {store._target} has no "
                "'vector' extension installed; install pgvector (0.5 or newer) on the server"
            )
        try:
            with conn.transaction():
                advisory_lock(store)
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
    vt = version_tuple(version)
    if vt < MIN_PGVECTOR:
        raise StoreError(
            f"pgvector {version} is too old: chaja needs 0.5 or newer (HNSW indexes); "
            "run ALTER EXTENSION vector UPDATE after upgrading pgvector"
        )
    # Filtered HNSW scans that keep going until enough rows pass (pgvector 0.8+).
    store._iterative_scan = vt >= (0, 8, 0)
    store.pgvector_version = version
    return ext_schema


def run(store, what: str, fn):
    """Call ``fn`` under the store's lock, turning database errors into StoreError."""
    psycopg = load_psycopg()
    with store._lock:
        store.conn  # raises when closed
        try:
            return fn()
        except StoreError:
            raise
        except psycopg.errors.ReadOnlySqlTransaction:
            raise StoreError(read_only(store._target, what)) from None
        except psycopg.Error as exc:
            if store._conn.broken or store._conn.closed:
                raise StoreError(
                    f"{what}: lost the connection to PostgreSQL at {store._target} "
                    f"({str(exc).strip()}); open the store again"
                ) from exc
            raise StoreError(f"{what}: {str(exc).strip()}") from exc
