"""Reads of given chunks from the SQLite store (:mod:`chaja.stores.sqlite_reads`)."""
import numpy as np
import pytest

from chaja.stores.base import StoreError
from chaja.stores.sqlite import SqliteStore


def test_vector_scores_at_gives_the_languages_and_cosines_of_candidates_in_their_order(tmp_path, build):
    """The array form the searcher's fusion reads: what chunk_languages and vector_scores
    give, aligned with the ids asked (None / NaN where there is nothing), fresh after a write."""
    with SqliteStore(tmp_path / "s.chaja") as s:
        d, r = build.make_doc("s", "문서", ["하나", "둘", "셋"], headings=[(), ("설치",), ("설치",)])
        r[1].heading_vector = build.unit(3)
        s.put_document(d, r)
        ids = ["s#2", "missing", "s#0", "s#1"]
        q = build.unit(3)
        langs, (chunk, heading) = s.vector_scores_at(ids, [(q, "chunk"), (q, "heading")])
        expected = s.vector_scores(q, ids)
        assert langs.tolist() == [s.chunk_languages(ids).get(c) for c in ids] and langs[1] is None
        assert np.isnan(chunk[1]) and np.isnan(heading[[0, 1, 2]]).all()
        assert chunk[[0, 2, 3]] == pytest.approx([expected[c] for c in ("s#2", "s#0", "s#1")], abs=1e-6)
        assert heading[3] == pytest.approx(1.0, abs=1e-5)
        d2, r2 = build.make_doc("t", "새 문서", ["넷"], lang="en")
        s.put_document(d2, r2)                     # a write after the matrices were read
        langs, (chunk,) = s.vector_scores_at(["t#0", "s#0"], [(r2[0].vector, "chunk")])
        assert langs.tolist() == ["en", "ko"] and chunk[0] == pytest.approx(1.0, abs=1e-5)
        with pytest.raises(StoreError):
            s.vector_scores_at(["s#0"], [(np.ones(3, np.float32), "chunk")])
        assert s.vector_scores_at([], [(q, "chunk")])[1][0].shape == (0,)


def test_the_sample_order_cut_is_the_sort_by_the_key():
    """The first n ids by :func:`sample_order`, found by a partition of the digests' first
    bytes, are the first n of a full sort by that key, in its order, for every n."""
    from chaja.stores.base import first_by_digest, sample_digests, sample_order

    ids = [f"doc{i}#{i % 7}" for i in range(500)] + ["", "한국어#0", "x" * 300]
    by_key = sorted(range(len(ids)), key=lambda i: sample_order(ids[i]))
    for n in (0, 1, 2, 17, 250, len(ids) - 1, len(ids), len(ids) + 5):
        assert first_by_digest(sample_digests(ids), n).tolist() == by_key[:n]


def test_a_side_fields_sample_is_its_own_rows_in_sample_order(tmp_path, build):
    """The heading field's sample, its digests gathered from the chunk field's, is the first
    of its own rows by sample order, before and after a write."""
    from chaja.stores.base import sample_order

    with SqliteStore(tmp_path / "h.chaja") as s:
        d, r = build.make_doc("h", "문서", [f"본문 {i}" for i in range(12)], headings=[(f"절 {i}",) for i in range(12)])
        for i, rec in enumerate(r):
            rec.heading_vector = build.unit(i % 3) if i % 2 else None
        s.put_document(d, r)
        with_heading = sorted((rec for rec in r if rec.heading_vector is not None),
                              key=lambda x: sample_order(x.chunk.id))
        for n in (1, 3, 6, 10):
            got = s.vector_sample(n, field="heading")
            want = [rec.heading_vector for rec in with_heading[:n]]
            assert got.shape[0] == min(n, 6)
            assert {tuple(np.round(v, 4)) for v in got} == {tuple(np.round(v, 4)) for v in want}
        assert [c.id for c in s.chunk_sample(4)] == sorted((x.chunk.id for x in r), key=sample_order)[:4]
        d2, r2 = build.make_doc("g", "둘째", ["하나"], headings=[("절",)])
        r2[0].heading_vector = build.unit(1)
        s.put_document(d2, r2)
        assert s.vector_sample(10, field="heading").shape[0] == 7
        assert s._sample_rows("heading", 7)[1] == sorted([x.chunk.id for x in with_heading] + ["g#0"], key=sample_order)


@pytest.mark.parametrize("languages", [("ko", "en", ""), ("en",)])
def test_language_means_summed_block_by_block_are_each_languages_mean(tmp_path, build, monkeypatch, languages):
    """Summed a few rows at a time, the means are each language's rows' mean, with its count."""
    from chaja.stores import sqlite_reads

    monkeypatch.setattr(sqlite_reads, "MEAN_BLOCK", 4)
    with SqliteStore(tmp_path / "m.chaja") as s:
        for i in range(11):
            d, r = build.make_doc(f"d{i}", "문서", ["본문"], lang=languages[i % len(languages)])
            r[0].vector = build.unit(i + 1)
            s.put_document(d, r)
        mat, _, langs = s._vectors()
        got = s.language_means()
        assert sorted(got) == sorted(set(languages))
        for lang, (count, mean) in got.items():
            rows = np.asarray(mat, dtype=np.float64)[langs == lang]
            assert count == rows.shape[0] and np.allclose(mean, rows.mean(axis=0), atol=1e-6)


def test_the_counts_are_read_again_after_any_write_and_not_after_settings(tmp_path, build):
    """stats() keeps the counts it read until a write could change them: this store's own
    write, or another connection's (another process's) commit; settings written between
    (an index run's statistics) leave them kept."""
    import sqlite3

    with SqliteStore(tmp_path / "c.chaja") as s:
        d, r = build.make_doc("a", "문서", ["하나", "둘"])
        s.put_document(d, r)
        reads = []
        s._db.set_trace_callback(lambda sql: reads.append(sql) if "COUNT(*)" in sql else None)
        first = s.stats()
        assert (first.documents, first.chunks, first.by_lang) == (1, 2, {"ko": 1}) and len(reads) == 2
        s.set_meta("x", "1")
        assert s.stats().chunks == 2 and len(reads) == 2                       # kept
        d2, r2 = build.make_doc("b", "doc", ["one"], lang="en")
        s.put_document(d2, r2)
        again = s.stats()
        assert (again.documents, again.chunks, again.by_lang) == (2, 3, {"ko": 1, "en": 1}) and len(reads) == 4
        other = sqlite3.connect(s.path)
        other.execute("PRAGMA foreign_keys=ON")                          # (its chunks go with it)
        other.execute("DELETE FROM documents WHERE id = 'b'")            # another connection's commit
        other.commit()
        other.close()
        assert (s.stats().documents, s.stats().chunks) == (1, 2)
        first.by_lang["zz"] = 9                                          # a caller's copy, not the kept one
        assert s.stats().by_lang == {"ko": 1}
