"""Vector files beside the SQLite store: the one copy of the vectors they hold (the rows'
blobs emptied), mapped instead of read, equal to what the store was given through writes
made after them, and a missing or foreign file said, never read as vectors."""
from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from chaja.documents import Chunk, ChunkRecord, Document, Section
from chaja.stores import sqlite_vectors
from chaja.stores.base import StoreError
from chaja.stores.sqlite import VECTOR_FIELDS, SqliteStore

from vectors_kept import holds, numbers

DIM = 8


def _made(seed: int, i: int, did: str) -> ChunkRecord:
    """Document ``i`` of :func:`docs` with ``seed``: its vectors drawn from the seed and ``i``."""
    v = np.random.default_rng([seed, i]).standard_normal(DIM).astype(np.float32)
    v /= np.linalg.norm(v)
    lang, text = ("ko", "en")[i % 2], f"본문 {seed} {i}"
    c = Chunk(id=f"{did}#0", doc_id=did, ordinal=0, title=did, heading_path=("절",) if i % 3 else (),
              text=text, lang=lang)
    return ChunkRecord(c, [did], [], ["본문"], v, v[::-1].copy() if i % 3 else None)


def docs(n: int, seed: int, prefix: str = "d"):
    out = []
    for i in range(n):
        r = _made(seed, i, f"{prefix}{i}")
        c = r.chunk
        out.append((Document(id=c.doc_id, title=c.doc_id, sections=[Section(c.heading_path, c.text)], lang=c.lang),
                    [r]))
    return out


def given(store: SqliteStore) -> dict[str, dict[str, tuple]]:
    """field → chunk id → (vector, language, rowid) the store was given, rebuilt from the
    documents' seeds: each chunk's text names its seed and position (see :func:`docs`)."""
    out: dict[str, dict[str, tuple]] = {"chunk": {}, "heading": {}}
    for rowid, cid, lang, text in store._db.execute("SELECT rowid, id, lang, text FROM chunks"):
        seed, i = map(int, text.split()[1:])
        chunk = _made(seed, i, cid.split("#")[0])
        out["chunk"][cid] = (chunk.vector, lang, rowid)
        if chunk.heading_vector is not None:
            out["heading"][cid] = (chunk.heading_vector, lang, rowid)
    return out


def assert_matches_rows(store: SqliteStore) -> None:
    """What the store searches equals what it was given (the two fields these documents
    fill), rows in rowid order."""
    for field, want in given(store).items():
        mat, ids, langs = store._vectors(field)
        order = sorted(want, key=lambda c: want[c][2])
        assert list(ids) == order
        assert holds(mat, np.array([want[c][0] for c in order]).reshape(len(order), DIM))
        assert list(langs) == [want[c][1] for c in order]
        assert store._matrix_rowids[field].tolist() == [want[c][2] for c in order]


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 100)
    s = SqliteStore(tmp_path / "v.chaja")
    s.put_documents(docs(300, 1))
    assert s.compact(force=True)
    yield s
    s.close()


def recorded(store: SqliteStore, field: str):
    value = store.get_meta(sqlite_vectors.record_key(field))
    return None if value is None else store.path.with_name(json.loads(value)["file"])


def held_in_rows(store: SqliteStore, column: str) -> int:
    return store._db.execute(f"SELECT count(*) FROM chunks WHERE length({column}) > 0").fetchone()[0]


def test_a_field_above_the_threshold_is_kept_once_in_its_file(store):
    assert recorded(store, "chunk").exists()
    assert recorded(store, "heading").exists()        # 200 of 300 have one
    assert held_in_rows(store, "vector") == held_in_rows(store, "heading_vector") == 0
    assert store._db.execute("SELECT count(*) FROM chunks WHERE heading_vector IS NULL").fetchone()[0] == 100
    assert sqlite_vectors.files_of(store.path) == sorted([recorded(store, "chunk"), recorded(store, "heading")])
    reader = SqliteStore(store.path)
    try:
        mat = reader._vectors("chunk")[0]
        assert not numbers(mat).flags.writeable and not numbers(mat).flags.owndata          # a view of the mapping
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


