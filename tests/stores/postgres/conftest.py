"""Fixtures for the PostgreSQL store's tests: a store that takes the HNSW path, and the
server's URL for tests that need a superuser (the server itself, and ``pg_dsn`` and
``pg_schema``, come from the top-level conftest)."""
from __future__ import annotations

import pytest

from pg_sql import sql


@pytest.fixture
def store(pg_dsn, pg_schema):
    from chaja.stores.postgres import PostgresStore

    # exact_below=0: these tests exercise the HNSW path, which small stores skip
    s = PostgresStore(pg_dsn, schema=pg_schema, exact_below=0)
    yield s
    s.close()


@pytest.fixture
def superuser_dsn(pg_dsn):
    """The server's URL, for tests that create roles or databases."""
    (is_super,) = sql(pg_dsn, "SELECT rolsuper FROM pg_roles WHERE rolname = current_user")[0]
    if not is_super:
        pytest.skip("needs a superuser connection (CHAJA_TEST_PG_DSN names a plain role)")
    return pg_dsn
