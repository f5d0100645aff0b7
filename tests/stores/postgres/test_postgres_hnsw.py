"""The vector columns and their HNSW indexes in PostgreSQL (chaja.stores.postgres.hnsw):
the dimension fixed and checked, the indexes built and used, bulk loads, vectors kept in
the row."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.stores.base import StoreError

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres import PostgresStore  # noqa: E402
from pg_sql import sql  # noqa: E402


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
