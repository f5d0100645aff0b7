"""Vector search in PostgreSQL (chaja.stores.postgres.vectors): filtered searches and
large n answered exactly, the ef_search floor, exact search on small tables, a reader
that opened before the first write."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.stores.base import StoreError

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres import PostgresStore  # noqa: E402


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
