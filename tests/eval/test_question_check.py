"""``chaja questions check`` on a set broken on purpose, and on every question set the
repository holds (the React and Vue sets against their docs data when it is present)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaja.cli import main
from chaja.eval.datadir import data_set, missing_message
from chaja.eval.question_check import check_questions, documents_from
from chaja.eval.questions import parse_questions

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "fixtures" / "corpus"
MIXED = REPO / "tests" / "fixtures" / "mixed"
#: every committed set but the pair store's, whose gold documents are KorQuAD's and SciFact's
#: (tests/eval/test_question_sets.py checks those)
REACT_SETS = sorted(p for p in (REPO / "benchmarks" / "questions").rglob("*.jsonl") if p.parent.name != "pairs")
LINT_CLEAN = {"react-natural-dev.jsonl", "react-natural-test.jsonl", "react-en-pages.jsonl", "react-ko-pages.jsonl",
              "react-multipart.jsonl", "vue-natural-dev.jsonl", "vue-natural-test.jsonl", "vue-en-pages.jsonl",
              "vue-ko-pages.jsonl"}


def lines(*qs) -> list[str]:
    return [json.dumps(q, ensure_ascii=False) for q in qs]


BROKEN = lines(
    {"id": "a", "text": "자기주식 소각 결정은 언제 하나요?", "gold": ["filings/share-cancellation"], "kind": "ko-ko"},
    {"id": "b", "text": "자기주식 소각 결정은 언제 하나요", "gold": ["filings/share-cancellation"], "kind": "ko-ko"},
    {"id": "c", "text": "자기주식 소각 결정은 언제 했나요?", "gold": ["filings/share-cancellation"], "kind": "ko-ko"},
    {"id": "d", "text": "espresso descaling steps", "gold": ["manuals/espresso-machine-v2"], "kind": "en-en"},
    {"id": "e", "text": "how do I descale the espresso machine", "gold": ["manuals/espresso-machine"], "kind": "en-en"},
)


def test_a_broken_set_is_reported_and_fails(tmp_path, capsys):
    docs = documents_from(CORPUS)
    got = check_questions(parse_questions(BROKEN), docs, headings=["Descale the espresso machine"])
    assert got["duplicates"] == [["a", "b"]]                     # same text but the question mark
    assert ["a", "c"] in got["near_duplicates"] and ["a", "b"] not in got["near_duplicates"]
    assert got["gold_missing"] == [["d", "manuals/espresso-machine-v2"]]
    assert [h[0] for h in got["lint"]] == ["e"]
    assert got["overlap"]["a"] == 1.0 and 0 < got["overlap_by_kind"]["en-en"]["mean"] <= 1
    assert got["broken"]
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(BROKEN) + "\n", encoding="utf-8")
    assert main(["questions", "check", str(path), "--docs", str(CORPUS)]) == 1
    out = capsys.readouterr().out
    assert "BROKEN" in out and "gold not in the documents: 1" in out and "duplicate questions: 1" in out


def test_malformed_files_and_repeated_ids_name_their_line(tmp_path, capsys):
    bad, twice = tmp_path / "bad.jsonl", tmp_path / "twice.jsonl"
    bad.write_text('{"id": "a", "text": "x", "gold": ["d"]}\n{"id": "b", "text": \n', encoding="utf-8")
    twice.write_text('{"id": "a", "text": "x", "gold": ["d"]}\n{"id": "a", "text": "y", "gold": ["d"]}\n',
                     encoding="utf-8")
    assert main(["questions", "check", str(bad), str(twice)]) == 1
    out = capsys.readouterr().out
    assert "bad.jsonl:2: not valid JSON" in out and "twice.jsonl:2: duplicate id 'a'" in out


def test_the_mixed_store_questions_are_whole(capsys):
    assert main(["questions", "check", str(MIXED / "questions.jsonl"), "--docs", str(MIXED / "docs"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)[str(MIXED / "questions.jsonl")]
    assert got["questions"] == 120 and not got["gold_missing"] and not got["duplicates"]
    kinds = got["overlap_by_kind"]
    # same-language questions reuse their page's words; cross-language ones cannot
    assert kinds["en-en"]["mean"] > 0.5 > kinds["ko-en"]["mean"]


@pytest.mark.parametrize("path", REACT_SETS, ids=lambda p: p.name)
def test_every_docs_question_set_is_whole(path, capsys):
    name = "vue-docs" if path.name.startswith("vue-") else "react-docs"
    data = data_set(name)
    if data is None:
        pytest.skip(missing_message(name))
    args = ["questions", "check", str(path), "--docs", str(data)]
    if path.name in LINT_CLEAN:
        args += ["--headings", str(data), "--both-languages"]
    assert main(args) == 0, capsys.readouterr().out
