"""Rankings kept: the mixed store's 120 questions, searched under settings that walk
every stage of the pipeline (each fusion method, each mode, the title path and slots,
reserved keyword slots, multipart questions, cross-language lists, language centering,
source and freshness weights, filters), give the chunks (in order; the documents follow
from them) and the lists recorded in ``tests/fixtures/rankings/mixed.jsonl``, question
by question.

A change to the search code that is meant to leave rankings alone (a refactor) must
pass unchanged. A change meant to move rankings writes the record again, and the
diff shows what moved:

    CHAJA_RECORD_RANKINGS=1 python -m pytest tests/search/test_rankings_kept.py
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from chaja.eval.questions import read_questions

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MIXED = FIXTURES / "mixed"
RECORD = FIXTURES / "rankings" / "mixed.jsonl"

#: name → (search settings, filters)
SETTINGS: dict[str, tuple[dict, dict | None]] = {
    "default": ({}, None),
    "keyword": ({"mode": "keyword"}, None),
    "vector": ({"mode": "vector"}, None),
    "rrf": ({"fusion": "rrf"}, None),
    "convex-zscore": ({"fusion": "convex", "normalization": "zscore", "aligned_list": False}, None),
    "slots": ({"title_path": True, "title_slot": True, "reserved_keyword_share": 0.3, "chunk_cap": 2}, None),
    "multipart": ({"multipart": True}, None),
    "cross-language": ({"cross_language_keyword": True, "cross_language_vector": True, "language_centering": True,
                        "feedback_weight": 0.5}, None),
    "weights": ({"source_weights": {"filings": 1.5, "news": 0.7}, "half_life_days": {"news": 30.0},
                 "now": "2025-01-01"}, None),
    "korean-only": ({}, {"lang": "ko"}),
}


def ranking(result) -> dict:
    return {"chunks": [c.chunk.id for c in result.chunks], "lists": result.lists, "keyword_used": result.keyword_used}


@pytest.fixture(scope="module")
def rankings(tmp_path_factory) -> dict:
    import chaja

    questions = read_questions(MIXED / "questions.jsonl")
    with chaja.open(tmp_path_factory.mktemp("rankings") / "mixed.chaja") as idx:
        idx.add([MIXED / "docs"])
        return {name: {q.id: ranking(idx.search(q.text, 10, filters=filters, settings=settings))
                       for q in questions}
                for name, (settings, filters) in SETTINGS.items()}


def test_every_setting_ranks_every_question_as_recorded(rankings):
    if os.environ.get("CHAJA_RECORD_RANKINGS"):
        RECORD.parent.mkdir(parents=True, exist_ok=True)
        RECORD.write_text("".join(json.dumps({"setting": name, "question": qid, **got}, ensure_ascii=False) + "\n"
                                  for name, by_question in rankings.items() for qid, got in by_question.items()),
                          encoding="utf-8")
        pytest.skip(f"recorded {RECORD}")
    recorded: dict[str, dict] = {}
    for line in RECORD.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        recorded.setdefault(row.pop("setting"), {})[row.pop("question")] = row
    assert sorted(rankings) == sorted(recorded)
    moved = [(name, qid) for name in recorded for qid in recorded[name]
             if rankings[name].get(qid) != recorded[name][qid]]
    assert not moved, f"{len(moved)} rankings moved, first: {moved[:5]}"
    assert sum(len(v) for v in recorded.values()) == len(SETTINGS) * 120
