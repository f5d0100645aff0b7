from chaja.documents import Chunk
from chaja.search.grouping import cap_per_document, group_by_document
from chaja.search.results import ChunkResult
from chaja.search.slots import keyword_slot_count, reserve


def test_slot_count_is_share_of_top_k():
    assert keyword_slot_count(5, 0.4) == 2
    assert keyword_slot_count(10, 0.4) == 4
    assert keyword_slot_count(10, 0.0) == 0


def test_reserved_first_then_fused_without_repeats():
    top, taken = reserve(["a", "b", "c", "d"], ["c", "x", "c"], 4)
    assert top == ["c", "x", "a", "b"] and taken == {"c", "x"}


def test_cap_per_document():
    doc_of = {"a1": "A", "a2": "A", "a3": "A", "b1": "B"}
    assert cap_per_document(["a1", "a2", "b1", "a3"], doc_of, 1) == ["a1", "b1"]
    assert cap_per_document(["a1", "a2", "b1", "a3"], doc_of, 2) == ["a1", "a2", "b1"]
    assert cap_per_document(["a1", "a2"], doc_of, 0) == ["a1", "a2"]


def test_grouping_keeps_first_appearance_order():
    def cr(cid, doc, score):
        return ChunkResult(Chunk(id=cid, doc_id=doc, ordinal=0, title=doc, heading_path=(), text=""), score)
    docs = group_by_document([cr("b#0", "B", 0.9), cr("a#0", "A", 0.8), cr("b#1", "B", 0.7)])
    assert [(d.doc_id, d.rank, len(d.chunks), d.score) for d in docs] == [("B", 1, 2, 0.9), ("A", 2, 1, 0.8)]
