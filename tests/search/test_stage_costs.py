"""Stage costs (chaja.search.stage_costs): recorded only inside ``recording``, every
stage of a real search named, nested stages within their parent, and the search's
result the same with recording on or off."""
from __future__ import annotations

import time

from chaja.search import stage_costs

TOP = ("context", "lists gathered", "named lists", "fusion", "weights", "reserved slots",
       "per-document cap", "chunks read", "result")


def test_a_search_records_each_stage_within_its_whole(corpus_index):
    corpus_index.search("무선 비밀번호 변경", 5)                 # encoders loaded, lexicon read
    with stage_costs.recording() as costs:
        t0 = time.perf_counter()
        recorded = corpus_index.search("무선 비밀번호 변경", 5)
        whole = time.perf_counter() - t0
    assert set(TOP) <= set(costs)
    assert {"context: encode", "lists: keyword", "lists: vector (keyword beside)"} <= set(costs)
    assert all(v >= 0 for v in costs.values())
    assert sum(costs[n] for n in TOP) <= whole
    assert costs["context: encode"] <= costs["context"]
    assert costs["lists: keyword"] <= costs["lists gathered"]
    plain = corpus_index.search("무선 비밀번호 변경", 5)
    assert [d.doc_id for d in plain.documents] == [d.doc_id for d in recorded.documents]


def test_nothing_is_recorded_outside_recording():
    assert stage_costs.timed("x", lambda a, b=0: a + b, 1, b=2) == 3
    with stage_costs.recording() as outer:
        stage_costs.timed("x", time.sleep, 0.001)
        with stage_costs.recording() as inner:
            stage_costs.timed("y", time.sleep, 0.001)
        stage_costs.timed("x", time.sleep, 0.001)
    assert set(outer) == {"x"} and outer["x"] >= 0.002 and set(inner) == {"y"}
