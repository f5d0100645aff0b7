"""PostgreSQL-only behaviour: ranking with positions, migrations, dimensions,
connection and extension errors, index use and filtered vector search."""
from __future__ import annotations

import threading

import numpy as np
import math

import pytest

from chaja.analysis import bigram_terms
from chaja.stores.base import StoreError

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres import SCHEMA_VERSION, PostgresStore  # noqa: E402


@pytest.fixture
def store(pg_dsn, pg_schema):
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


def sql(dsn, query, *args):
    """Run one statement on a separate connection; rows if it returns any."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(query, args)
        return cur.fetchall() if cur.description is not None else []


#: How to take a store back from each migration, to test the upgrade from older versions.
UNDO = {
    9: ['ALTER TABLE {s}.chunks DROP COLUMN location', 'ALTER TABLE {s}.staged_chunks DROP COLUMN location'],
    8: ['DROP TABLE {s}.keyword_log', "DELETE FROM {s}.meta WHERE key = 'store_id'"],
    7: ['DROP TABLE {s}.staged_chunks'],
    6: ['DROP TABLE {s}.chunk_aligned'],
    5: ['DROP TABLE {s}.fts_stats'],
    4: ['ALTER TABLE {s}.chunks ALTER COLUMN embedding SET STORAGE EXTERNAL'],
    3: ['ALTER TABLE {s}.chunk_fts DROP COLUMN n_tokens', 'DROP FUNCTION {s}.tsvector_tokens(tsvector)'],
    2: ['DROP TABLE {s}.chunk_headings'],
}


def back_to_version(dsn, schema, version):
    """Undo every migration after ``version`` (newest first), as if an older chaja wrote the store."""
    assert set(UNDO) == set(range(2, SCHEMA_VERSION + 1)), "add the new migration's undo to UNDO"
    for v in sorted(UNDO, reverse=True):
        if v > version:
            for stmt in UNDO[v]:
                sql(dsn, stmt.format(s=f'"{schema}"'))
    sql(dsn, f'DELETE FROM "{schema}".schema_version WHERE version > %s', version)


# ---- ranking: positions are kept, so ts_rank_cd is never 0 ---------------------

def test_rank_is_positive_and_follows_frequency_and_weight(store, build):
    texts = {
        "once": "소각 하나 둘 셋 넷 다섯",
        "twice": "소각 하나 소각 셋 넷 다섯",
        "thrice": "소각 소각 소각 셋 넷 다섯",
    }
    for name, body in texts.items():
        d, r = build.make_doc(name, "보고서", [body])
        store.put_document(d, r)
    d, r = build.make_doc("title", "소각", ["하나 둘 셋 넷 다섯 여섯"])
    store.put_document(d, r)

    hits = store.keyword(["소각"], 10, title_weight=2.0)
    scores = {h.chunk_id: h.score for h in hits}
    assert set(scores) == {"once#0", "twice#0", "thrice#0", "title#0"}
    # The bug this guards against: a position-less tsvector ranks every match 0.
    assert all(s > 0 for s in scores.values())
    assert scores["thrice#0"] > scores["twice#0"] > scores["once#0"]
    # A title occurrence outweighs a body occurrence, the more so the larger the title weight
    # (BM25's term frequency saturates, so the ratio is below the weight itself).
    again = {h.chunk_id: h.score for h in store.keyword(["소각"], 10, title_weight=3.5)}
    assert 1 < scores["title#0"] / scores["once#0"] < again["title#0"] / again["once#0"]


def test_a_rare_term_outweighs_a_common_one(store, build):
    # "흔한" is in every chunk, "드문" in one: a query with both prefers the chunk with the rare
    # term, although each chunk holds one of the two terms once (ts_rank_cd alone would tie them)
    for i in range(6):
        d, r = build.make_doc(f"c{i}", "보고서", ["흔한 하나 둘 셋"])
        store.put_document(d, r)
    d, r = build.make_doc("rare", "보고서", ["드문 하나 둘 셋"])
    store.put_document(d, r)
    hits = store.keyword(["흔한", "드문"], 10)
    assert hits[0].chunk_id == "rare#0"
    n, df_common = 7, 6
    idf = lambda df: max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)   # FTS5's floor for common terms
    assert hits[0].score / hits[1].score == pytest.approx(idf(1) / idf(df_common), rel=1e-4)


def test_stored_tsvector_has_positions_and_weights(store, build, pg_dsn, pg_schema):
    d, r = build.make_doc("d", "소각결정", ["자기주식 소각"], headings=[("개요",)])
    store.put_document(d, r)
    (tsv,) = sql(pg_dsn, f'SELECT tsv::text FROM "{pg_schema}".chunk_fts')[0]
    # 'lexeme':positionWEIGHT, e.g. '소각':1A,6 (body positions carry no letter: D).
    assert "'소각':1A" in tsv
    assert "'개요':4B" in tsv
    assert "'자기':5" in tsv
    (rank,) = sql(pg_dsn, f"SELECT ts_rank_cd(tsv, '소각'::tsquery) FROM \"{pg_schema}\".chunk_fts")[0]
    assert rank > 0


def test_terms_that_the_parser_splits_still_match(store, build):
    # chaja never makes such terms, but a stored term and the same query term agree.
    from chaja.documents import ChunkRecord

    d, recs = build.make_doc("d", "t", ["x"])
    recs = [ChunkRecord(chunk=recs[0].chunk, title_terms=[], heading_terms=[],
                        body_terms=["snake_case", "a-b", "ok"], vector=recs[0].vector)]
    store.put_document(d, recs)
    assert [h.chunk_id for h in store.keyword(["snake_case"], 5)] == ["d#0"]
    assert [h.chunk_id for h in store.keyword(["a-b"], 5)] == ["d#0"]
    assert store.keyword(["case_snake"], 5) == []
    assert store.chunk_terms(["d#0"]) == {"d#0": {"snake_case", "a-b", "ok"}}


def test_weights_must_be_valid(store):
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            store.keyword(["x"], 5, title_weight=bad)
    with pytest.raises(ValueError):
        store.keyword(["x"], 5, field="body")


def test_nul_in_stored_text_is_dropped(store, build):
    d, r = build.make_doc("d", "제목\x00", ["본문\x00 내용"])
    store.put_document(d, r)
    c = store.chunks(["d#0"])["d#0"]
    assert c.title == "제목" and c.text == "본문 내용"


# ---- schema and migrations -------------------------------------------------------

def test_migrations_are_applied_once(pg_dsn, pg_schema, build):
    s1 = PostgresStore(pg_dsn, schema=pg_schema)
    d, r = build.make_doc("d", "문서", ["내용"])
    s1.put_document(d, r)
    s1.close()
    s2 = PostgresStore(pg_dsn, schema=pg_schema)
    s3 = PostgresStore(pg_dsn, schema=pg_schema)
    rows = sql(pg_dsn, f'SELECT version FROM "{pg_schema}".schema_version ORDER BY version')
    assert [v for (v,) in rows] == list(range(1, SCHEMA_VERSION + 1))
    assert s2.schema_version() == SCHEMA_VERSION
    assert s3.fingerprints() == {"d": d.fingerprint()}
    s2.close()
    s3.close()


def test_a_version_1_store_gains_typed_indexed_heading_vectors(pg_dsn, pg_schema, build):
    old = PostgresStore(pg_dsn, schema=pg_schema)
    d, r = build.make_doc("d", "문서", ["내용"], headings=[("개요",)])
    old.put_document(d, r)
    old.close()
    back_to_version(pg_dsn, pg_schema, 1)
    with PostgresStore(pg_dsn, schema=pg_schema) as s:
        assert s.schema_version() == SCHEMA_VERSION
        assert [h.chunk_id for h in s.vector(r[0].vector, 3)] == ["d#0"]
        assert s.vector(r[0].vector, 3, field="heading") == []
        r[0].heading_vector = build.unit(9)
        s.put_document(d, r)
        assert [h.chunk_id for h in s.vector(build.unit(9), 3, field="heading")] == ["d#0"]
    (typ,) = sql(pg_dsn, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                         f" WHERE attrelid = '\"{pg_schema}\".chunk_headings'::regclass AND attname = 'embedding'")[0]
    assert typ == f"vector({build.DIM})"
    indexes = {n for (n,) in sql(pg_dsn, "SELECT indexname FROM pg_indexes WHERE schemaname = %s", pg_schema)}
    assert {"chunks_embedding_hnsw", "chunk_headings_embedding_hnsw"} <= indexes


def test_concurrent_first_open_does_not_race(pg_dsn, pg_schema):
    errors, stores = [], []
    barrier = threading.Barrier(4)

    def open_one():
        try:
            barrier.wait()
            stores.append(PostgresStore(pg_dsn, schema=pg_schema, dim=8))
        except Exception as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert all(s.dim == 8 for s in stores)
    rows = sql(pg_dsn, f'SELECT count(*) FROM "{pg_schema}".schema_version')
    assert rows == [(SCHEMA_VERSION,)]
    for s in stores:
        s.close()


def test_newer_schema_is_refused(pg_dsn, pg_schema):
    PostgresStore(pg_dsn, schema=pg_schema).close()
    sql(pg_dsn, f"INSERT INTO \"{pg_schema}\".schema_version (version, description) VALUES (999, 'future')")
    with pytest.raises(StoreError, match="newer chaja"):
        PostgresStore(pg_dsn, schema=pg_schema)


def test_stores_in_different_schemas_are_separate(pg_dsn, pg_schema, build):
    other = pg_schema + "_b"
    a = PostgresStore(pg_dsn, schema=pg_schema)
    b = PostgresStore(pg_dsn, schema=other)
    try:
        d, r = build.make_doc("d", "문서", ["내용"])
        a.put_document(d, r)
        assert b.fingerprints() == {}
        assert a.fingerprints() == {"d": d.fingerprint()}
    finally:
        a.close()
        b.close()
        sql(pg_dsn, f'DROP SCHEMA "{other}" CASCADE')


# ---- dimensions --------------------------------------------------------------------

def test_dimension_is_fixed_and_checked(pg_dsn, pg_schema, build):
    s = PostgresStore(pg_dsn, schema=pg_schema)
    assert s.dim is None
    d, r = build.make_doc("d", "문서", ["내용"])
    s.put_document(d, r)
    assert s.dim == build.DIM
    s.close()

    with pytest.raises(StoreError, match="dimension mismatch"):
        PostgresStore(pg_dsn, schema=pg_schema, dim=build.DIM + 1)
    s = PostgresStore(pg_dsn, schema=pg_schema, dim=build.DIM)
    bad, bad_r = build.make_doc("e", "x", ["y"], vectors=[build.unit(3, 16)])
    with pytest.raises(StoreError, match="dimension mismatch"):
        s.put_document(bad, bad_r)
    with pytest.raises(StoreError, match="dimension mismatch"):
        s.vector(build.unit(3, 16), 5)
    assert s.dim == build.DIM
    s.close()


def test_dim_given_up_front_builds_the_index(pg_dsn, pg_schema):
    s = PostgresStore(pg_dsn, schema=pg_schema, dim=384)
    assert s.dim == 384
    (typ,) = sql(pg_dsn, "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                 " WHERE attrelid = %s::regclass AND attname = 'embedding'", f'"{pg_schema}".chunks')[0]
    assert typ == "vector(384)"
    idx = sql(pg_dsn, "SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = 'chunks_embedding_hnsw'",
              pg_schema)
    assert len(idx) == 1 and "hnsw" in idx[0][0] and "vector_cosine_ops" in idx[0][0]
    s.close()


def test_failed_first_write_does_not_fix_the_dimension(store, build):
    d, r = build.make_doc("d", "문서", ["하나", "둘"])
    r[1].chunk.id = r[0].chunk.id
    with pytest.raises(StoreError):
        store.put_document(d, r)
    assert store.dim is None
    d2, r2 = build.make_doc("e", "문서", ["하나"], vectors=[build.unit(1, 12)])
    store.put_document(d2, r2)
    assert store.dim == 12


# ---- errors --------------------------------------------------------------------------

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


# ---- indexes and filtered vector search -------------------------------------------

def test_queries_can_use_the_indexes(store, build, pg_dsn, pg_schema):
    for i in range(30):
        d, r = build.make_doc(f"d{i}", "문서", [f"내용 {i}"], headings=[("개요",)])
        r[0].heading_vector = build.unit(100 + i)
        store.put_document(d, r)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f'SET search_path = "{pg_schema}", public')
        conn.execute("SET enable_seqscan = off")
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT id FROM \"{pg_schema}\".chunks"
            " ORDER BY embedding <=> (SELECT embedding FROM chunks LIMIT 1) LIMIT 5"))
        assert "chunks_embedding_hnsw" in plan
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT chunk_id FROM \"{pg_schema}\".chunk_headings WHERE lead"
            " ORDER BY embedding <=> (SELECT embedding FROM chunks LIMIT 1) LIMIT 5"))
        assert "chunk_headings_embedding_hnsw" in plan
        plan = "\n".join(r[0] for r in conn.execute(
            f"EXPLAIN SELECT c.chunk_id FROM (SELECT tsquery_or_all(phraseto_tsquery('simple', t)) AS query"
            f" FROM unnest(ARRAY['내용']) t) q JOIN \"{pg_schema}\".chunk_fts c ON c.tsv @@ q.query"))
        assert "chunk_fts_tsv" in plan


def test_filtered_vector_search_returns_n_exact_results(store, build):
    # 50 English chunks among 300: the index alone visits about ef_search candidates
    # and drops the wrong language, leaving fewer than 12; the store must still
    # return the exact 12 nearest English chunks.
    rng = np.random.default_rng(3)
    vecs = rng.standard_normal((300, build.DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for i in range(0, 300, 10):
        lang = "en" if i % 60 == 0 else "ko"
        d, r = build.make_doc(f"d{i}", "문서", [f"c{j}" for j in range(10)], lang=lang,
                              vectors=list(vecs[i:i + 10]))
        store.put_document(d, r)
    en_rows = [i for i in range(300) if (i - i % 10) % 60 == 0]
    q = -vecs[7]
    sims = vecs[en_rows] @ q
    want = [f"d{en_rows[k] - en_rows[k] % 10}#{en_rows[k] % 10}" for k in np.argsort(-sims)[:12]]
    hits = store.vector(q, 12, lang="en")
    assert [h.chunk_id for h in hits] == want
    assert np.allclose([h.score for h in hits], np.sort(sims)[::-1][:12], atol=1e-5)


def test_vector_n_above_ef_search_limit(store, build):
    rng = np.random.default_rng(11)
    vecs = rng.standard_normal((1200, build.DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for i in range(0, 1200, 100):
        d, r = build.make_doc(f"d{i}", "t", [f"c{j}" for j in range(100)], vectors=list(vecs[i:i + 100]))
        store.put_document(d, r)
    hits = store.vector(vecs[0], 1100)
    assert len(hits) == 1100
    assert hits[0].chunk_id == "d0#0"
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_stats_by_field(store, build):
    for i, (lang, src) in enumerate([("ko", "dart"), ("ko", "news"), ("en", "news")]):
        d, r = build.make_doc(f"d{i}", "문서", ["내용", "더"], lang=lang, source=src)
        store.put_document(d, r)
    st = store.stats()
    assert (st.documents, st.chunks) == (3, 6)
    assert st.by_lang == {"en": 1, "ko": 2}
    assert st.by_source == {"dart": 1, "news": 2}
    assert st.size_bytes > 0


def test_keyword_ties_follow_insertion_order(store, build):
    for name in ["c", "a", "b"]:
        d, r = build.make_doc(name, "같은 제목", ["같은 본문"])
        store.put_document(d, r)
    assert [h.chunk_id for h in store.keyword(bigram_terms("같은 본문"), 5)] == ["c#0", "a#0", "b#0"]


def test_bulk_load_defers_the_index_and_stays_exact(store, build, pg_dsn, pg_schema):
    def has_index():
        return bool(sql(pg_dsn, "SELECT 1 FROM pg_indexes WHERE schemaname = %s"
                        " AND indexname = 'chunks_embedding_hnsw'", pg_schema))

    rng = np.random.default_rng(5)
    vecs = rng.standard_normal((60, build.DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with store.bulk_load():
        for i in range(0, 60, 6):
            d, r = build.make_doc(f"b{i}", "대량", [f"c{j}" for j in range(6)], vectors=list(vecs[i:i + 6]))
            store.put_document(d, r)
        assert not has_index()
        during = [h.chunk_id for h in store.vector(vecs[13], 5)]
    assert has_index()
    after = [h.chunk_id for h in store.vector(vecs[13], 5)]
    want = [f"b{i - i % 6}#{i % 6}" for i in np.argsort(-(vecs @ vecs[13]))[:5]]
    assert during == want and after == want
    # Writing after the bulk load maintains the rebuilt index.
    d, r = build.make_doc("late", "늦게", ["x"], vectors=[vecs[13]])
    store.put_document(d, r)
    assert store.vector(vecs[13], 2)[1].chunk_id in {"late#0", "b12#1"}


def test_bulk_load_on_a_new_store_builds_the_index_at_the_end(pg_dsn, pg_schema, build):
    s = PostgresStore(pg_dsn, schema=pg_schema)
    with s.bulk_load():
        d, r = build.make_doc("d", "문서", ["내용"])
        s.put_document(d, r)
        assert not sql(pg_dsn, "SELECT 1 FROM pg_indexes WHERE schemaname = %s"
                       " AND indexname = 'chunks_embedding_hnsw'", pg_schema)
    assert sql(pg_dsn, "SELECT 1 FROM pg_indexes WHERE schemaname = %s"
               " AND indexname = 'chunks_embedding_hnsw'", pg_schema)
    s.close()


def test_ef_search_floor_is_validated_and_used(pg_dsn, pg_schema, build):
    with pytest.raises(StoreError, match="ef_search"):
        PostgresStore(pg_dsn, schema=pg_schema, ef_search=0)
    s = PostgresStore(pg_dsn, schema=pg_schema, ef_search=200)
    d, r = build.make_doc("d", "문서", ["하나", "둘"])
    s.put_document(d, r)
    assert [h.chunk_id for h in s.vector(r[1].vector, 1)] == ["d#1"]
    s.close()


def test_reader_opened_before_the_first_write_sees_it(pg_dsn, pg_schema, build):
    reader = PostgresStore(pg_dsn, schema=pg_schema)
    writer = PostgresStore(pg_dsn, schema=pg_schema)
    assert reader.vector(build.unit(1), 3) == []
    d, r = build.make_doc("d", "문서", ["내용"])
    writer.put_document(d, r)
    assert [h.chunk_id for h in reader.vector(r[0].vector, 3)] == ["d#0"]
    assert [h.chunk_id for h in reader.keyword(["내용"], 3)] == ["d#0"]
    reader.close()
    writer.close()


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


# ---- BM25: the same keyword scores as the SQLite store ------------------------------

def test_keyword_scores_equal_sqlite_bm25(store, build, tmp_path):
    from chaja.stores.sqlite import SqliteStore

    texts = [
        ("자기주식 소각 결정", ["자기주식을 소각하기로 결정했다. 소각 예정일은 6월이다.", "배당 정책과 무관하다."]),
        ("유상증자 결정", ["주주배정 유상증자를 결정했다.", "신주는 자기주식과 무관하다. 증자 대금은 시설 투자에 쓴다."]),
        ("분기 보고서", ["매출이 늘었다 매출 매출.", "소각 없이 배당만 결정했다."]),
        ("espresso machine", ["descale the machine every month", "the grinder settings are fine"]),
    ]
    lite = SqliteStore(tmp_path / "lite.chaja")
    try:
        for i, (title, bodies) in enumerate(texts):
            d, r = build.make_doc(f"d{i}", title, bodies, headings=[("개요",), ("세부", "machine")])
            store.put_document(d, r)
            lite.put_document(d, r)
        for query in ("자기주식 소각 결정", "매출 배당", "machine grinder", "증자 개요", "세부 machine"):
            terms = bigram_terms(query)
            for kwargs in ({}, {"title_weight": 3.0, "heading_weight": 0.5}, {"lang": "ko"}):
                a, b = lite.keyword(terms, 10, **kwargs), store.keyword(terms, 10, **kwargs)
                assert [h.chunk_id for h in b] == [h.chunk_id for h in a], (query, kwargs)
                assert [h.score for h in b] == pytest.approx([h.score for h in a], rel=1e-5), (query, kwargs)
    finally:
        lite.close()


def test_a_version_2_store_gains_chunk_lengths(pg_dsn, pg_schema, build):
    with PostgresStore(pg_dsn, schema=pg_schema) as s:
        d, r = build.make_doc("d", "문서 제목", ["본문 내용 본문"])
        s.put_document(d, r)
        before = s.keyword(bigram_terms("본문"), 5)
    back_to_version(pg_dsn, pg_schema, 2)
    with PostgresStore(pg_dsn, schema=pg_schema) as s:
        assert s.schema_version() == SCHEMA_VERSION
        ((n,),) = sql(pg_dsn, f'SELECT n_tokens FROM "{pg_schema}".chunk_fts')
        assert n == len(r[0].title_terms) + len(r[0].body_terms)
        after = s.keyword(bigram_terms("본문"), 5)
    assert [(h.chunk_id, pytest.approx(h.score)) for h in after] == [(h.chunk_id, h.score) for h in before]


def test_small_tables_are_searched_exactly_and_counts_follow_writes(pg_dsn, pg_schema, build):
    rng = np.random.default_rng(11)
    vecs = rng.standard_normal((40, build.DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    with PostgresStore(pg_dsn, schema=pg_schema, exact_below=100) as s:
        for i in range(0, 40, 4):
            d, r = build.make_doc(f"v{i}", "문서", [f"c{j}" for j in range(4)], vectors=list(vecs[i:i + 4]))
            s.put_document(d, r)
        assert s._row_count("chunks") == 40
        q = rng.standard_normal(build.DIM).astype(np.float32)
        order = np.argsort(-(vecs @ q), kind="stable")[:15]
        assert [h.chunk_id for h in s.vector(q, 15)] == [f"v{i - i % 4}#{i % 4}" for i in order]
        s.delete_document("v0")
        assert s._row_count("chunks") == 36


def test_vectors_stay_in_the_row(pg_dsn, pg_schema, build):
    """A long Korean chunk is written, and its vector is stored inline, not in TOAST."""
    long_text = "자기주식을 소각하기로 결정했다 " * 80   # about 1,200 characters
    with PostgresStore(pg_dsn, schema=pg_schema) as s:
        d, r = build.make_doc("long", "긴 문서", [long_text], headings=[("개요",)])
        r[0].heading_vector = build.unit(3)
        s.put_document(d, r)
        assert [h.chunk_id for h in s.vector(r[0].vector, 1)] == ["long#0"]
    rows = sql(pg_dsn, "SELECT c.relname, a.attstorage FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
                       " JOIN pg_namespace n ON n.oid = c.relnamespace"
                       " WHERE n.nspname = %s AND a.attname = 'embedding' AND c.relkind = 'r'", pg_schema)
    searched = {table: storage for table, storage in rows if table != "staged_chunks"}   # staging is not searched
    assert searched == {"chunks": "p", "chunk_headings": "p", "chunk_aligned": "p"}
    ((external,),) = sql(pg_dsn, f'SELECT pg_column_size(embedding) < {build.DIM * 4} FROM "{pg_schema}".chunks')
    assert not external   # full size: neither compressed nor a TOAST pointer


def test_a_version_3_store_keeps_vectors_inline_from_version_4(pg_dsn, pg_schema, build):
    with PostgresStore(pg_dsn, schema=pg_schema) as s:
        d, r = build.make_doc("d", "문서", ["내용"])
        s.put_document(d, r)
    back_to_version(pg_dsn, pg_schema, 3)
    with PostgresStore(pg_dsn, schema=pg_schema) as s:
        assert s.schema_version() == SCHEMA_VERSION
    ((storage,),) = sql(pg_dsn, f"SELECT attstorage FROM pg_attribute WHERE attrelid = '\"{pg_schema}\".chunks'::regclass"
                                " AND attname = 'embedding'")
    assert storage == "p"


def test_bm25_statistics_follow_every_write(store, build, pg_dsn, pg_schema):
    def stats():
        return sql(pg_dsn, f'SELECT chunks, tokens FROM "{pg_schema}".fts_stats')[0]

    def actual():
        return sql(pg_dsn, f'SELECT count(*), coalesce(sum(n_tokens), 0) FROM "{pg_schema}".chunk_fts')[0]

    assert stats() == (0, 0)
    d, r = build.make_doc("a", "제목", ["본문 하나", "본문 둘 셋"])
    store.put_document(d, r)
    store.put_document(*build.make_doc("b", "다른 제목", ["짧은 글"]))
    assert stats() == actual() and stats()[0] == 3
    store.put_document(*build.make_doc("a", "제목", ["바뀐 본문 하나만"]))   # replace: 2 chunks → 1
    assert stats() == actual() and stats()[0] == 2
    store.delete_document("b")
    assert stats() == actual() and stats()[0] == 1


def test_a_version_4_store_gains_bm25_statistics(pg_dsn, pg_schema, build):
    with PostgresStore(pg_dsn, schema=pg_schema) as s:
        s.put_document(*build.make_doc("d", "문서", ["내용 내용", "둘째"]))
        before = s.keyword(bigram_terms("내용"), 5)
    back_to_version(pg_dsn, pg_schema, 4)
    with PostgresStore(pg_dsn, schema=pg_schema) as s:
        assert s.schema_version() == SCHEMA_VERSION
        assert sql(pg_dsn, f'SELECT chunks FROM "{pg_schema}".fts_stats')[0][0] == 2
        after = s.keyword(bigram_terms("내용"), 5)
    assert [(h.chunk_id, pytest.approx(h.score)) for h in after] == [(h.chunk_id, h.score) for h in before]


def test_default_search_ranks_as_in_sqlite(pg_dsn, pg_schema, corpus_index, corpus):
    """The whole default pipeline (calibrated fusion, aligned lists, background statistics)
    over the same documents gives the same documents in the same order in both stores."""
    from chaja.index import Index

    with Index(PostgresStore(pg_dsn, schema=pg_schema), corpus_index.config, encoder=corpus_index.encoder) as pg:
        pg.add([corpus])
        assert pg.store.get_meta("aligned_encoder") == corpus_index.store.get_meta("aligned_encoder")
        for q in ["자기주식 소각 결정", "how do I descale the espresso machine", "warranty 보증", "wireless password"]:
            a, b = corpus_index.search(q), pg.search(q)
            assert b.lists == a.lists
            assert b.doc_ids() == a.doc_ids(), q
            for x, y in zip(a.chunks, b.chunks):
                assert y.score == pytest.approx(x.score, abs=1e-3)


def test_check_finds_a_whole_store_whole_and_names_damage(pg_dsn, pg_schema, build):
    import psycopg

    from chaja.stores.postgres import PostgresStore

    store = PostgresStore(pg_dsn, schema=pg_schema)
    try:
        for i in range(3):
            d, r = build.make_doc(f"d{i}", f"문서 {i}", ["첫째 조각", "둘째 조각"])
            store.put_document(d, r)
        assert store.check() == []
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            conn.execute(f'DELETE FROM "{pg_schema}".chunk_fts WHERE chunk_id = %s', ("d1#0",))
            conn.execute(f'UPDATE "{pg_schema}".documents SET n_chunks = 5 WHERE id = %s', ("d2",))
        found = store.check()
        assert any("chunk 'd1#0': no keyword row" in f for f in found)
        assert any("document 'd2': records 5 chunks, holds 2" in f for f in found)
        assert any(f.startswith("keyword rows: 5 for 6 chunks") for f in found)
        assert any(f.startswith("keyword statistics:") for f in found)
        done = store.repair()
        assert "removed document 'd2' (damaged; index its file again)" in done
        assert "rebuilt the keyword row of chunk 'd1#0'" in done
        assert any(line.startswith("recounted the keyword statistics") for line in done)
        assert store.check() == [] and store.repair() == []
        assert {"d0#0", "d1#0"} <= {h.chunk_id for h in store.keyword(bigram_terms("첫째 조각"), 5)}
        assert set(store.fingerprints()) == {"d0", "d1"}
    finally:
        store.close()


def test_a_long_document_is_staged_and_published_whole_as_in_sqlite(pg_dsn, pg_schema, corpus_index, tmp_path):
    """The ingest's staging path over PostgreSQL: nothing shown while staged, resumed
    after a crash, and the same chunks, vectors and rankings as the SQLite store."""
    from chaja.index import Index
    from ingesting import CountingEncoder, long_document, small_batches

    doc, cfg = long_document(), corpus_index.config
    failing = CountingEncoder(corpus_index.encoder, fail_after=20)
    with small_batches(Index(PostgresStore(pg_dsn, schema=pg_schema), cfg, encoder=failing)) as pg:
        with pytest.raises(KeyboardInterrupt):
            pg.add_documents([doc])
        assert pg.store.staged() == {"long": 16} and pg.store.stats().documents == 0
    counting = CountingEncoder(corpus_index.encoder)
    with small_batches(Index(PostgresStore(pg_dsn, schema=pg_schema), cfg, encoder=counting)) as pg:
        assert pg.add_documents([doc]).added == 1
        assert counting.passages == 8                       # resumed after the 16 staged
        assert pg.store.staged() == {} and pg.store.check() == []
        with small_batches(Index.open(tmp_path / "s.chaja", cfg, corpus_index.encoder)) as lite:
            lite.add_documents([doc])
            for q in ["배수 펌프 필터 청소", "filter cleaning log entry 7"]:
                a, b = lite.search(q), pg.search(q)
                assert [c.chunk.id for c in b.chunks] == [c.chunk.id for c in a.chunks], q
                for x, y in zip(a.chunks, b.chunks):
                    assert y.score == pytest.approx(x.score, abs=1e-3)