@pytest.mark.parametrize("damage", ["missing", "garbage", "another store's"])
def test_a_recorded_file_that_cannot_be_read_is_said_not_guessed(store, damage):
    """The recorded file is the one copy: missing, damaged or another store's, a search
    says so (and how to go on) instead of searching without those vectors."""
    path = recorded(store, "chunk")
    if damage == "missing":
        path.unlink()
    elif damage == "garbage":
        path.write_bytes(b"garbage")
    else:
        mat, ids, langs = store._vectors("chunk")
        sqlite_vectors._save(path, "chunk", np.zeros_like(mat), list(ids), langs, store._matrix_rowids["chunk"],
                             seq=store._keywords.base_seq, store_id="someone-else")
    fresh = SqliteStore(store.path)
    try:
        with pytest.raises(StoreError, match=rf"{path.name}.*chaja check --repair"):
            fresh.vector(np.ones(DIM, np.float32) / DIM ** 0.5, 3)
        assert fresh._vectors("heading")[0].shape[0] == 200                  # the other field is whole
        faults = fresh.check()                                              # said once, not once a chunk
        assert len(faults) == 1 and path.name in faults[0] and "300 chunks" in faults[0]
        done = fresh.repair(lambda text: text.split())
        assert sum(line.startswith("removed document") for line in done) == 300
        assert any(line.startswith("forgot the chunk vector file") for line in done)
        assert fresh.check() == [] and fresh.get_meta(sqlite_vectors.record_key("chunk")) is None
        fresh.put_documents(docs(3, 11, prefix="again"))                    # indexed again: searched
        assert fresh.vector(docs(3, 11, prefix="again")[1][1][0].vector, 1)[0].chunk_id == "again1#0"
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


def test_mapped_ids_extended_by_appended_rows_read_as_one_list():
    """A write's new rows extend a mapped file's ids without decoding them into a list: every
    way of reading them (an index, negative too, a slice, rows taken on both sides of the
    join, iteration, the id map) gives what the list would, and the buffer is shared."""
    from chaja.stores.id_rows import IdRows
    names = ["d0#0", "문서#1", "", "x" * 300]
    encoded = [n.encode("utf-8") for n in names]
    offsets = np.concatenate([[0], np.cumsum([len(b) for b in encoded])]).astype(np.int64)
    base = sqlite_vectors.ChunkIds(np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets)
    grown = base.extended(["new#0"]).extended(["새#1", "n#2"])
    whole = names + ["new#0", "새#1", "n#2"]
    assert len(grown) == len(whole) and list(grown) == whole and len(base) == len(names)
    assert [grown[i] for i in range(-len(whole), len(whole))] == whole + whole
    assert grown[2:6] == whole[2:6] and grown[::-1] == whole[::-1]
    rows = [6, 0, 4, 3, 5, 1]
    assert grown.take(np.array(rows)) == [whole[i] for i in rows] == sqlite_vectors.ids_at(grown, rows)
    assert grown.take(np.array([1, 0])) == [whole[1], whole[0]] and grown.take(np.array([], np.int64)) == []
    assert grown._raw is base._raw
    found = IdRows(grown)
    assert [found.get(c) for c in whole] == list(range(len(whole))) and found.get("missing") < 0


