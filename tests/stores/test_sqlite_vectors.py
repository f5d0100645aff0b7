"""Vector files beside the SQLite store: mapped instead of read from the rows, equal to
what the rows hold through writes made after them, and never used when they do not
match the store."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.documents import Chunk, ChunkRecord, Document, Section
from chaja.stores import sqlite_vectors
from chaja.stores.sqlite import VECTOR_FIELDS, SqliteStore

DIM = 8


def docs(n: int, seed: int, prefix: str = "d"):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        v = rng.standard_normal(DIM).astype(np.float32)
        v /= np.linalg.norm(v)
        did, lang = f"{prefix}{i}", ("ko", "en")[i % 2]
        c = Chunk(id=f"{did}#0", doc_id=did, ordinal=0, title=did, heading_path=("절",) if i % 3 else (),
                  text="본문", lang=lang)
        out.append((Document(id=did, title=did, sections=[Section(c.heading_path, "본문")], lang=lang),
                    [ChunkRecord(c, [did], [], ["본문"], v, v[::-1].copy() if i % 3 else None)]))
    return out


def assert_matches_rows(store: SqliteStore) -> None:
    """What the store searches equals what its rows hold (the two fields these documents fill)."""
    for field in ("chunk", "heading"):
        (want, want_ids, want_langs), want_rowids = SqliteStore._read_matrix(store, VECTOR_FIELDS[field], DIM)
        mat, ids, langs = store._vectors(field)
        assert np.array_equal(mat, want) and list(ids) == list(want_ids)
        assert list(langs) == list(want_langs) and np.array_equal(store._matrix_rowids[field], want_rowids)


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 100)
    s = SqliteStore(tmp_path / "v.chaja")
    s.put_documents(docs(300, 1))
    assert s.compact(force=True)
    yield s
    s.close()


def test_a_field_above_the_threshold_is_mapped_from_its_file(store):
    assert sqlite_vectors.path_of(store.path, "chunk").exists()
    assert sqlite_vectors.path_of(store.path, "heading").exists()        # 200 of 300 have one
    reader = SqliteStore(store.path)
    try:
        mat = reader._vectors("chunk")[0]
        assert not mat.flags.writeable and not mat.flags.owndata           # a view of the mapping
        assert_matches_rows(reader)
    finally:
        reader.close()


def test_rows_written_after_the_file_are_read_from_the_store(store):
    reader = SqliteStore(store.path)
    try:
        reader.vector(np.ones(DIM, np.float32) / DIM ** 0.5, 3)             # file mapped
        store.delete_document("d5")
        store.put_documents(docs(4, 2, prefix="late"))
        store.put_documents(docs(1, 3, prefix="d"))                         # d0 replaced
        for s in (reader, store):
            q = docs(1, 2, prefix="late")[0][1][0].vector
            assert s.vector(q, 1)[0].chunk_id == "late0#0"
            assert "d5#0" not in {h.chunk_id for h in s.vector(q, 400)}
            assert_matches_rows(s)
    finally:
        reader.close()


def test_a_file_of_another_store_or_log_entry_is_not_used(store, tmp_path):
    path = sqlite_vectors.path_of(store.path, "chunk")
    mat, ids, langs = store._vectors("chunk")
    sqlite_vectors.write(store.path, "chunk", np.zeros_like(mat), list(ids), langs, store._matrix_rowids["chunk"],
                         seq=store._keywords.base_seq, store_id="someone-else")
    fresh = SqliteStore(store.path)
    try:
        assert_matches_rows(fresh)                                          # read from the rows instead
        path.write_bytes(b"garbage")
        fresh._matrix = {}
        assert_matches_rows(fresh)
    finally:
        fresh.close()


@pytest.mark.parametrize("mapped", [True, False])
def test_a_reader_applies_another_connections_writes_row_by_row(tmp_path, monkeypatch, mapped):
    """A reader that has its matrices keeps them through other connections' writes and
    applies only the rows the change log names; after each write (add, replace, delete,
    a batch, a compaction) it holds exactly what its rows hold."""
    monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 100 if mapped else 10**9)
    writer = SqliteStore(tmp_path / "w.chaja")
    writer.put_documents(docs(200, 3))
    writer.compact(force=True)
    reader = SqliteStore(writer.path)
    try:
        assert_matches_rows(reader)
        read_rows = []
        original = reader._read_matrix
        monkeypatch.setattr(reader, "_read_matrix", lambda *a: read_rows.append(a) or original(*a))
        steps = [
            lambda: writer.put_documents(docs(5, 4, prefix="new")),               # new documents
            lambda: writer.put_documents(docs(3, 5)),                             # d0..d2 replaced
            lambda: writer.delete_document("d7"),
            lambda: writer.delete_document("new1"),
            lambda: writer.put_documents(docs(40, 6, prefix="more")),
        ]
        for step in steps:
            step()
            assert_matches_rows(reader)
        assert read_rows == []          # nothing was read whole: only the rows written since
        writer.compact(force=True)      # a new base: read afresh, then equal again
        assert_matches_rows(reader)
    finally:
        reader.close()
        writer.close()


def test_mapped_ids_are_taken_by_row_as_they_are_read_one_by_one():
    names = ["d0#0", "문서#1", "", "x" * 300, "é#2"]
    encoded = [n.encode("utf-8") for n in names]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded])]).astype(np.int64)
    ids = sqlite_vectors.ChunkIds(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)
    rows = [4, 1, 1, 0, 3, 2]
    assert ids.take(np.array(rows)) == [ids[i] for i in rows] == [names[i] for i in rows]
    assert ids.take(np.array([], dtype=np.int64)) == []
    assert sqlite_vectors.ids_at(names, rows) == sqlite_vectors.ids_at(ids, rows)


def _file(store: SqliteStore, field: str):
    got = sqlite_vectors.read(store.path, field, seq=store._keywords.base_seq, store_id=store._keywords.store_id)
    mat, ids, langs, rowids = got
    return np.array(mat), list(ids), list(langs), np.array(rowids)


@pytest.mark.parametrize("write_between", [False, True])
def test_a_compaction_writes_the_matrices_it_holds_as_the_rows_would(tmp_path, monkeypatch, write_between):
    """A compaction takes the matrices in memory when they hold every row it covers (after a
    bulk load's statistics), and reads the rows when another connection has written since:
    either way the files hold what the rows hold."""
    monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 100)
    s = SqliteStore(tmp_path / "c.chaja")
    s.put_documents(docs(300, 7))
    s.delete_document("d4")
    for field in ("chunk", "heading"):
        s._vectors(field)                                      # in memory, as the statistics leave them
    if write_between:                                          # another connection writes after that
        with SqliteStore(s.path) as other:
            other.put_documents(docs(20, 8, prefix="other"))
    read = []
    original = s._read_matrix
    monkeypatch.setattr(s, "_read_matrix", lambda *a: read.append(a[0]) or original(*a))
    assert s.compact(force=True, graphs=False)
    assert ("vector" in read) == write_between
    for field in ("chunk", "heading"):
        (want, want_ids, want_langs), want_rowids = original(VECTOR_FIELDS[field], DIM)
        mat, ids, langs, rowids = _file(s, field)
        assert np.array_equal(mat, want) and ids == list(want_ids) and np.array_equal(rowids, want_rowids)
        assert langs == list(want_langs)
    assert len(_file(s, "chunk")[1]) == 299 + 20 * write_between
    s.close()


def _rows_by_sql(store: SqliteStore, column: str):
    """A column's non-null vectors read straight from SQL, one row at a time: the reference."""
    rows = store._db.execute(f"SELECT rowid, id, lang, {column} FROM chunks WHERE {column} IS NOT NULL"
                             " ORDER BY rowid").fetchall()
    mat = np.array([np.frombuffer(r[3], np.float32) for r in rows]).reshape(len(rows), DIM)
    return mat, [r[1] for r in rows], [r[2] or "" for r in rows], [r[0] for r in rows]


def test_one_pass_reads_each_field_as_its_rows_hold_it(tmp_path):
    """Several columns read in one pass (some rows without a section-name vector, one
    document deleted) give each column exactly its own non-null rows, in rowid order."""
    with SqliteStore(tmp_path / "r.chaja") as s:
        s.put_documents(docs(300, 3))
        s.delete_document("d5")
        got = s._read_matrices({"vector": DIM, "heading_vector": DIM})
        for column in ("vector", "heading_vector"):
            (mat, ids, langs), rowids = got[column]
            want, want_ids, want_langs, want_rowids = _rows_by_sql(s, column)
            assert np.array_equal(mat, want) and ids == want_ids
            assert list(langs) == want_langs and rowids.tolist() == want_rowids
        assert got["heading_vector"][0][0].shape[0] < got["vector"][0][0].shape[0]


def test_a_store_without_files_reads_every_field_in_one_pass(tmp_path, monkeypatch):
    """Before its first compaction no field has a file: the first field asked for brings
    every field in with it (the statistics of a bulk load read all four), in one pass."""
    with SqliteStore(tmp_path / "p.chaja") as s:
        s.put_documents(docs(300, 4))
        passes = []
        original = s._read_matrices
        monkeypatch.setattr(s, "_read_matrices", lambda columns: passes.append(sorted(columns)) or original(columns))
        s._vectors("heading")
        s._vectors("chunk")
        s._vectors("aligned")
        assert passes == [sorted(VECTOR_FIELDS.values())]
        assert_matches_rows(s)


def test_a_compaction_with_nothing_new_writes_no_vector_file_again(store):
    """A forced compaction over the rows the files already cover (``chaja optimize`` after a
    bulk load) leaves the files as they are; one after new rows writes them anew."""
    def stamps():
        return {f: (p.stat().st_ino, p.stat().st_mtime_ns)
                for f in ("chunk", "heading") for p in [sqlite_vectors.path_of(store.path, f)]}

    before = stamps()
    assert store.compact(force=True)
    assert stamps() == before
    assert_matches_rows(store)
    store.put_documents(docs(5, 9, prefix="new"))
    assert store.compact(force=True)
    after = stamps()
    assert all(after[f] != before[f] for f in after)
    assert_matches_rows(store)
    assert store._vectors("chunk")[0].shape[0] == 305
