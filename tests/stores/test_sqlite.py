"""SQLite-specific behaviour (the shared contract lives in test_contract.py)."""
import numpy as np
import pytest

from chaja.analysis import bigram_terms
from chaja.documents import Chunk, ChunkRecord, Document, Section
from chaja.stores.base import StoreError
from chaja.stores.sqlite import SCHEMA_VERSION, SqliteStore, fts_query


def test_fts_query_quotes_every_term():
    assert fts_query(["a", 'b"c', "a"]) == '"a" OR "b""c"'
    assert fts_query([], None) is None
    assert fts_query(["x"], "title") == '{title} : ("x")'


def put(store, doc_id, title, body, vec):
    doc = Document(id=doc_id, title=title, sections=[Section((), body)], lang="ko")
    c = Chunk(id=f"{doc_id}#0", doc_id=doc_id, ordinal=0, title=title, heading_path=(), text=body, lang="ko")
    store.put_document(doc, [ChunkRecord(c, bigram_terms(title), [], bigram_terms(body), vec)])


def test_bigram_terms_match_exactly_not_by_prefix(tmp_path):
    with SqliteStore(tmp_path / "s.chaja") as s:
        v = np.eye(4, dtype=np.float32)
        put(s, "a", "소각결정", "주식 소각", v[0])
        put(s, "b", "소각", "소각", v[1])
        put(s, "c", "React", "react18 ㅋㅋ", v[2])
        assert {h.chunk_id for h in s.keyword(["소각"], 10)} == {"a#0", "b#0"}
        assert {h.chunk_id for h in s.keyword(["각결"], 10)} == {"a#0"}
        assert s.keyword(["react"], 10)[0].chunk_id == "c#0"
        assert s.keyword(["react1"], 10) == []   # no prefix matching
        assert s.keyword(bigram_terms("ㅋㅋ"), 10)[0].chunk_id == "c#0"
        assert s.chunk_terms(["a#0"])["a#0"] == {"소각", "각결", "결정", "주식"}


