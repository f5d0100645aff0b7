"""The SQLite store's candidate lists (:mod:`chaja.stores.sqlite_search`): keyword and
vector (the shared contract lives in test_contract.py)."""
import numpy as np

from chaja.analysis import bigram_terms
from chaja.stores.sqlite import SqliteStore
from one_chunk import put


def test_query_text_is_never_syntax(tmp_path):
    """Quotes, FTS5 operators and NULs in terms are matched as the words they hold, or nothing."""
    with SqliteStore(tmp_path / "s.chaja") as s:
        put(s, "a", "near or not", "and or not near", np.eye(4, dtype=np.float32)[0])
        for terms in (['"near'], ["near*"], ["NEAR(a b)"], ["or", "and"], ["\x00not"], ["{title}:near"]):
            assert [h.chunk_id for h in s.keyword(terms, 5)] == ["a#0"], terms
        assert s.keyword(['"', "*", "(", "\x00"], 5) == []


def test_bigram_terms_match_exactly_not_by_prefix(tmp_path):
    with SqliteStore(tmp_path / "s.chaja") as s:
        v = np.eye(4, dtype=np.float32)
        put(s, "a", "소각결정", "주식 소각", v[0])
        put(s, "b", "소각", "소각", v[1])
        put(s, "c", "React", "react18 ㅋㅋ", v[2])
        assert {h.chunk_id for h in s.keyword(["소각"], 10)} == {"a#0", "b#0"}
        assert {h.chunk_id for h in s.keyword(["각결"], 10)} == {"a#0"}
        assert s.keyword(["react"], 10)[0].chunk_id == "c#0"
        assert s.keyword(["react1"], 10) == []   # no prefix matching
        assert s.keyword(bigram_terms("ㅋㅋ"), 10)[0].chunk_id == "c#0"
        assert s.chunk_terms(["a#0"])["a#0"] == {"소각", "각결", "결정", "주식"}


def test_vector_search_is_exact_and_cached_until_a_write(tmp_path):
    with SqliteStore(tmp_path / "s.chaja") as s:
        rng = np.random.default_rng(0)
        vecs = rng.normal(size=(30, 8)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        for i, v in enumerate(vecs):
            put(s, f"d{i:02d}", f"문서{i}", "본문", v)
        q = vecs[7]
        expected = [f"d{i:02d}#0" for i in np.argsort(-(vecs @ q))[:5]]
        assert [h.chunk_id for h in s.vector(q, 5)] == expected
        s.delete_document("d07")
        assert s.vector(q, 1)[0].chunk_id != "d07#0"


def test_a_filter_scores_only_the_rows_that_pass_and_finds_what_scoring_every_row_finds():
    from chaja.stores import sqlite_search
    from chaja.stores.quantized import ScaledInt8

    rng = np.random.default_rng(3)
    floats = rng.normal(size=(400, 16)).astype(np.float32)
    q = rng.normal(size=16).astype(np.float32)
    ids = [f"c{i}" for i in range(400)]
    langs = np.array(["ko" if i % 3 else "en" for i in range(400)], dtype=object)
    for every, mat in ((every, mat) for every in (1.0, 0.0) for mat in (floats, ScaledInt8.quantize(floats))):
        sqlite_search.SCORE_EVERY_ROW_ABOVE = every      # only the passing rows scored (the default), or every row
        for share in (0.01, 0.05, 0.5, 1.0):
            passing = rng.random(400) < share
            for lang in (None, "en"):
                hits = sqlite_search._exact(q, 10, mat, ids, langs, lang, passing)
                keep = passing & ((langs == lang) if lang else True)
                want = np.flatnonzero(keep)[np.argsort(-(np.asarray(mat)[keep] @ q), kind="stable")][:10]
                assert [h.chunk_id for h in hits] == [ids[i] for i in want]
                assert all(keep[int(h.chunk_id[1:])] for h in hits)
    sqlite_search.SCORE_EVERY_ROW_ABOVE = 1.0
    assert sqlite_search._exact(q, 10, floats, ids, langs, None, np.zeros(400, dtype=bool)) == []