def test_row_languages_answer_as_a_column_of_names_would():
    """A mapped file's languages stay one-byte codes: equality, rows, the whole column and
    iteration give what the names would, and a file written again from them renames only
    the names still in use."""
    names = np.array(["", "en", "ko", "zh"])
    codes = np.array([2, 1, 2, 0, 2, 1], dtype=np.uint8)
    langs = sqlite_vectors.RowLanguages(codes, names)
    column = names[codes]
    assert len(langs) == 6 and langs.shape == (6,)
    for lang in ("ko", "en", "", "zh", "fr"):
        np.testing.assert_array_equal(langs == lang, column == lang)
    np.testing.assert_array_equal(langs[np.array([5, 0])], column[[5, 0]])
    assert langs[3] == "" and list(langs) == column.tolist()
    np.testing.assert_array_equal(np.asarray(langs), column)
    np.testing.assert_array_equal(np.concatenate([langs, np.array(["ko"])]), np.append(column, "ko"))
    kept, renamed = sqlite_vectors._language_codes(langs)
    assert kept == ["", "en", "ko"] and [kept[i] for i in renamed] == column.tolist()
    plain_names, plain_codes = sqlite_vectors._language_codes(column)     # as from a column of names
    assert plain_names == kept and plain_codes.tolist() == renamed.tolist()


def test_columns_extended_by_appended_rows_keep_the_files_kinds():
    """A write's new rows extend a file's languages as codes (a name new to it added) and its
    ids as a tail; a plain column is joined; nothing new leaves a column as it is."""
    names = np.array(["", "en", "ko"])
    langs = sqlite_vectors.RowLanguages(np.array([2, 1, 2], dtype=np.uint8), names)
    grown = sqlite_vectors.extended(langs, ["ko", "und", "en"])
    assert isinstance(grown, sqlite_vectors.RowLanguages) and grown.codes[:3].tolist() == [2, 1, 2]
    assert list(grown) == ["ko", "en", "ko", "ko", "und", "en"]
    np.testing.assert_array_equal(grown == "und", [False] * 4 + [True, False])
    plain = sqlite_vectors.extended(np.array(["ko", "en"]), ["und"])
    assert plain.tolist() == ["ko", "en", "und"]                            # (a wider name is not cut)
    assert sqlite_vectors.extended(["a#0"], ["b#0"]) == ["a#0", "b#0"]
    assert sqlite_vectors.extended(langs, []) is langs


def _file(store: SqliteStore, field: str):
    got = sqlite_vectors.read_recorded(store.path, field, store.get_meta(sqlite_vectors.record_key(field)),
                                       store_id=store._keywords.store_id)
    mat, ids, langs, rowids, _ = got
    return mat, list(ids), list(langs), np.array(rowids)


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
    for field, want in given(s).items():
        order = sorted(want, key=lambda c: want[c][2])
        mat, ids, langs, rowids = _file(s, field)
        assert holds(mat, np.array([want[c][0] for c in order])) and ids == order
        assert rowids.tolist() == [want[c][2] for c in order] and langs == [want[c][1] for c in order]
    assert len(_file(s, "chunk")[1]) == 299 + 20 * write_between
    s.close()


def test_one_pass_reads_each_field_as_its_rows_hold_it(tmp_path):
    """Several columns read in one pass (some rows without a section-name vector, one
    document deleted, some rows holding their vectors as blobs as a store written before
    the spool does, the rest in the spool) give each column exactly its own non-null rows,
    in rowid order."""
    with SqliteStore(tmp_path / "r.chaja") as s:
        s.put_documents(docs(300, 3))
        s.delete_document("d5")
        want = given(s)
        for field, column in (("chunk", "vector"), ("heading", "heading_vector")):
            for cid, (v, _, rowid) in want[field].items():
                if rowid % 7 == 0:
                    s._db.execute(f"UPDATE chunks SET {column} = ? WHERE rowid = ?", (v.tobytes(), rowid))
        got = s._read_matrices({"vector": DIM, "heading_vector": DIM})
        for field, column in (("chunk", "vector"), ("heading", "heading_vector")):
            (mat, ids, langs), rowids = got[column]
            order = sorted(want[field], key=lambda c: want[field][c][2])
            assert ids == order and rowids.tolist() == [want[field][c][2] for c in order]
            assert np.array_equal(mat, np.array([want[field][c][0] for c in order]))
            assert list(langs) == [want[field][c][1] for c in order]
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
        return {f: (p.name, p.stat().st_ino, p.stat().st_mtime_ns)
                for f in ("chunk", "heading") for p in [recorded(store, f)]}

    before = stamps()
    assert store.compact(force=True)
    assert stamps() == before
    assert_matches_rows(store)
    store.put_documents(docs(5, 9, prefix="new"))
    assert store.compact(force=True)
    after = stamps()
    assert all(after[f] != before[f] for f in after)
    assert not any(store.path.with_name(name).exists() for name, *_ in before.values())   # replaced: removed
    assert held_in_rows(store, "vector") == 0
    assert_matches_rows(store)
    assert store._vectors("chunk")[0].shape[0] == 305


