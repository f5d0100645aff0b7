"""The PostgreSQL store's aligned vector fields at scale: their columns get the
dimension of the first aligned write (or, for an older store, when it opens), so HNSW
can index them, and above ``exact_below`` rows they are searched by that index, again
exactly when the index returns fewer rows than qualify."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.analysis import bigram_terms
from chaja.documents import Chunk, ChunkRecord, Document, Section

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres import PostgresStore  # noqa: E402


def aligned_doc(doc_id: str, rng: np.random.Generator, lang: str) -> tuple[Document, list[ChunkRecord]]:
    """A document of two chunks with e5 vectors (4-d) and aligned vectors (16-d)."""
    bodies = ["자기주식 소각 결정", "warranty period pump"]
    doc = Document(id=doc_id, title=doc_id, sections=[Section((), b) for b in bodies], lang=lang)
    records = [ChunkRecord(Chunk(id=f"{doc_id}#{i}", doc_id=doc_id, ordinal=i, title=doc_id, heading_path=(),
                                 text=b, lang=lang), bigram_terms(doc_id), [], bigram_terms(b),
                           np.ones(4, np.float32) / 2) for i, b in enumerate(bodies)]
    name = rng.standard_normal(16).astype(np.float32)
    for r in records:
        v = rng.standard_normal(16).astype(np.float32)
        r.aligned_vector = v / np.linalg.norm(v)
        r.aligned_heading_vector = name / np.linalg.norm(name)     # the chunks of a document share it
    return doc, records


def test_aligned_fields_get_typed_columns_and_hnsw_indexes_that_answer_like_exact_search(pg_dsn, pg_schema):
    rng = np.random.default_rng(3)
    store = PostgresStore(pg_dsn, schema=pg_schema, dim=4, exact_below=0)
    exact = PostgresStore(pg_dsn, schema=pg_schema)          # exact below 20,000 rows
    try:
        for i in range(150):
            store.put_document(*aligned_doc(f"d{i}", rng, "ko" if i % 3 else "en"))
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            typed = dict(conn.execute(
                "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a JOIN pg_class c"
                " ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s"
                " AND c.relname = 'chunk_aligned' AND a.attname IN ('embedding', 'name_embedding')",
                (pg_schema,)).fetchall())
            indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s",
                                                  (pg_schema,))}
        assert typed == {"embedding": "vector(16)", "name_embedding": "vector(16)"}
        assert {"chunk_aligned_embedding_hnsw", "chunk_aligned_name_hnsw"} <= indexes
        for k in range(10):
            q = rng.standard_normal(16).astype(np.float32)
            q /= np.linalg.norm(q)
            for field, kw in (("aligned", {}), ("aligned", {"lang": "en"}), ("aligned_heading", {})):
                got, want = store.vector(q, 20, field=field, **kw), exact.vector(q, 20, field=field, **kw)
                assert len(got) == len(want) == 20
                assert len({h.chunk_id for h in got} & {h.chunk_id for h in want}) >= 18, (field, kw)
                assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)
        with pytest.raises(Exception, match="dimension"):
            store.vector(np.ones(8, np.float32), 5, field="aligned")
    finally:
        store.close()
        exact.close()


def test_an_older_store_s_aligned_columns_are_typed_when_it_opens(pg_dsn, pg_schema):
    rng = np.random.default_rng(4)
    store = PostgresStore(pg_dsn, schema=pg_schema, dim=4)
    for i in range(5):
        store.put_document(*aligned_doc(f"d{i}", rng, "ko"))
    store.close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:     # as a store written before this step
        conn.execute(f'DROP INDEX "{pg_schema}".chunk_aligned_embedding_hnsw')
        conn.execute(f'DROP INDEX "{pg_schema}".chunk_aligned_name_hnsw')
        conn.execute(f'ALTER TABLE "{pg_schema}".chunk_aligned ALTER COLUMN embedding TYPE vector,'
                     ' ALTER COLUMN name_embedding TYPE vector')
    reopened = PostgresStore(pg_dsn, schema=pg_schema)
    try:
        assert reopened._aligned_dim == 16
        with psycopg.connect(pg_dsn, autocommit=True) as conn:
            indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = %s",
                                                  (pg_schema,))}
        assert "chunk_aligned_embedding_hnsw" in indexes
        assert len(reopened.vector(np.ones(16, np.float32) / 4, 3, field="aligned")) == 3
    finally:
        reopened.close()
