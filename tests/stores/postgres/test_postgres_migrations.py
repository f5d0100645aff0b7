"""The chaja schema in PostgreSQL (chaja.stores.postgres.migrations): migrations applied
once, without races, upgrades from each older version, newer schemas refused, stores in
separate schemas."""
from __future__ import annotations

import threading

import pytest

from chaja.analysis import bigram_terms
from chaja.stores.base import StoreError

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres import SCHEMA_VERSION, PostgresStore  # noqa: E402
from pg_sql import back_to_version, sql  # noqa: E402


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


def test_a_version_9_store_gains_stored_postings_that_its_stored_engine_writes(pg_dsn, pg_schema, build):
    with PostgresStore(pg_dsn, schema=pg_schema) as s:
        s.put_document(*build.make_doc("d", "문서", ["내용 내용", "둘째"]))
        before = s.keyword(bigram_terms("내용"), 5)
    back_to_version(pg_dsn, pg_schema, 9)
    with PostgresStore(pg_dsn, schema=pg_schema, keyword_engine="stored") as s:
        assert s.schema_version() == SCHEMA_VERSION
        after = s.keyword(bigram_terms("내용"), 5)
    assert sql(pg_dsn, f'SELECT count(*) FROM "{pg_schema}".keyword_parts')[0][0] == 1
    assert [(h.chunk_id, pytest.approx(h.score)) for h in after] == [(h.chunk_id, h.score) for h in before]
