"""Fixtures for the store tests: a real PostgreSQL 16 with pgvector, started once per
test session, and builders for documents, chunk records and unit vectors.

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

import numpy as np
import pytest

from chaja.analysis import bigram_terms
from chaja.documents import Chunk, ChunkRecord, Document, Section

DIM = 8


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


# ---- builders ---------------------------------------------------------------

def unit(seed: int | str, dim: int = DIM) -> np.ndarray:
    """A reproducible random unit vector."""
    if isinstance(seed, str):
        seed = int.from_bytes(seed.encode("utf-8")[:8].ljust(8, b"\0"), "little") % (2**32)
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


def make_doc(doc_id: str, title: str, bodies: list[str], *, headings: list[tuple[str, ...]] | None = None,
             lang: str = "ko", source: str = "test", doc_type: str = "note", date: str | None = "2024-05-01",
             vectors: list[np.ndarray] | None = None) -> tuple[Document, list[ChunkRecord]]:
    """One document whose chunks are ``bodies``, with bigram terms and unit vectors."""
    headings = headings or [()] * len(bodies)
    doc = Document(id=doc_id, title=title, lang=lang, source=source, doc_type=doc_type, date=date,
                   sections=[Section(h, b) for h, b in zip(headings, bodies)], path=f"{doc_id}.txt")
    records = []
    for i, (h, body) in enumerate(zip(headings, bodies)):
        chunk = Chunk(id=f"{doc_id}#{i}", doc_id=doc_id, ordinal=i, title=title, heading_path=tuple(h),
                      text=body, lang=lang, source=source, doc_type=doc_type, date=date)
        vec = vectors[i] if vectors is not None else unit(f"{doc_id}#{i}")
        records.append(ChunkRecord(chunk=chunk, title_terms=bigram_terms(title),
                                   heading_terms=bigram_terms(" ".join(h)),
                                   body_terms=bigram_terms(body), vector=vec))
    return doc, records


@pytest.fixture
def build():
    """The builders above, for test modules (conftest is not imported by name)."""
    import types

    return types.SimpleNamespace(DIM=DIM, unit=unit, make_doc=make_doc)
