"""Check and repair of a PostgreSQL store (chaja.stores.postgres.check)."""
from __future__ import annotations

import pytest

from chaja.analysis import bigram_terms

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")


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