def as_before_the_spool(s: SqliteStore, path) -> None:
    """Every spooled vector written into its row's blob and the spools dropped: the rows as a
    store written before schema 8 holds them (its new rows' vectors in the rows)."""
    from chaja.stores import sqlite_spool

    for field, column in VECTOR_FIELDS.items():
        key = sqlite_spool.record_key(field)
        spool = sqlite_spool.read(path, field, s.get_meta(key), s._dim(field))
        rowids, vectors = spool.latest()
        s._db.executemany(f"UPDATE chunks SET {column} = ? WHERE rowid = ?",
                          [(np.asarray(v, np.float32).tobytes(), int(r)) for r, v in zip(rowids, vectors)])
        if s.get_meta(key):
            path.with_name(sqlite_spool.recorded_file(s.get_meta(key))).unlink()
        s._db.execute("DELETE FROM meta WHERE key = ?", (key,))
    s._spools.clear()


@pytest.mark.parametrize("incremental", [True, False])
def test_the_pages_the_vectors_leave_are_given_back(tmp_path, monkeypatch, incremental):
    """A chunk's four vectors (7 KB) fill overflow pages in a store written before the spool;
    a compaction that moves that many bytes into the files rewrites the store (rows that shrank leave their pages part empty),
    with incremental vacuuming turned on where an older file lacked it."""
    from chaja.stores import sqlite_space

    monkeypatch.setattr(sqlite_space, "FREE_BYTES", 1 << 20)
    path = tmp_path / "big.chaja"
    if not incremental:                      # a file made before stores turned it on
        sqlite3.connect(path).execute("PRAGMA journal_mode=WAL").close()
    rng = np.random.default_rng(5)
    items = []
    def unit(n):
        v = rng.standard_normal(n).astype(np.float32)
        return v / np.linalg.norm(v)

    for i in range(1500):
        c = Chunk(id=f"b{i}#0", doc_id=f"b{i}", ordinal=0, title="t", heading_path=("절",), text="본문", lang="ko")
        items.append((Document(id=f"b{i}", title="t", sections=[Section(("절",), "본문")], lang="ko"),
                      [ChunkRecord(c, ["t"], ["절"], ["본문"], unit(384), unit(384), unit(512), unit(512))]))
    with SqliteStore(path) as s:
        s.put_documents(items)
        as_before_the_spool(s, path)
        s._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        full = path.stat().st_size
        assert s.compact(force=True)
        freed = s.reclaim_space()
        assert freed < 0.05 * full                    # given back already
        s._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert s._db.execute("PRAGMA auto_vacuum").fetchone() == (2,)
        assert path.stat().st_size < 0.2 * full      # 7 KB of each chunk's ~8 KB were its vectors
        assert s.vector(items[7][1][0].vector, 1)[0].chunk_id == "b7#0"
        assert s.check() == []


