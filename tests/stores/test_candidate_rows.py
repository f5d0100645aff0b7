"""One search's candidates looked up once (:mod:`chaja.stores.candidate_rows`), on a real
SQLite store, against the store's one-question-at-a-time reads."""
import numpy as np
import pytest

from chaja.stores.base import StoreError
from chaja.stores.sqlite import SqliteStore


def test_candidate_rows_answer_as_the_store_does_and_decode_a_field_once(tmp_path, build):
    with SqliteStore(tmp_path / "s.chaja") as s:
        d, r = build.make_doc("s", "문서", ["하나", "둘", "셋"], headings=[(), ("설치",), ("설치",)])
        r[1].heading_vector = build.unit(3)
        s.put_document(d, r)
        d2, r2 = build.make_doc("t", "doc", ["one"], lang="en")
        s.put_document(d2, r2)
        ids = ["s#2", "missing", "t#0", "s#0", "s#1"]
        found = s.candidate_rows(ids)
        assert found.langs.tolist() == ["ko", None, "en", "ko", "ko"]
        q, other = build.unit(3), build.unit(3)
        for query in (q, other):
            for field in ("chunk", "heading"):
                expected = s.vector_scores(query, ids, field=field)
                got = found.cosines(query, field)
                assert {c: v for c, v in zip(ids, got.tolist()) if not np.isnan(v)} == expected   # to the bit
        stored = s.stored_vectors(["s#0", "s#2", "missing"], "chunk")
        vectors = found.vectors([3, 0, 1], "chunk")          # s#0, s#2; "missing" has none
        assert len(vectors) == 2 and all(np.array_equal(a, b) for a, b in zip(vectors, stored.values()))
        assert [i for i in found.field("heading")[0].tolist()] == [4]
        assert found.field("chunk")[1] is found.field("chunk")[1]           # decoded once
        with pytest.raises(StoreError):
            found.cosines(np.ones(4, np.float32), "chunk")
        empty = s.candidate_rows([])
        assert empty.cosines(q, "chunk").shape == (0,) and empty.vectors([], "chunk") == []
