"""One contract for every store: the same tests run on the SQLite file and on
PostgreSQL (with the keyword postings the reader keeps, and with those the database
keeps). Scores differ between stores (BM25 vs ts_rank_cd), so the tests look
at which chunks come back and in what order, never at keyword score values."""
from __future__ import annotations

import importlib

import numpy as np
import pytest

from chaja.analysis import bigram_terms
from chaja.stores.base import Store, StoreError


@pytest.fixture(params=["sqlite", "postgres", "postgres-stored"])
def opener(request, tmp_path):
    """A function that opens (or reopens) one store of the parametrised kind."""
    opened = []
    if request.param == "sqlite":
        try:
            mod = importlib.import_module("chaja.stores.sqlite")
        except ImportError as exc:
            pytest.skip(f"the SQLite store is not available: {exc}")
        path = tmp_path / "store.db"

        def open_():
            s = mod.SqliteStore(path)
            opened.append(s)
            return s
    else:
        dsn = request.getfixturevalue("pg_dsn")
        schema = request.getfixturevalue("pg_schema")
        from chaja.stores.postgres import PostgresStore

        engine = "stored" if request.param == "postgres-stored" else "postings"

        def open_():
            s = PostgresStore(dsn, schema=schema, keyword_engine=engine)
            opened.append(s)
            return s
    yield open_
    for s in opened:
        s.close()


@pytest.fixture
def store(opener):
    return opener()


def ids(hits):
    return [h.chunk_id for h in hits]


# ---- writing and reading -----------------------------------------------------

def test_implements_the_protocol(store):
    assert isinstance(store, Store)


def test_add_then_read_back(store, build):
    doc, recs = build.make_doc("d1", "주식소각결정 공시", ["자기주식을 소각하기로 결정했다.", "소각 예정일은 6월이다."],
                               headings=[("개요",), ("개요", "일정")], date="2024-06-03")
    store.put_document(doc, recs)

    assert store.fingerprints() == {"d1": doc.fingerprint()}
    got = store.chunks(["d1#0", "d1#1", "missing"])
    assert set(got) == {"d1#0", "d1#1"}
    for rec in recs:
        c = got[rec.chunk.id]
        assert c == rec.chunk
        assert isinstance(c.heading_path, tuple)
    terms = store.chunk_terms(["d1#1"])
    assert terms == {"d1#1": set(recs[1].title_terms + recs[1].heading_terms + recs[1].body_terms)}
    st = store.stats()
    assert (st.documents, st.chunks) == (1, 2)
    assert st.by_lang == {"ko": 1}
    assert st.by_source == {"test": 1}
    assert st.size_bytes > 0


@pytest.mark.parametrize("staged", [False, True], ids=["in one batch", "staged"])
def test_each_chunk_keeps_where_it_came_from(store, build, staged):
    from chaja.documents import Location

    where = [Location("page", 3, 3), Location("row", 2, 41, "단가표: 2024"), None, Location("slide", 5, 6)]
    doc, recs = build.make_doc("f", "요금표", ["전기요금 단가", "품목: 전기요금", "위치 없음", "slides"],
                               locations=where)
    if staged:
        store.resume_staged("f", "k")
        store.stage_chunks("k", recs[:2])
        store.stage_chunks("k", recs[2:])
        store.put_staged(doc, "k", len(recs))
    else:
        store.put_document(doc, recs)
    got = store.chunks([r.chunk.id for r in recs])
    assert [got[r.chunk.id].location for r in recs] == where
    assert got["f#1"].location.label == "sheet '단가표: 2024', rows 2–41"


def test_empty_store_answers_empty(store, build):
    assert store.fingerprints() == {}
    assert store.keyword(["소각"], 5) == []
    assert store.vector(build.unit(1), 5) == []
    assert store.chunks([]) == {} and store.chunk_terms([]) == {}
    assert store.stats().chunks == 0


