"""Long documents staged a batch at a time in PostgreSQL (chaja.stores.postgres.staging)."""
from __future__ import annotations

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres import PostgresStore  # noqa: E402


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
