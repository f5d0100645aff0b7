"""A store written by schema 5 (every vector in its row, a copy of each large field beside
it; ``tests/fixtures/stores/schema5-store.tar.gz``, written by that code with
``make_schema5_store.py``) opens and searches as it did, and its next compaction moves
its vectors into files without encoding anything again: every vector the old code was
given is still there, once."""
from __future__ import annotations

import importlib.util
import json
import sqlite3
import tarfile
from pathlib import Path

import numpy as np
import pytest

from chaja.stores import sqlite_vectors
from chaja.stores.sqlite import SCHEMA_VERSION, VECTOR_FIELDS, SqliteStore

from vectors_kept import holds

FIXTURES = Path(__file__).parent.parent / "fixtures" / "stores"
_spec = importlib.util.spec_from_file_location("make_schema5_store", FIXTURES / "make_schema5_store.py")
made = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(made)


@pytest.fixture
def old_store(tmp_path) -> Path:
    with tarfile.open(FIXTURES / "schema5-store.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / "old.chaja"


def given() -> dict[str, dict[str, np.ndarray]]:
    """field → chunk id → the vector the schema-5 code was given."""
    out: dict[str, dict[str, np.ndarray]] = {f: {} for f in VECTOR_FIELDS}
    for i in range(made.BEFORE + made.AFTER):
        if f"d{i}" == made.DELETED:
            continue
        for field, v in zip(VECTOR_FIELDS, made.vectors_of(i)):
            if v is not None:
                out[field][f"d{i}#0"] = v
    return out


def assert_holds_what_it_was_given(store: SqliteStore) -> None:
    for field, want in given().items():
        mat, ids, _ = store._vectors(field)
        assert sorted(ids) == sorted(want), field
        row = {c: i for i, c in enumerate(ids)}
        assert all(holds(mat, want[c], row[c]) for c in want), field


def in_rows(path: Path, column: str) -> int:
    with sqlite3.connect(path) as db:
        return db.execute(f"SELECT count(*) FROM chunks WHERE length({column}) > 0").fetchone()[0]


def test_a_schema_5_store_searches_as_it_did_before_any_write(old_store):
    with sqlite3.connect(old_store) as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == ("5",)
    with SqliteStore(old_store) as store:
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert store.vectors_to_move()
        assert_holds_what_it_was_given(store)
        q = made.vectors_of(42)[0]
        assert store.vector(q, 1)[0].chunk_id == "d42#0"
        assert store.check() == []


def test_its_next_compaction_moves_the_vectors_into_files_once(old_store):
    rows_before = {c: in_rows(old_store, c) for c in VECTOR_FIELDS.values()}
    with SqliteStore(old_store) as store:
        assert store.compact(force=True)
        assert not store.vectors_to_move()
        assert_holds_what_it_was_given(store)
        assert store.check() == []
        # the two fields above the file minimum are in their files, the rows' copies gone
        for field in ("chunk", "aligned"):
            assert store.get_meta(sqlite_vectors.record_key(field)) is not None
            assert in_rows(old_store, VECTOR_FIELDS[field]) == 0
            assert not sqlite_vectors.copy_path(old_store, field).exists()
        # the section-name fields (820 vectors each) stay in their rows
        for field in ("heading", "aligned_heading"):
            assert store.get_meta(sqlite_vectors.record_key(field)) is None
            assert in_rows(old_store, VECTOR_FIELDS[field]) == rows_before[VECTOR_FIELDS[field]] == 819
        store.reclaim_space()      # (8-d vectors sit inside their rows: no page to give back)
        store.close()
    with SqliteStore(old_store) as store:        # a fresh open: the files, not any memory
        assert_holds_what_it_was_given(store)
        assert store.check() == []


def test_writes_after_the_move_join_the_files_at_the_next_compaction(old_store):
    with SqliteStore(old_store) as store:
        store.compact(force=True)
        store.put_documents([made.document(i) for i in range(2000, 2010)])
        store.delete_document("d3")
        # (new rows keep their vectors in the field's spool, not in their rows: sqlite_spool)
        assert in_rows(old_store, "vector") == 0 and store.get_meta("spool.chunk")
        q = made.vectors_of(2004)[0]
        assert store.vector(q, 1)[0].chunk_id == "d2004#0"
        assert store.compact(force=True)
        assert in_rows(old_store, "vector") == 0 and store.get_meta("spool.chunk") is None
        # the chunk spool folded into its file and removed; fields too small for a file keep theirs
        recorded = {json.loads(store.get_meta(f"spool.{f}"))["file"] for f in VECTOR_FIELDS
                    if store.get_meta(f"spool.{f}")}
        assert {p.name for p in old_store.parent.glob("old.chaja-*.spool")} == recorded
        assert not any(name.startswith("old.chaja-chunk.") for name in recorded)
        ids = set(store._vectors("chunk")[1])
        assert {f"d{i}#0" for i in range(2000, 2010)} <= ids and "d3#0" not in ids
        assert store.vector(q, 1)[0].chunk_id == "d2004#0"
        assert store.check() == []