def test_replace_leaves_no_old_chunks(store, build):
    v1, r1 = build.make_doc("d", "old title", ["alpha one", "alpha two", "alpha three"])
    store.put_document(v1, r1)
    other, ro = build.make_doc("o", "other", ["alpha elsewhere"])
    store.put_document(other, ro)
    v2, r2 = build.make_doc("d", "new title", ["omega only"], vectors=[build.unit(999)])
    store.put_document(v2, r2)

    assert store.fingerprints() == {"d": v2.fingerprint(), "o": other.fingerprint()}
    assert store.fingerprints(["o", "missing", "o"]) == {"o": other.fingerprint()}
    assert store.fingerprints([]) == {}
    assert set(store.chunks(["d#0", "d#1", "d#2"])) == {"d#0"}
    assert store.chunks(["d#0"])["d#0"].text == "omega only"
    assert ids(store.keyword(["alpha"], 10)) == ["o#0"]
    assert ids(store.keyword(["omega"], 10)) == ["d#0"]
    assert ids(store.keyword(["old"], 10)) == []
    # The old vectors are gone from the vector index too.
    assert set(ids(store.vector(r1[1].vector, 10))) == {"d#0", "o#0"}
    assert store.stats().chunks == 2


def test_delete(store, build):
    a, ra = build.make_doc("a", "first", ["shared words here", "more"])
    b, rb = build.make_doc("b", "second", ["shared words there"])
    store.put_document(a, ra)
    store.put_document(b, rb)

    assert store.delete_document("a") is True
    assert store.delete_document("a") is False
    assert store.delete_document("never") is False
    assert store.fingerprints() == {"b": b.fingerprint()}
    assert store.chunks(["a#0", "a#1"]) == {}
    assert ids(store.keyword(["shared"], 10)) == ["b#0"]
    assert ids(store.vector(ra[0].vector, 10)) == ["b#0"]
    assert (store.stats().documents, store.stats().chunks) == (1, 1)


def test_fingerprints_track_every_document(store, build):
    docs = [build.make_doc(f"doc-{i}", f"title {i}", [f"body {i}"]) for i in range(5)]
    for d, r in docs:
        store.put_document(d, r)
    assert store.fingerprints() == {d.id: d.fingerprint() for d, _ in docs}
    # A document with no chunks is still a document.
    empty, _ = build.make_doc("empty", "nothing", [])
    store.put_document(empty, [])
    assert store.fingerprints()["empty"] == empty.fingerprint()
    assert store.stats().documents == 6


def test_meta(store):
    assert store.get_meta("model") is None
    store.set_meta("model", "e5-small")
    store.set_meta("model", "e5-base")
    store.set_meta("분석기", "bigram")
    assert store.get_meta("model") == "e5-base"
    assert store.get_meta("분석기") == "bigram"


# ---- keyword candidates --------------------------------------------------------

@pytest.fixture
def filings(store, build):
    """Three Korean documents and one English one, built for the keyword tests."""
    docs = [
        build.make_doc("title-hit", "주식소각결정", ["이사회는 오늘 안건을 의결했다."]),
        build.make_doc("body-hit", "분기보고서", ["이 회사는 주식소각결정 사실을 밝혔다."]),
        build.make_doc("unrelated", "유상증자결정", ["신주를 발행하여 자금을 조달한다."]),
        build.make_doc("english", "Share cancellation", ["The board decided to cancel shares."], lang="en"),
    ]
    for d, r in docs:
        store.put_document(d, r)
    return store


def test_keyword_title_weight_puts_title_match_first(filings):
    terms = bigram_terms("주식소각")
    assert ids(filings.keyword(terms, 10)) == ["title-hit#0", "body-hit#0"]
    assert ids(filings.keyword(terms, 10, title_weight=4.0)) == ["title-hit#0", "body-hit#0"]
    # The weight is really used: a title worth a tenth of the body loses.
    assert ids(filings.keyword(terms, 10, title_weight=0.1)) == ["body-hit#0", "title-hit#0"]
    hits = filings.keyword(terms, 10)
    assert hits[0].score >= hits[1].score


