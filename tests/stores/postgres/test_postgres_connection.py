"""Opening a PostgreSQL store and its errors (chaja.stores.postgres.connection): no
server, no pgvector and no right to create it, no rights on the schema, a closed store,
a lost connection, a URL given to open_store."""
from __future__ import annotations

import pytest

from chaja.stores.base import StoreError

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres import PostgresStore  # noqa: E402
from pg_sql import sql  # noqa: E402


def test_cannot_connect_is_a_store_error(tmp_path):
    dsn = f"postgresql://nobody@/chaja?host={tmp_path}&connect_timeout=2"
    with pytest.raises(StoreError, match="cannot connect to PostgreSQL"):
        PostgresStore(dsn)


def test_database_without_pgvector_and_no_right_to_create_it(superuser_dsn):
    pg_dsn = superuser_dsn
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = "chaja_nopriv"
    sql(pg_dsn, f"DROP DATABASE IF EXISTS {name}")
    sql(pg_dsn, f"DROP ROLE IF EXISTS {name}")
    sql(pg_dsn, f"CREATE ROLE {name} LOGIN")
    sql(pg_dsn, f"CREATE DATABASE {name} OWNER {name}")
    try:
        info = conninfo_to_dict(pg_dsn)
        info.update(dbname=name, user=name)
        with pytest.raises(StoreError, match="CREATE EXTENSION vector"):
            PostgresStore(make_conninfo(**info))
    finally:
        sql(pg_dsn, f"DROP DATABASE IF EXISTS {name}")
        sql(pg_dsn, f"DROP ROLE IF EXISTS {name}")


def test_closed_store_raises(pg_dsn, pg_schema):
    s = PostgresStore(pg_dsn, schema=pg_schema)
    s.close()
    s.close()  # closing twice is fine
    with pytest.raises(StoreError, match="closed"):
        s.fingerprints()


def test_open_store_picks_postgres_for_a_url(pg_dsn):
    stores = pytest.importorskip("chaja.stores")
    if not hasattr(stores, "open_store"):
        pytest.skip("chaja.stores.open_store is not there yet")
    assert pg_dsn.startswith(("postgresql://", "postgres://"))
    if sql(pg_dsn, "SELECT 1 FROM pg_namespace WHERE nspname = 'chaja'"):
        pytest.skip("this database already has a 'chaja' schema; the test would drop it")
    s = stores.open_store(pg_dsn)
    try:
        assert isinstance(s, PostgresStore)
    finally:
        s.close()
        sql(pg_dsn, 'DROP SCHEMA IF EXISTS "chaja" CASCADE')


def test_a_role_without_rights_on_the_schema_gets_a_store_error(superuser_dsn):
    pg_dsn = superuser_dsn
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    role = "chaja_reader_only"
    sql(pg_dsn, "CREATE EXTENSION IF NOT EXISTS vector")  # present, so the schema step is what fails
    sql(pg_dsn, f"DROP ROLE IF EXISTS {role}")
    sql(pg_dsn, f"CREATE ROLE {role} LOGIN")
    try:
        info = conninfo_to_dict(pg_dsn)
        info.update(user=role)
        with pytest.raises(StoreError, match="cannot set up the chaja schema"):
            PostgresStore(make_conninfo(**info), schema="chaja_not_allowed")
    finally:
        sql(pg_dsn, f"DROP ROLE IF EXISTS {role}")


def test_lost_connection_is_a_store_error(store, pg_dsn):
    (pid,) = store.conn.execute("SELECT pg_backend_pid()").fetchone()
    sql(pg_dsn, "SELECT pg_terminate_backend(%s)", pid)
    with pytest.raises(StoreError, match="lost the connection"):
        store.fingerprints()
