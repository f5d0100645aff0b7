"""A postings segment (chaja.stores.postings_segment): its tokens and its term lookups."""
from __future__ import annotations

from chaja.stores import postings, postings_segment


def test_tokens_are_fts5_ascii_tokens():
    assert postings_segment.fts_tokens("Hello, World-2 자기주식") == ["hello", "world", "2", "자기주식"]
    assert postings_segment.fts_tokens("plain lower words") == ["plain", "lower", "words"]
    assert postings_segment.fts_tokens("  ") == []


def test_remembered_slots_are_the_slots_looked_up_and_stay_bounded(monkeypatch):
    monkeypatch.setattr(postings_segment, "SLOT_MEMO", 3)
    words = [f"w{i}" for i in range(10)]
    seg = postings.build([(i, "en", "", "", " ".join(words[: i + 1])) for i in range(10)])
    asked = words + ["absent", "w3", "w0", "absent"]
    assert [seg.term_slot(w) for w in asked] == [seg._find_slot(w) for w in asked]
    assert seg.term_slot("absent") == -1 and len(seg._slots) <= 3
    assert [len(seg.postings(w)[0]) for w in words] == list(range(10, 0, -1))