def test_keyword_heading_weight(store, build):
    d1, r1 = build.make_doc("h", "문서", ["아무 내용"], headings=[("배당정책",)])
    d2, r2 = build.make_doc("b", "문서", ["배당정책 설명"])
    store.put_document(d1, r1)
    store.put_document(d2, r2)
    terms = bigram_terms("배당정책")
    assert ids(store.keyword(terms, 5, heading_weight=3.0)) == ["h#0", "b#0"]
    assert ids(store.keyword(terms, 5, heading_weight=0.1)) == ["b#0", "h#0"]


def test_keyword_field_title(filings):
    terms = bigram_terms("주식소각")
    assert ids(filings.keyword(terms, 10, field="title")) == ["title-hit#0"]
    assert ids(filings.keyword(["이사회"], 10, field="title")) == []
    assert ids(filings.keyword(["이사", "사회"], 10)) == ["title-hit#0"]


def test_keyword_is_or_over_terms(filings):
    found = ids(filings.keyword(["신주", "board"], 10))
    assert sorted(found) == ["english#0", "unrelated#0"]


def test_keyword_lang_filter(filings):
    terms = ["shares"] + bigram_terms("주식소각")
    assert set(ids(filings.keyword(terms, 10))) == {"title-hit#0", "body-hit#0", "english#0"}
    assert ids(filings.keyword(terms, 10, lang="en")) == ["english#0"]
    assert set(ids(filings.keyword(terms, 10, lang="ko"))) == {"title-hit#0", "body-hit#0"}
    assert ids(filings.keyword(terms, 10, lang="fr")) == []


def test_keyword_limit_and_order(store, build):
    # More occurrences of the term rank higher; n caps the list.
    for k in range(1, 6):
        d, r = build.make_doc(f"k{k}", "제목", [" ".join(["배당"] * k + ["기타"] * (6 - k))])
        store.put_document(d, r)
    hits = store.keyword(["배당"], 3)
    assert ids(hits) == ["k5#0", "k4#0", "k3#0"]
    assert hits[0].score > hits[1].score > hits[2].score
    assert store.keyword(["배당"], 0) == []


HOSTILE = ['"', "'", "''", '"quoted"', "*", "a*", "-", "-x", ":", "title:x", "&", "|", "!", "(", ")",
           "()", "\\", "\\'", "NEAR", "NEAR(a b)", "AND", "OR", "NOT", "a OR b", "^", "{", "}", "<->",
           "<2>", "a:*", "'a':A", "😀", "👍🏽", " ", "", "\t\n", "%s", "%(n)s", "?", ";",
           "--", "/*", "$1", "\u200b", "\ud7a3", "ㄱ", "\udcff", "a\ud800b", "주식\udcff"]   # lone surrogates last


@pytest.mark.parametrize("field", ["all", "title"])
def test_hostile_terms_never_raise(filings, field):
    assert filings.keyword([], 10, field=field) == []
    for t in HOSTILE:
        hits = filings.keyword([t], 10, field=field)
        assert isinstance(hits, list), t
        hits = filings.keyword([t, "주식"], 10, field=field, lang="ko")
        assert "title-hit#0" in ids(hits), t
    # All at once, and with a real term among them.
    assert isinstance(filings.keyword(HOSTILE, 10, field=field), list)
    assert "title-hit#0" in ids(filings.keyword(HOSTILE + ["소각"], 10, field=field))


@pytest.mark.parametrize("term", ["\x00", "x\x00y", "\x00\"", "주식\x00"],
                         ids=["nul", "x-nul-y", "nul-quote", "hangul-nul"])
def test_nul_in_a_term_never_raises(filings, term):
    # chaja's analyser never yields U+0000, but a store must not choke on it either.
    assert isinstance(filings.keyword([term], 10), list)
    assert isinstance(filings.keyword([term], 10, field="title"), list)


def test_hostile_terms_match_nothing_by_themselves(filings):
    for t in ["NEAR", "AND", "OR", "NOT", "*", "title:x", "&", "|", "!", '"', "\\"]:
        assert filings.keyword([t], 10) == [], t


# ---- vector candidates ---------------------------------------------------------

