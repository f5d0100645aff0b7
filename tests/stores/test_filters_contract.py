"""Search filters in every store (the SQLite file and PostgreSQL): each candidate list keeps exactly the chunks that pass, in the order the
unfiltered list ranks them, and a narrow filter still fills the list."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.analysis import bigram_terms
from chaja.filters import Filters

WIDE = 12


@pytest.fixture(params=["sqlite", "postgres"])
def opener(request, tmp_path):
    """Opens one store of the parametrised kind."""
    opened = []
    if request.param == "sqlite":
        from chaja.stores.sqlite import SqliteStore

        def open_():
            opened.append(SqliteStore(tmp_path / "store.db"))
            return opened[-1]
    else:
        dsn, schema = request.getfixturevalue("pg_dsn"), request.getfixturevalue("pg_schema")
        from chaja.stores.postgres import PostgresStore

        def open_():
            opened.append(PostgresStore(dsn, schema=schema))
            return opened[-1]
    yield open_
    for s in opened:
        s.close()


def _wide(seed: int) -> np.ndarray:
    v = np.random.default_rng(1000 + seed).standard_normal(WIDE).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def shelf(opener, build):
    """Twelve one-chunk documents over two languages, three sources, two types, dates
    across two years and two id prefixes; every chunk says 배당 and 'dividend'."""
    store = opener()
    chunks = {}
    for i in range(12):
        lang = "ko" if i % 2 else "en"
        doc_id = f"{'filings' if i < 6 else 'news'}/{i:02d}"
        date = None if i == 11 else f"{2023 + i % 2}-{(i % 12) + 1:02d}-15"
        d, r = build.make_doc(doc_id, f"문서 {i}", [f"배당 dividend 공시 {'추가 ' * i}"], headings=[("배당",)],
                              lang=lang, source=("dart", "wire", "manual")[i % 3],
                              doc_type=("report", "note")[i % 2 == 0 and i > 3], date=date)
        r[0].heading_vector = build.unit(100 + i)
        r[0].aligned_vector, r[0].aligned_heading_vector = _wide(i), _wide(50 + i)
        store.put_document(d, r)
        chunks[r[0].chunk.id] = r[0].chunk
    return store, chunks


CASES = [
    {"lang": "ko"},
    {"source": ["wire", "manual"]},
    {"doc_type": "note"},
    {"date_from": "2024-01-01"},
    {"date_to": "2023-06-30"},
    {"date_from": "2023-03-01", "date_to": "2023-09-30"},
    {"doc_id_prefix": "news/"},
    {"lang": "en", "doc_id_prefix": "filings/", "source": "dart"},
    {"source": "nowhere"},
]


def _passing(chunks, where):
    return {cid for cid, c in chunks.items() if where.matches(c)}


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(c))
def test_every_list_keeps_exactly_the_passing_chunks_in_order(shelf, build, case):
    store, chunks = shelf
    where = Filters.from_mapping(case)
    want = _passing(chunks, where)
    terms = bigram_terms("배당 공시") + ["dividend"]
    lists = [
        (store.keyword(terms, 100), store.keyword(terms, 100, where=where)),
        (store.keyword(terms, 100, field="title"), store.keyword(terms, 100, field="title", where=where)),
        (store.vector(build.unit(7), 100), store.vector(build.unit(7), 100, where=where)),
        (store.vector(build.unit(107), 100, field="heading"),
         store.vector(build.unit(107), 100, field="heading", where=where)),
        (store.vector(_wide(3), 100, field="aligned"), store.vector(_wide(3), 100, field="aligned", where=where)),
        (store.vector(_wide(53), 100, field="aligned_heading"),
         store.vector(_wide(53), 100, field="aligned_heading", where=where)),
    ]
    for everything, filtered in lists:
        got = [h.chunk_id for h in filtered]
        if everything and len(everything) == len(chunks):
            assert set(got) == want
        assert got == [h.chunk_id for h in everything if h.chunk_id in want]


def test_a_narrow_filter_still_fills_the_list(shelf, build):
    store, chunks = shelf
    where = Filters.from_mapping({"doc_id_prefix": "news/", "lang": "ko"})
    want = _passing(chunks, where)
    assert len(want) == 3
    assert not {h.chunk_id for h in store.vector(build.unit(2), 3)} <= want   # the filter has work to do
    assert {h.chunk_id for h in store.vector(build.unit(2), 3, where=where)} == want
    assert {h.chunk_id for h in store.keyword(["dividend"], 3, where=where)} == want


def test_filters_see_writes_and_deletes(shelf, build):
    store, chunks = shelf
    where = Filters.from_mapping({"source": "dart"})
    before = {h.chunk_id for h in store.keyword(["dividend"], 100, where=where)}
    d, r = build.make_doc("late/1", "늦은 문서", ["dividend 배당"], source="dart")
    store.put_document(d, r)
    after = {h.chunk_id for h in store.keyword(["dividend"], 100, where=where)}
    assert after == before | {"late/1#0"}
    assert "late/1#0" in {h.chunk_id for h in store.vector(r[0].vector, 100, where=where)}
    store.delete_document("late/1")
    assert {h.chunk_id for h in store.keyword(["dividend"], 100, where=where)} == before


@pytest.mark.parametrize("hostile", ["%", "_", "'; DROP TABLE chunks; --", "news/%", "[", "\\"])
def test_filter_values_are_literals(shelf, hostile):
    store, chunks = shelf
    for case in ({"doc_id_prefix": hostile}, {"source": hostile}):
        assert store.keyword(["dividend"], 100, where=Filters.from_mapping(case)) == []
    got = store.keyword(["dividend"], 100, where=Filters.from_mapping({"lang": [hostile, "ko"]}))
    assert {h.chunk_id for h in got} == {cid for cid, c in chunks.items() if c.lang == "ko"}
    assert len(store.keyword(["dividend"], 100)) == 12


def test_documents_are_listed_in_pages_and_by_id(shelf):
    store, chunks = shelf
    first = store.documents(limit=5)
    assert [d.id for d in first] == sorted(c.doc_id for c in chunks.values())[:5]
    rest = store.documents(after=first[-1].id, limit=100)
    assert [d.id for d in first + rest] == sorted(c.doc_id for c in chunks.values())
    assert store.documents(after=rest[-1].id) == []
    got = store.documents(ids=["news/07", "missing", "filings/01"])
    assert [d.id for d in got] == ["filings/01", "news/07"]
    info = got[1]
    assert (info.lang, info.source, info.chunks, info.chunk_ids) == ("ko", "wire", 1, ["news/07#0"])
    assert info.fingerprint == store.fingerprints()["news/07"]
