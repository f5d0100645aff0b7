"""Writing and reading documents in PostgreSQL (chaja.stores.postgres.documents,
chaja.stores.postgres.reads): stored text, statistics, and the BM25 statistics kept on
every write."""
from __future__ import annotations

import pytest

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from pg_sql import sql  # noqa: E402


def test_nul_in_stored_text_is_dropped(store, build):
    d, r = build.make_doc("d", "제목\x00", ["본문\x00 내용"])
    store.put_document(d, r)
    c = store.chunks(["d#0"])["d#0"]
    assert c.title == "제목" and c.text == "본문 내용"


def test_stats_by_field(store, build):
    for i, (lang, src) in enumerate([("ko", "dart"), ("ko", "news"), ("en", "news")]):
        d, r = build.make_doc(f"d{i}", "문서", ["내용", "더"], lang=lang, source=src)
        store.put_document(d, r)
    st = store.stats()
    assert (st.documents, st.chunks) == (3, 6)
    assert st.by_lang == {"en": 1, "ko": 2}
    assert st.by_source == {"dart": 1, "news": 2}
    assert st.size_bytes > 0


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
