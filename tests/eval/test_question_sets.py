"""The question sets committed with chaja: each parses, ids are unique, and the
hand-written natural and multipart sets are lint-clean against every heading of the
React docs store in both languages (when the data set is present)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from chaja.eval.datadir import data_dir
from chaja.eval.lint import headings_from, lint_questions
from chaja.eval.question_check import check_questions
from chaja.eval.questions import read_questions

QUESTIONS = Path(__file__).resolve().parents[2] / "benchmarks" / "questions"
SETS = sorted(QUESTIONS.rglob("*.jsonl"))
HAND_WRITTEN = [QUESTIONS / "natural" / "react-natural-dev.jsonl", QUESTIONS / "natural" / "react-natural-test.jsonl",
                QUESTIONS / "multipart" / "react-multipart.jsonl",
                QUESTIONS / "natural" / "vue-natural-dev.jsonl", QUESTIONS / "natural" / "vue-natural-test.jsonl"]


@pytest.mark.parametrize("path", SETS, ids=lambda p: str(p.relative_to(QUESTIONS)))
def test_each_set_parses_with_unique_ids(path):
    questions = read_questions(path)
    assert questions and len({q.id for q in questions}) == len(questions)


def test_the_multipart_set_asks_two_things_with_graded_pools():
    questions = read_questions(QUESTIONS / "multipart" / "react-multipart.jsonl")
    assert len(questions) >= 60
    kinds = {}
    for q in questions:
        kinds[q.kind] = kinds.get(q.kind, 0) + 1
        assert len(q.extra["parts"]) == 2 and all(p.strip() for p in q.extra["parts"])
        grades = list(q.judgments.values())
        assert 3 in grades and 0 in grades
    assert kinds == {"en-en": 16, "ko-ko": 16, "ko-en": 16, "en-ko": 16}


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=lambda p: p.name)
def test_hand_written_sets_share_no_three_content_words_with_any_heading(path):
    docs = data_dir() / ("vue-docs" if path.name.startswith("vue") else "react-docs")
    if not (docs / "store.tsv").is_file():
        pytest.skip(f"the docs data set is not at {docs}")
    hits = lint_questions(read_questions(path), headings_from(docs, both_languages=True))
    assert hits == [], json.dumps([(h.question_id, h.heading) for h in hits[:5]], ensure_ascii=False)


def test_the_pair_store_asks_every_kind_with_a_stored_gold_and_a_frozen_split(monkeypatch):
    data = data_dir()
    if not (data / "korquad-v1-dev").is_dir() or not (data / "scifact").is_dir():
        pytest.skip(f"KorQuAD and SciFact are not under {data}")
    monkeypatch.syspath_prepend(str(QUESTIONS.parent))     # benchmarks/, where pair_store lives
    import pair_store
    docs, questions = pair_store.build(data)
    stored = {d.id: d for d in docs}
    kinds = {}
    for q in questions:
        kinds[q.kind] = kinds.get(q.kind, 0) + 1
        (gold,) = q.gold
        asked, held = q.kind.split("-")
        assert stored[gold].lang == held and q.lang == asked, q.id
        hangul = sum("가" <= ch <= "힣" for ch in q.text)
        assert (hangul > 0) == (asked == "ko"), q.id
    assert kinds == {"ko-ko": 100, "en-ko": 100, "en-en": 100, "ko-en": 100}
    assert sum(d.lang == "ko" for d in docs) == 961 and sum(d.lang == "en" for d in docs) == 1000
    dev, test = pair_store.split(questions, "dev"), pair_store.split(questions, "test")
    assert {q.id for q in dev}.isdisjoint({q.id for q in test}) and len(dev) + len(test) == len(questions)
    assert all(sum(q.kind == k for q in dev) == 50 for k in kinds)
    again = pair_store.split(list(reversed(questions)), "dev")
    assert [q.id for q in again] == [q.id for q in dev]
    texts = {d.id: " ".join([d.title, *(s.text for s in d.sections)]) for d in docs}
    report = check_questions(questions, texts)
    assert not report["broken"], (report["gold_missing"][:3], report["duplicates"][:3])


@pytest.mark.parametrize("name, folder", [("react", "react-docs"), ("vue", "vue-docs")])
def test_the_natural_splits_are_frozen_and_ask_every_kind_of_a_stored_page(name, folder, monkeypatch):
    """The committed dev and test files are what the hash rule gives from the page files
    (a question never moves between splits), at least 100 a kind, and each gold page is
    in the store in the language its kind names (when the data set is present)."""
    monkeypatch.syspath_prepend(str(QUESTIONS / "natural"))
    import split

    natural = QUESTIONS / "natural"
    pages = [q for source in split.SETS[name] for q in read_questions(natural / source)]
    dev, test = (read_questions(natural / f"{name}-natural-{part}.jsonl") for part in ("dev", "test"))
    assert sorted(q.id for q in dev + test) == sorted(q.id for q in pages)
    for kind in {q.kind for q in pages}:
        ordered = sorted((q.id for q in pages if q.kind == kind), key=split.key)
        half = (len(ordered) + 1) // 2
        assert sorted(ordered[:half]) == sorted(q.id for q in dev if q.kind == kind), kind
        assert len(ordered) >= 100, kind
    store = data_dir() / folder / "store.tsv"
    if not store.is_file():
        pytest.skip(f"the docs data set is not at {store.parent}")
    held = dict(line.split("\t") for line in store.read_text(encoding="utf-8").splitlines()[1:] if line.strip())
    for q in pages:
        assert q.gold and q.lang == q.kind.split("-")[0], q.id
        assert all(held[gold] == q.kind.split("-")[1] for gold in q.gold), q.id