def test_a_file_of_symmetric_codes_written_before_offsets_reads_and_grows(store):
    """A vector file written before the codes kept an offset per dimension holds codes and
    scales alone (``c = round(v / s)``): it is read as offset 0, searched as it was, and
    rows added later join it, widening it to their range where they need it."""
    from chaja.stores import array_file
    from chaja.stores.quantized import LEVELS

    path = recorded(store, "chunk")
    arrays, meta = array_file.load(path, sqlite_vectors.MAGIC)
    want = given(store)["chunk"]
    ids = [str(bytes(arrays["ids"][a:b]), "utf-8") for a, b in zip(arrays["id_offsets"][:-1], arrays["id_offsets"][1:])]
    floats = np.array([want[c][0] for c in ids], np.float32)
    scales = (np.abs(floats).max(axis=0) / LEVELS).astype(np.float32)
    old = {k: np.array(v) for k, v in arrays.items() if k not in ("codes", "scales", "offsets")}
    del arrays
    array_file.save(path, sqlite_vectors.MAGIC, {"codes": np.rint(floats / scales).astype(np.int8),
                                                 "scales": scales, **old}, meta)
    reader = SqliteStore(store.path)
    try:
        mat = reader._vectors("chunk")[0]
        assert np.array_equal(mat.offsets, np.zeros(DIM, np.float32)) and np.array_equal(mat.scales, scales)
        assert holds(mat, floats)
        q = docs(1, 1)[0][1][0].vector
        assert reader.vector(q, 1)[0].chunk_id == "d0#0"
    finally:
        reader.close()
    store.put_documents(docs(20, 9, prefix="late"))
    store.compact(force=True)
    assert_matches_rows(store)
    assert store.vector(docs(3, 9, prefix="late")[2][1][0].vector, 1)[0].chunk_id == "late2#0"


def test_the_chunk_file_keeps_its_rows_sample_digests_and_a_write_adds_its_own(store, monkeypatch):
    """The chunk field's file keeps each row's sample digest, the one md5 of its id gives;
    a later write's rows get theirs computed, and the statistics' samples read them from the
    file rather than hashing every id; a file written without them reads as before."""
    from chaja.stores import base
    from chaja.stores.array_file import load

    arrays, _ = load(recorded(store, "chunk"), sqlite_vectors.MAGIC)
    ids = store._vectors("chunk")[1]
    assert np.array_equal(arrays["digests"], base.sample_digests(list(ids)))
    assert "digests" not in load(recorded(store, "heading"), sqlite_vectors.MAGIC)[0]
    store.put_documents(docs(3, 2, prefix="new"))
    reader = SqliteStore(store.path)
    try:
        hashed = []
        real = base.sample_digests
        monkeypatch.setattr(sqlite_vectors, "sample_digests", lambda got: hashed.append(len(got)) or real(got))
        ids = reader._vectors("chunk")[1]
        assert isinstance(ids, sqlite_vectors.ChunkIds) and len(ids) == 303
        assert np.array_equal(reader._sample_digests("chunk"), real(list(ids)))
        assert hashed == [3]                         # the written rows alone
        heading_ids = reader._vectors("heading")[1]
        assert np.array_equal(reader._sample_digests("heading"), real(list(heading_ids)))
    finally:
        reader.close()
    old = sqlite_vectors.ChunkIds(arrays["ids"], arrays["id_offsets"])          # a file that keeps none
    assert np.array_equal(old.extended(["z#0"]).sample_digests(), real(list(old) + ["z#0"]))


def test_a_bulk_load_gives_its_compaction_the_digests_its_statistics_took(tmp_path, monkeypatch):
    """A store larger than the background's sample has every id hashed by its statistics,
    before the first compaction: the compaction keeps those, not a second pass."""
    from chaja import store_statistics
    from chaja.search import background
    from chaja.stores import base

    monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 100)
    monkeypatch.setattr(background, "SAMPLE", 50)
    s = SqliteStore(tmp_path / "b.chaja")
    try:
        s.put_documents(docs(200, 3))
        store_statistics.record_vector_statistics(s)            # the samples: every id hashed once
        hashed = []
        real = base.sample_digests
        monkeypatch.setattr(sqlite_vectors, "sample_digests", lambda got: hashed.append(len(got)) or real(got))
        assert s.compact(force=True)
        assert hashed == []
        from chaja.stores.array_file import load
        arrays, _ = load(recorded(s, "chunk"), sqlite_vectors.MAGIC)
        assert np.array_equal(arrays["digests"], real(list(s._vectors("chunk")[1])))
    finally:
        s.close()