def test_vector_search_is_exact_and_cached_until_a_write(tmp_path):
    with SqliteStore(tmp_path / "s.chaja") as s:
        rng = np.random.default_rng(0)
        vecs = rng.normal(size=(30, 8)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        for i, v in enumerate(vecs):
            put(s, f"d{i:02d}", f"문서{i}", "본문", v)
        q = vecs[7]
        expected = [f"d{i:02d}#0" for i in np.argsort(-(vecs @ q))[:5]]
        assert [h.chunk_id for h in s.vector(q, 5)] == expected
        s.delete_document("d07")
        assert s.vector(q, 1)[0].chunk_id != "d07#0"


def as_older_schema(path, doc, records, script: str) -> None:
    """Write one document with today's store, then run ``script`` to take the file back."""
    import sqlite3

    with SqliteStore(path) as s:
        s.put_document(doc, records)
    db = sqlite3.connect(path)
    db.executescript(script)
    db.close()


def test_a_schema_1_file_gains_the_heading_column_and_still_searches(tmp_path, build):
    """A file written before heading vectors: same tables, no heading_vector column."""
    path, d, r = tmp_path / "old.chaja", *build.make_doc("d", "제목", ["본문"], headings=[("개요",)])
    as_older_schema(path, d, r, """
        CREATE TABLE chunks_v1 (
            rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
            doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL, title TEXT NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL,
            lang TEXT, source TEXT, doc_type TEXT, date TEXT, vector BLOB NOT NULL);
        INSERT INTO chunks_v1 SELECT rowid, id, doc_id, ordinal, title, heading, text, lang, source,
            doc_type, date, vector FROM chunks;
        DROP TABLE chunks; ALTER TABLE chunks_v1 RENAME TO chunks;
        UPDATE meta SET value = '1' WHERE key = 'schema_version';
    """)
    with SqliteStore(path) as s:
        assert s.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert [h.chunk_id for h in s.vector(r[0].vector, 3)] == ["d#0"]
        assert s.vector(r[0].vector, 3, field="heading") == []
        r[0].heading_vector = build.unit(4)
        s.put_document(d, r)
        assert [h.chunk_id for h in s.vector(build.unit(4), 3, field="heading")] == ["d#0"]


def test_a_schema_2_file_gains_the_aligned_columns(tmp_path, build):
    """A file written before aligned vectors searches as before and takes them from then on."""
    import numpy as np

    path, d, r = tmp_path / "old.chaja", *build.make_doc("d", "제목", ["본문"], headings=[("개요",)])
    as_older_schema(path, d, r, """
        ALTER TABLE chunks DROP COLUMN aligned_vector;
        ALTER TABLE chunks DROP COLUMN aligned_heading_vector;
        UPDATE meta SET value = '2' WHERE key = 'schema_version';
    """)
    with SqliteStore(path) as s:
        assert s.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert [h.chunk_id for h in s.vector(r[0].vector, 3)] == ["d#0"]
        assert s.vector(np.ones(12, np.float32), 3, field="aligned") == []
        r[0].aligned_vector = np.eye(12, dtype=np.float32)[3]
        s.put_document(d, r)
        assert [h.chunk_id for h in s.vector(np.eye(12, dtype=np.float32)[3], 3, field="aligned")] == ["d#0"]
        assert s.get_meta("aligned_dim") == "12"


def test_a_schema_4_file_gains_the_location_column(tmp_path, build):
    """A file written before chunks kept their location reads None for them and keeps one from then on."""
    from chaja.documents import Location

    path, d, r = tmp_path / "old.chaja", *build.make_doc("d", "제목", ["본문"])
    as_older_schema(path, d, r, """
        ALTER TABLE chunks DROP COLUMN location;
        ALTER TABLE staged_chunks DROP COLUMN location;
        UPDATE meta SET value = '4' WHERE key = 'schema_version';
    """)
    with SqliteStore(path) as s:
        assert s.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert s.chunks(["d#0"])["d#0"].location is None
        assert [h.chunk_id for h in s.vector(r[0].vector, 3)] == ["d#0"]
        r[0].chunk.location = Location("page", 7, 7)
        s.put_document(d, r)
        assert s.chunks(["d#0"])["d#0"].location.label == "p. 7"


def test_a_batch_replaces_stored_documents_and_its_own_repeats(tmp_path):
    def doc(doc_id, body):
        d = Document(id=doc_id, title=doc_id, sections=[Section((), body)], lang="ko")
        c = Chunk(id=f"{doc_id}#0", doc_id=doc_id, ordinal=0, title=doc_id, heading_path=(), text=body, lang="ko")
        return d, [ChunkRecord(c, [doc_id], [], bigram_terms(body), np.ones(4, np.float32) / 2)]

    with SqliteStore(tmp_path / "s.chaja") as s:
        s.put_documents([doc("a", "처음"), doc("b", "처음")])
        s.put_documents([doc("a", "두번째"), doc("c", "새것"), doc("c", "새것 다시")])
        assert s.stats().documents == 3 and s.stats().chunks == 3
        assert s.chunks(["a#0", "c#0"])["a#0"].text == "두번째" and s.chunks(["c#0"])["c#0"].text == "새것 다시"
        assert [h.chunk_id for h in s.keyword(["처음"], 5)] == ["b#0"]


def test_refresh_applies_another_stores_writes_and_keeps_the_id_maps_exact(tmp_path):
    rng = np.random.default_rng(1)
    vecs = rng.normal(size=(12, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with SqliteStore(tmp_path / "s.chaja") as writer, SqliteStore(tmp_path / "s.chaja") as reader:
        for i in range(6):
            put(writer, f"d{i:02d}", f"문서{i}", "본문", vecs[i])
        assert reader.vector(vecs[0], 1)[0].chunk_id == "d00#0"      # reads and caches the matrix
        row_map = reader._row_of("chunk")
        put(writer, "d06", "문서6", "본문", vecs[6])                  # appended after every cached row
        reader.refresh()
        ids = reader._vectors("chunk")[1]
        assert reader._row_of("chunk") is row_map                    # extended, not rebuilt
        assert row_map == {cid: i for i, cid in enumerate(ids)}
        assert reader.vector(vecs[6], 1)[0].chunk_id == "d06#0"
        assert abs(reader.vector_scores(vecs[6], ["d06#0"])["d06#0"] - 1.0) < 1e-5
        put(writer, "d02", "문서2", "본문", vecs[7])                  # a replacement: rows move
        writer.delete_document("d03")
        reader.refresh()
        ids = reader._vectors("chunk")[1]
        assert "d03#0" not in ids and len(ids) == 6
        assert reader._row_of("chunk") == {cid: i for i, cid in enumerate(ids)}
        assert abs(reader.vector_scores(vecs[7], ["d02#0"])["d02#0"] - 1.0) < 1e-5
        assert [h.chunk_id for h in reader.keyword(bigram_terms("문서6"), 3)][:1] == ["d06#0"]
        # the last row deleted and a new one written in its place: SQLite may give the new
        # row the same rowid, so the map must be rebuilt, not extended
        last = reader._matrix_rowids["chunk"][-1]
        writer.delete_document("d02")                               # the row written last
        put(writer, "d08", "문서8", "본문", vecs[8])
        assert reader._db.execute("SELECT rowid FROM chunks WHERE id = 'd08#0'").fetchone()[0] == last
        reader.refresh()
        ids = reader._vectors("chunk")[1]
        assert "d02#0" not in ids and reader._row_of("chunk") == {cid: i for i, cid in enumerate(ids)}
        assert abs(reader.vector_scores(vecs[8], ["d08#0"])["d08#0"] - 1.0) < 1e-5


def test_vector_scores_at_gives_the_languages_and_cosines_of_candidates_in_their_order(tmp_path, build):
    """The array form the searcher's fusion reads: what chunk_languages and vector_scores
    give, aligned with the ids asked (None / NaN where there is nothing), fresh after a write."""
    with SqliteStore(tmp_path / "s.chaja") as s:
        d, r = build.make_doc("s", "문서", ["하나", "둘", "셋"], headings=[(), ("설치",), ("설치",)])
        r[1].heading_vector = build.unit(3)
        s.put_document(d, r)
        ids = ["s#2", "missing", "s#0", "s#1"]
        q = build.unit(3)
        langs, (chunk, heading) = s.vector_scores_at(ids, [(q, "chunk"), (q, "heading")])
        expected = s.vector_scores(q, ids)
        assert langs.tolist() == [s.chunk_languages(ids).get(c) for c in ids] and langs[1] is None
        assert np.isnan(chunk[1]) and np.isnan(heading[[0, 1, 2]]).all()
        assert chunk[[0, 2, 3]] == pytest.approx([expected[c] for c in ("s#2", "s#0", "s#1")], abs=1e-6)
        assert heading[3] == pytest.approx(1.0, abs=1e-5)
        d2, r2 = build.make_doc("t", "새 문서", ["넷"], lang="en")
        s.put_document(d2, r2)                     # a write after the matrices were read
        langs, (chunk,) = s.vector_scores_at(["t#0", "s#0"], [(r2[0].vector, "chunk")])
        assert langs.tolist() == ["en", "ko"] and chunk[0] == pytest.approx(1.0, abs=1e-5)
        with pytest.raises(StoreError):
            s.vector_scores_at(["s#0"], [(np.ones(3, np.float32), "chunk")])
        assert s.vector_scores_at([], [(q, "chunk")])[1][0].shape == (0,)


def test_a_write_waits_busy_timeout_s_for_another_writer_then_raises_store_busy(tmp_path):
    """A second connection holds the write lock (as ``chaja optimize`` does for minutes): the
    write waits ``busy_timeout_s``, then says so in a sentence; nothing is written, the store
    stays usable, and the write goes through once the lock is free."""
    import os
    import sqlite3

    from chaja.stores.base import StoreBusy

    path = tmp_path / "s.chaja"
    with SqliteStore(path, busy_timeout_s=0.3) as s:
        put(s, "a", "제목", "본문", np.eye(4, dtype=np.float32)[0])
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreBusy) as caught:
            put(s, "b", "제목", "본문", np.eye(4, dtype=np.float32)[1])
        assert str(caught.value).startswith(f"{path}: the store is busy: another connection of this process "
                                            f"(pid {os.getpid()}) is writing it; waited 0.3 s")
        assert not s._db.in_transaction and set(s.fingerprints()) == {"a"}
        other.execute("ROLLBACK")
        other.close()
        put(s, "b", "제목", "본문", np.eye(4, dtype=np.float32)[1])
        assert set(s.fingerprints()) == {"a", "b"} and s.check() == []


def test_a_failed_write_is_not_hidden_by_a_rollback_sqlite_already_made(tmp_path):
    """SQLite rolls a transaction back itself on a full disk, so the store's own ROLLBACK
    then failed ("cannot rollback - no transaction is active") and buried the real error."""
    with SqliteStore(tmp_path / "s.chaja") as s:
        put(s, "a", "제목", "본문", np.eye(4, dtype=np.float32)[0])
        with pytest.raises(ValueError, match="the real cause"), s._writing() as cur:
            cur.execute("DELETE FROM documents")
            cur.execute("ROLLBACK")                # as SQLite does on SQLITE_FULL
            raise ValueError("the real cause")
        assert set(s.fingerprints()) == {"a"} and s.check() == []
        put(s, "b", "제목", "본문", np.eye(4, dtype=np.float32)[1])      # the store writes on
        assert set(s.fingerprints()) == {"a", "b"}