def test_vector_exact_nearest_neighbours(store, build):
    rng = np.random.default_rng(7)
    vecs = rng.standard_normal((40, build.DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    for i in range(0, 40, 4):
        d, r = build.make_doc(f"v{i}", f"doc {i}", [f"chunk {j}" for j in range(4)], vectors=list(vecs[i:i + 4]))
        store.put_document(d, r)
    names = [f"v{i - i % 4}#{i % 4}" for i in range(40)]
    for qi in range(5):
        q = rng.standard_normal(build.DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        sims = vecs @ q
        order = np.argsort(-sims, kind="stable")[:10]
        hits = store.vector(q, 10)
        assert ids(hits) == [names[i] for i in order]
        assert np.allclose([h.score for h in hits], sims[order], atol=1e-5)
    # Asking for more than there is returns everything.
    assert len(store.vector(vecs[0], 100)) == 40
    assert ids(store.vector(vecs[3], 1)) == [names[3]]


def test_vector_lang_filter(store, build):
    ko, rko = build.make_doc("ko", "한국어", ["하나", "둘"], vectors=[build.unit(1), build.unit(2)])
    mixed = build.unit(1) + build.unit(3)
    en, ren = build.make_doc("en", "English", ["one"], lang="en", vectors=[mixed / np.linalg.norm(mixed)])
    store.put_document(ko, rko)
    store.put_document(en, ren)
    assert ids(store.vector(build.unit(1), 5))[0] == "ko#0"
    assert ids(store.vector(build.unit(1), 5, lang="en")) == ["en#0"]
    assert set(ids(store.vector(build.unit(1), 5, lang="ko"))) == {"ko#0", "ko#1"}
    assert store.vector(build.unit(1), 5, lang="fr") == []


def test_heading_vectors_are_their_own_field(store, build):
    d, r = build.make_doc("h", "문서", ["머리말 앞", "본문 하나", "본문 둘"], headings=[(), ("설치",), ("설치", "요구 사항")])
    r[1].heading_vector, r[2].heading_vector = build.unit(5), build.unit(6)
    store.put_document(d, r)
    # only chunks with a heading vector take part, ranked by it (not by the chunk vector)
    assert ids(store.vector(build.unit(6), 10, field="heading")) == ["h#2", "h#1"]
    assert ids(store.vector(build.unit(5), 1, field="heading")) == ["h#1"]
    assert store.vector(build.unit(5), 1, field="heading")[0].score == pytest.approx(1.0, abs=1e-5)
    assert ids(store.vector(build.unit(5), 10, field="heading", lang="en")) == []
    assert len(store.vector(build.unit(5), 10)) == 3
    # replacing the document without heading vectors removes the old ones; so does delete
    d2, r2 = build.make_doc("h", "문서", ["본문"], headings=[("설치",)])
    store.put_document(d2, r2)
    assert store.vector(build.unit(5), 10, field="heading") == []
    r2[0].heading_vector = build.unit(5)
    store.put_document(d2, r2)
    assert ids(store.vector(build.unit(5), 10, field="heading")) == ["h#0"]
    store.delete_document("h")
    assert store.vector(build.unit(5), 10, field="heading") == []
    with pytest.raises(StoreError):
        store.vector(build.unit(5), 3, field="title")


def test_aligned_vectors_are_fields_of_their_own_dimension(store, build):
    d, r = build.make_doc("a", "문서", ["하나", "둘", "셋"], headings=[(), ("설치",), ("설치", "요구 사항")])
    wide = lambda i: np.eye(12, dtype=np.float32)[i]   # noqa: E731 - the aligned encoder's own dimension
    for i, rec in enumerate(r):
        rec.aligned_vector = wide(i)
    r[1].aligned_heading_vector, r[2].aligned_heading_vector = wide(5), wide(6)
    store.put_document(d, r)
    assert ids(store.vector(wide(2), 1, field="aligned")) == ["a#2"]
    assert store.vector(wide(2), 1, field="aligned")[0].score == pytest.approx(1.0, abs=1e-5)
    assert len(store.vector(wide(2), 10, field="aligned")) == 3
    assert ids(store.vector(wide(6), 10, field="aligned_heading")) == ["a#2", "a#1"]
    assert store.vector(wide(2), 10, field="aligned", lang="en") == []
    assert ids(store.vector(build.unit(0), 10)) != []          # the chunk vectors are untouched
    with pytest.raises(StoreError):
        store.vector(build.unit(0), 3, field="aligned")        # wrong dimension for that field
    store.delete_document("a")
    assert store.vector(wide(2), 10, field="aligned") == []


def test_vector_scores_of_given_chunks(store, build):
    d, r = build.make_doc("s", "문서", ["하나", "둘", "셋"], headings=[(), ("설치",), ("설치",)])
    r[1].heading_vector = build.unit(3)
    store.put_document(d, r)
    q = build.unit(3)
    chunk = store.vector_scores(q, ["s#0", "s#1", "s#2", "missing"])
    assert set(chunk) == {"s#0", "s#1", "s#2"}
    full = {h.chunk_id: h.score for h in store.vector(q, 10)}
    for cid, score in chunk.items():
        assert score == pytest.approx(full[cid], abs=1e-5)
    assert store.vector_scores(q, ["s#0", "s#1", "s#2"], field="heading") == {"s#1": pytest.approx(1.0, abs=1e-5)}
    assert store.vector_scores(q, []) == {}


def test_vector_sample_returns_stored_vectors(store, build):
    assert store.vector_sample(10).shape[0] == 0
    d, r = build.make_doc("v", "문서", ["하나", "둘", "셋", "넷"])
    store.put_document(d, r)
    sample = store.vector_sample(10)
    assert sample.shape[0] == 4
    stored = {tuple(np.round(np.asarray(x.vector, dtype=np.float32), 5)) for x in r}
    assert {tuple(np.round(v, 5)) for v in sample} == stored
    assert store.vector_sample(2).shape[0] == 2
    assert store.vector_sample(10, field="heading").shape[0] == 0
    # below the store's size, the same chunks in every store: the first n by md5 of the chunk id
    from chaja.stores.base import sample_order
    first = sorted(r, key=lambda x: sample_order(x.chunk.id))[:2]
    assert {tuple(np.round(v, 5)) for v in store.vector_sample(2)} == \
        {tuple(np.round(np.asarray(x.vector, dtype=np.float32), 5)) for x in first}


def test_stored_vectors_of_given_chunks(store, build):
    d, r = build.make_doc("w", "문서", ["하나", "둘", "셋"], headings=[(), ("설치",), ()])
    r[1].heading_vector = build.unit(3)
    store.put_document(d, r)
    got = store.stored_vectors(["w#2", "w#0", "missing", "w#0"])
    assert set(got) == {"w#0", "w#2"}
    for x in (r[0], r[2]):
        assert np.allclose(got[x.chunk.id], np.asarray(x.vector, dtype=np.float32), atol=1e-5)
    assert set(store.stored_vectors(["w#0", "w#1", "w#2"], field="heading")) == {"w#1"}
    assert store.stored_vectors([]) == {}
    with pytest.raises(StoreError):
        store.stored_vectors(["w#0"], field="nope")


def test_chunk_sample_returns_stored_chunks_in_sample_order(store, build):
    assert store.chunk_sample(10) == []
    d, r = build.make_doc("s", "문서", ["하나", "둘", "셋", "넷"], headings=[("가",), ("나",), (), ()])
    store.put_document(d, r)
    from chaja.stores.base import sample_order
    want = sorted(r, key=lambda x: sample_order(x.chunk.id))
    got = store.chunk_sample(10)
    assert [c.id for c in got] == [x.chunk.id for x in want]
    assert [(c.text, c.heading_path, c.lang) for c in got] == [(x.chunk.text, x.chunk.heading_path, "ko") for x in want]
    assert [c.id for c in store.chunk_sample(2)] == [x.chunk.id for x in want[:2]]
    d2, r2 = build.make_doc("t", "둘째", ["다섯", "여섯"])     # a write after a sample: the sample follows it
    store.put_document(d2, r2)
    store.delete_document("s")
    assert [c.id for c in store.chunk_sample(10)] == sorted((x.chunk.id for x in r2), key=sample_order)
    assert store.vector_sample(10).shape[0] == 2


def test_sample_fingerprint_follows_what_the_sample_reads(store, build):
    """Equal while no sampled chunk is written; a sampled chunk's document changed (its text,
    same ids), a chunk new in the sample, or one gone from it, each change it; a chunk that
    falls outside the sample does not. No text is read to take it."""
    from chaja.stores.base import sample_order
    d, r = build.make_doc("s", "문서", ["하나", "둘", "셋", "넷"])
    store.put_document(d, r)
    first = store.sample_fingerprint(2)
    assert first == store.sample_fingerprint(2) and first != store.sample_fingerprint(3)
    cut = sorted(sample_order(x.chunk.id) for x in r)[1]
    outside = next(f"o{i}" for i in range(200) if sample_order(f"o{i}#0") > cut)
    e, q = build.make_doc(outside, "밖", ["다섯"])
    store.put_document(e, q)
    assert store.sample_fingerprint(2) == first
    d2, r2 = build.make_doc("s", "문서", ["하나 더", "둘", "셋", "넷"])     # the same chunk ids, a new text
    store.put_document(d2, r2)
    changed = store.sample_fingerprint(2)
    assert changed != first
    inside = next(f"i{i}" for i in range(200) if sample_order(f"i{i}#0") < cut)
    f, t = build.make_doc(inside, "안", ["여섯"])
    store.put_document(f, t)
    assert store.sample_fingerprint(2) != changed
    store.delete_document(inside)
    assert store.sample_fingerprint(2) == changed


def test_chunk_languages_and_documents(store, build):
    d, r = build.make_doc("ko-doc", "문서", ["하나", "둘"])
    e, q = build.make_doc("en-doc", "Doc", ["one"], lang="en")
    store.put_document(d, r)
    store.put_document(e, q)
    asked = ["ko-doc#0", "ko-doc#1", "en-doc#0", "missing"]
    assert store.chunk_languages(asked) == {"ko-doc#0": "ko", "ko-doc#1": "ko", "en-doc#0": "en"}
    assert store.doc_ids(asked) == {"ko-doc#0": "ko-doc", "ko-doc#1": "ko-doc", "en-doc#0": "en-doc"}
    assert store.chunk_languages([]) == {} and store.doc_ids([]) == {}
    store.delete_document("ko-doc")
    assert store.doc_ids(["ko-doc#0", "en-doc#0"]) == {"en-doc#0": "en-doc"}


def test_aligned_vectors_given_later_to_chunks_that_have_none(store, build):
    """A store of one language grown into two: chunks written without aligned vectors are
    listed, in id order and by pages, and given theirs; a chunk that has them keeps them;
    the aligned lists find them, and the keyword list is as it was."""
    d, r = build.make_doc("ko", "문서", ["하나의 조각", "둘째 조각", "셋째 조각"], headings=[("절",), (), ()])
    e, q = build.make_doc("en", "Doc", ["one piece"], lang="en")
    q[0].aligned_vector = q[0].aligned_heading_vector = build.unit(40)
    store.put_document(d, r)
    store.put_document(e, q)
    assert [c.id for c in store.chunks_without_aligned("", 2)] == ["ko#0", "ko#1"]
    assert [c.id for c in store.chunks_without_aligned("ko#1", 10)] == ["ko#2"]
    before = ids(store.keyword(["조각"], 10))
    given = [("ko#0", build.unit(41), build.unit(42)), ("ko#1", build.unit(43), None),
             ("ko#2", build.unit(44), None), ("en#0", build.unit(45), None), ("gone", build.unit(46), None)]
    assert store.put_aligned_vectors(given) == 3
    assert store.chunks_without_aligned("", 10) == []
    assert ids(store.vector(build.unit(41), 1, field="aligned")) == ["ko#0"]
    assert ids(store.vector(build.unit(42), 1, field="aligned_heading")) == ["ko#0"]
    assert ids(store.vector(build.unit(40), 1, field="aligned")) == ["en#0"]        # kept its own
    assert ids(store.keyword(["조각"], 10)) == before
    with pytest.raises(StoreError):
        store.put_aligned_vectors([("ko#0", np.ones(build.DIM + 1, np.float32), None)])


def test_chunks_of_one_section_share_its_heading_vector(store, build):
    d, r = build.make_doc("s", "문서", ["첫 조각", "둘째 조각", "다른 절"], headings=[("설치",), ("설치",), ("사용",)])
    r[0].heading_vector = r[1].heading_vector = build.unit(5)
    r[2].heading_vector = build.unit(6)
    store.put_document(d, r)
    hits = store.vector(build.unit(5), 10, field="heading")
    assert ids(hits) == ["s#0", "s#1", "s#2"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5) and hits[1].score == pytest.approx(hits[0].score)
    assert ids(store.vector(build.unit(5), 1, field="heading")) == ["s#0"]
    assert ids(store.vector(build.unit(6), 2, field="heading")) == ["s#2", "s#0"]


def test_heading_vector_of_wrong_dimension_is_refused(store, build):
    d, r = build.make_doc("h", "문서", ["본문"], headings=[("설치",)])
    store.put_document(d, r)
    d2, r2 = build.make_doc("h", "문서 2", ["본문 2"], headings=[("설치",)])
    r2[0].heading_vector = build.unit(1, build.DIM + 1)
    with pytest.raises(StoreError):
        store.put_document(d2, r2)
    assert store.chunks(["h#0"])["h#0"].title == "문서"


def test_language_means(store, build):
    assert store.language_means() == {}
    ko, rko = build.make_doc("ko", "한국어", ["하나", "둘", "셋"])
    en, ren = build.make_doc("en", "English", ["one"], lang="en")
    store.put_document(ko, rko)
    store.put_document(en, ren)
    means = store.language_means()
    assert set(means) == {"ko", "en"}
    count, mean = means["ko"]
    assert count == 3
    assert np.allclose(mean, np.mean([r.vector for r in rko], axis=0), atol=1e-6)
    assert means["en"][0] == 1 and np.allclose(means["en"][1], ren[0].vector, atol=1e-6)
    store.delete_document("en")
    assert set(store.language_means()) == {"ko"}


def test_vector_query_of_wrong_dimension_is_a_store_error(store, build):
    d, r = build.make_doc("d", "t", ["x"])
    store.put_document(d, r)
    with pytest.raises(StoreError):
        store.vector(build.unit(1, build.DIM + 1), 3)


# ---- atomicity and persistence -------------------------------------------------

def _assert_first_version_intact(store, doc, recs):
    assert store.fingerprints()[doc.id] == doc.fingerprint()
    assert set(store.chunks([r.chunk.id for r in recs] + [f"{doc.id}#9"])) == {r.chunk.id for r in recs}
    assert ids(store.keyword(["원래"], 10)) == [recs[0].chunk.id]
    assert ids(store.vector(recs[1].vector, 1)) == [recs[1].chunk.id]


@pytest.mark.parametrize("wrong", ["last", "all"])
def test_failed_put_keeps_previous_version_wrong_dimension(store, build, wrong):
    doc, recs = build.make_doc("d", "문서", ["원래 내용", "두번째"])
    store.put_document(doc, recs)
    new, new_recs = build.make_doc("d", "새 문서", ["바뀐 내용", "또", "마지막"])
    good = [r.vector for r in new_recs]
    for i, r in enumerate(new_recs):
        if wrong == "all" or i == len(new_recs) - 1:
            r.vector = build.unit(5 + i, build.DIM + 3)
    with pytest.raises(StoreError):
        store.put_document(new, new_recs)
    _assert_first_version_intact(store, doc, recs)
    # A later good write still works.
    for r, v in zip(new_recs, good):
        r.vector = v
    store.put_document(new, new_recs)
    assert store.fingerprints()["d"] == new.fingerprint()
    assert set(store.chunks(["d#0", "d#1", "d#2"])) == {"d#0", "d#1", "d#2"}


@pytest.mark.parametrize("field", ["vector", "heading_vector", "aligned_vector"])
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_vector_that_is_not_finite_is_refused_and_nothing_is_written(store, build, field, bad):
    """One NaN or infinite number would make every score of its field NaN: the write is
    refused, the chunk named, the previous version kept, and the same write without it goes in."""
    doc, recs = build.make_doc("d", "문서", ["원래 내용", "두번째"])
    store.put_document(doc, recs)
    new, new_recs = build.make_doc("d", "새 문서", ["바뀐 내용", "또"], headings=[("절",), ()])
    for r in new_recs:
        r.aligned_vector = build.unit(30)
    good = getattr(new_recs[1], field if field != "heading_vector" else "vector").copy()
    target = new_recs[0] if field == "heading_vector" else new_recs[1]
    broken = (build.unit(31) if field == "heading_vector" else good).copy()
    broken[2] = bad
    setattr(target, field, broken)
    with pytest.raises(StoreError, match=f"{target.chunk.id}.*NaN or infinity"):
        store.put_document(new, new_recs)
    _assert_first_version_intact(store, doc, recs)
    setattr(target, field, build.unit(31) if field == "heading_vector" else good)
    store.put_document(new, new_recs)
    assert store.fingerprints()["d"] == new.fingerprint()
    with pytest.raises(StoreError, match="NaN or infinity"):
        store.put_aligned_vectors([("d#0", np.full(build.DIM, np.nan, np.float32), None)])


def test_failed_put_keeps_previous_version_duplicate_chunk(store, build):
    doc, recs = build.make_doc("d", "문서", ["원래 내용", "두번째"])
    store.put_document(doc, recs)
    new, new_recs = build.make_doc("d", "새 문서", ["바뀐 내용", "또"])
    new_recs[1].chunk.id = new_recs[0].chunk.id  # the second insert fails mid-transaction
    with pytest.raises(Exception):
        store.put_document(new, new_recs)
    _assert_first_version_intact(store, doc, recs)


def test_reopen_keeps_everything(opener, build):
    s = opener()
    doc, recs = build.make_doc("d", "재시작 시험", ["내용이 남아 있다"], headings=[("머리",)])
    s.put_document(doc, recs)
    s.set_meta("analyzer", "bigram")
    s.close()

    s2 = opener()
    assert s2.fingerprints() == {"d": doc.fingerprint()}
    assert s2.chunks(["d#0"])["d#0"] == recs[0].chunk
    assert ids(s2.keyword(["시험"], 5)) == ["d#0"]
    assert ids(s2.vector(recs[0].vector, 5)) == ["d#0"]
    assert s2.get_meta("analyzer") == "bigram"
    # The dimension survives too.
    bad, bad_recs = build.make_doc("e", "x", ["y"], vectors=[build.unit(1, build.DIM * 2)])
    with pytest.raises(StoreError):
        s2.put_document(bad, bad_recs)


def test_reads_inside_reading_see_the_store_as_of_its_start(opener, build):
    reader, writer = opener(), opener()
    writer.put_document(*build.make_doc("a", "첫 문서", ["배당금 지급 일정"]))
    with reader.reading():
        assert ids(reader.keyword(bigram_terms("배당금"), 5)) == ["a#0"]
        writer.put_document(*build.make_doc("b", "둘째 문서", ["배당금 지급 결정"]))   # another process commits
        assert ids(reader.keyword(bigram_terms("배당금"), 5)) == ["a#0"]        # the block's view
        with reader.reading():                                                   # nested: still that view
            assert ids(reader.keyword(bigram_terms("결정"), 5)) == []
    assert sorted(ids(reader.keyword(bigram_terms("배당금"), 5))) == ["a#0", "b#0"]   # after the block
    with reader.reading():
        assert ids(reader.keyword(bigram_terms("결정"), 5)) == ["b#0"]            # a new block starts fresh
