"""An older store file brought up to date when opened (:mod:`chaja.stores.sqlite_schema`)."""
from chaja.stores.sqlite import SCHEMA_VERSION, SqliteStore
from fts5_reference import FTS5_LAYOUT


def reopened_from_older_schema(path, doc, records, script: str) -> SqliteStore:
    """Write one document with today's store, run ``script`` to take the file back (its
    terms in an FTS5 table, as every schema before 7 kept them, then ``script``), and
    open it again: it is brought up to today's schema."""
    import sqlite3

    with SqliteStore(path) as s:
        s.put_document(doc, records)
    db = sqlite3.connect(path)
    db.executescript(FTS5_LAYOUT + script)
    db.close()
    s = SqliteStore(path)
    assert s.get_meta("schema_version") == str(SCHEMA_VERSION)
    return s


def test_a_schema_1_file_gains_the_heading_column_and_still_searches(tmp_path, build):
    """A file written before heading vectors: same tables, no heading_vector column."""
    path, d, r = tmp_path / "old.chaja", *build.make_doc("d", "제목", ["본문"], headings=[("개요",)])
    with reopened_from_older_schema(path, d, r, """
        CREATE TABLE chunks_v1 (
            rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
            doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            ordinal INTEGER NOT NULL, title TEXT NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL,
            lang TEXT, source TEXT, doc_type TEXT, date TEXT, vector BLOB NOT NULL);
        INSERT INTO chunks_v1 SELECT rowid, id, doc_id, ordinal, title, heading, text, lang, source,
            doc_type, date, vector FROM chunks;
        DROP TABLE chunks; ALTER TABLE chunks_v1 RENAME TO chunks;
        UPDATE meta SET value = '1' WHERE key = 'schema_version';
    """) as s:
        assert [h.chunk_id for h in s.vector(r[0].vector, 3)] == ["d#0"]
        assert s.vector(r[0].vector, 3, field="heading") == []
        r[0].heading_vector = build.unit(4)
        s.put_document(d, r)
        assert [h.chunk_id for h in s.vector(build.unit(4), 3, field="heading")] == ["d#0"]


def test_a_schema_2_file_gains_the_aligned_columns(tmp_path, build):
    """A file written before aligned vectors searches as before and takes them from then on."""
    import numpy as np

    path, d, r = tmp_path / "old.chaja", *build.make_doc("d", "제목", ["본문"], headings=[("개요",)])
    with reopened_from_older_schema(path, d, r, """
        ALTER TABLE chunks DROP COLUMN aligned_vector;
        ALTER TABLE chunks DROP COLUMN aligned_heading_vector;
        UPDATE meta SET value = '2' WHERE key = 'schema_version';
    """) as s:
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
    with reopened_from_older_schema(path, d, r, """
        ALTER TABLE chunks DROP COLUMN location;
        ALTER TABLE staged_chunks DROP COLUMN location;
        UPDATE meta SET value = '4' WHERE key = 'schema_version';
    """) as s:
        assert s.chunks(["d#0"])["d#0"].location is None
        assert [h.chunk_id for h in s.vector(r[0].vector, 3)] == ["d#0"]
        r[0].chunk.location = Location("page", 7, 7)
        s.put_document(d, r)
        assert s.chunks(["d#0"])["d#0"].location.label == "p. 7"


def test_a_schema_6_file_moves_its_terms_out_of_fts5_and_searches_the_same(tmp_path):
    """Schema 7 keeps each chunk's analysed terms in a plain table: an FTS5 table's terms
    move there when the file is opened, the FTS5 table (and its unused inverted index) is
    dropped, and every keyword list is what it was, to the last bit."""
    import random
    import sqlite3

    from fts5_reference import Fts5Reference
    from keyword_corpus import QUERIES, SETTINGS, make

    from chaja.analysis import bigram_terms

    path = tmp_path / "six.chaja"
    rng = random.Random(9)
    with SqliteStore(path) as s:
        s.put_documents([make(f"d{i}", rng) for i in range(30)])
        s.compact(force=True)
        s.put_documents([make(f"late{i}", rng) for i in range(3)])      # rows the log holds, not the file
        lists = {(q, str(kw)): s.keyword(list(dict.fromkeys(bigram_terms(q))), 15, **kw)
                 for q in QUERIES for kw in SETTINGS}
        terms = s.chunk_terms(["d0#0", "late1#0"])
    db = sqlite3.connect(path)
    db.executescript(FTS5_LAYOUT + "UPDATE meta SET value = '6' WHERE key = 'schema_version';")
    six = db.execute("PRAGMA page_count").fetchone()[0]
    db.close()
    with SqliteStore(path) as s:
        pages, free = (s._db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "freelist_count"))
        assert pages < six and free == 0            # the FTS5 index's pages given back
        assert s.get_meta("schema_version") == str(SCHEMA_VERSION)
        names = {n for (n,) in s._db.execute("SELECT name FROM sqlite_schema")}
        assert "chunk_terms" in names and not any(n.startswith("chunks_fts") for n in names)
        assert s.chunk_terms(["d0#0", "late1#0"]) == terms
        assert {(q, str(kw)): s.keyword(list(dict.fromkeys(bigram_terms(q))), 15, **kw)
                for q in QUERIES for kw in SETTINGS} == lists
        s._keywords.path.unlink()                   # the postings rebuilt from the moved terms alone
    with SqliteStore(path) as s:
        ref = Fts5Reference(path)
        for q in QUERIES:
            t = list(dict.fromkeys(bigram_terms(q)))
            assert [h.chunk_id for h in s.keyword(t, 15)] == [h.chunk_id for h in ref.keyword(t, 15)]
        assert s.check() == []
