"""Keyword search in PostgreSQL (chaja.stores.postgres.keyword_search): ranking with
positions and weights, BM25 as in the SQLite store, terms the parser splits, ties."""
from __future__ import annotations

import math

import pytest

from chaja.analysis import bigram_terms

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed: pip install 'chaja[postgres]'")

from chaja.stores.postgres import PostgresStore  # noqa: E402
from pg_sql import sql  # noqa: E402


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


def test_keyword_ties_follow_insertion_order(store, build):
    for name in ["c", "a", "b"]:
        d, r = build.make_doc(name, "같은 제목", ["같은 본문"])
        store.put_document(d, r)
    assert [h.chunk_id for h in store.keyword(bigram_terms("같은 본문"), 5)] == ["c#0", "a#0", "b#0"]


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


def test_default_search_ranks_as_in_sqlite(pg_dsn, pg_schema, corpus_index, corpus):
    """The whole default pipeline (calibrated fusion, aligned lists, background statistics)
    over the same documents gives the same documents in the same order in both stores, and
    the same scores from PostgreSQL's keyword postings kept by the reader and by the database."""
    from chaja.index import Index

    with Index(PostgresStore(pg_dsn, schema=pg_schema), corpus_index.config, encoder=corpus_index.encoder) as pg, \
            Index(PostgresStore(pg_dsn, schema=pg_schema, keyword_engine="stored"), corpus_index.config,
                  encoder=corpus_index.encoder) as stored:
        pg.add([corpus])
        assert pg.store.get_meta("aligned_encoder") == corpus_index.store.get_meta("aligned_encoder")
        for q in ["자기주식 소각 결정", "how do I descale the espresso machine", "warranty 보증", "wireless password"]:
            a, b, c = corpus_index.search(q), pg.search(q), stored.search(q)
            assert b.lists == a.lists == c.lists
            assert b.doc_ids() == a.doc_ids() == c.doc_ids(), q
            for x, y, z in zip(a.chunks, b.chunks, c.chunks):
                assert y.score == pytest.approx(x.score, abs=1e-3) and z.score == y.score
