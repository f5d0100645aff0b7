"""A new user's first store: seven short documents, one kettle's manual in English and in
Korean, an air purifier's manual in Korean, meeting notes, a company notice, a quarterly
summary and a dividend filing (``tests/fixtures/small-store``, fourteen chunks). Calibrated
fusion scores cosines against the store's background, and fourteen chunks make a poor
background (:mod:`chaja.search.background_prior`): these questions are searched with the
real models on a real store, with the default settings."""
from __future__ import annotations

from pathlib import Path

import pytest

import chaja
from chaja.eval.questions import read_questions

SMALL = Path(__file__).resolve().parents[1] / "fixtures" / "small-store"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    with chaja.open(tmp_path_factory.mktemp("small") / "small.chaja") as idx:
        idx.add([SMALL / "docs"])
        yield idx


def first_documents(idx, text: str, k: int = 3) -> list[str]:
    return [d.doc_id for d in idx.search(text).documents[:k]]


@pytest.mark.parametrize("text", ["warranty period", "how long is the warranty"])
def test_an_english_warranty_question_finds_the_english_manual_first(small, text):
    """The English manual is the keyword list's first and the vector list's first; its Korean
    translation, which the keyword list cannot see, must not pass it."""
    assert first_documents(small, text)[0] == "kettle-manual"


def test_a_korean_warranty_question_finds_a_korean_manual_first(small):
    assert first_documents(small, "보증 기간")[0] in {"공기청정기-사용설명서", "전기주전자-사용설명서"}


def test_every_question_finds_its_document_in_the_first_three(small):
    questions = read_questions(SMALL / "questions.jsonl")
    assert len(questions) >= 15
    missed = {q.id: first_documents(small, q.text) for q in questions
              if not set(q.gold) & set(first_documents(small, q.text))}
    assert not missed
