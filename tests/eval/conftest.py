"""Shared fixtures for the evaluation harness tests.

Public data sets are read from ``../shared/data`` next to the repository root
(or ``$CHAJA_DATA_DIR``); tests that need one skip with a clear message when it
is absent.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
try:
    import chaja  # noqa: F401
except ImportError:  # running from a checkout without installing
    sys.path.insert(0, str(SRC))

from chaja.eval.datadir import data_set, missing_message  # noqa: E402


def _require(name: str) -> Path:
    path = data_set(name)
    if path is None:
        pytest.skip(missing_message(name))
    return path


@pytest.fixture(scope="session")
def react_dir() -> Path:
    return _require("react-docs")


@pytest.fixture(scope="session")
def korquad_file() -> Path:
    path = _require("korquad-v1-dev") / "KorQuAD_v1.0_dev.json"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    return _require("scifact")


# ---- the fixture corpus (tests/fixtures/corpus) with questions about it ----------------

CORPUS_QUESTIONS = [
    {"id": "a1", "text": "자기주식 소각 일정", "gold": ["filings/share-cancellation"]},
    {"id": "a2", "text": "how often should I descale the espresso machine", "gold": ["manuals/espresso-machine"]},
    {"id": "a3", "text": "라우터 무선 비밀번호 변경", "gold": ["manuals/router"]},
    {"id": "a4", "text": "유상증자 신주 발행가액", "gold": ["filings/rights-issue"]},
    {"id": "a5", "text": "타이어 공기압 확인", "gold": ["manuals/bicycle"]},
    {"id": "a6", "text": "server memory demand next year", "gold": ["filings/quarterly-report"]},
    {"id": "a7", "text": "small rocket test launch", "gold": ["news-launch"]},
    {"id": "a8", "text": "기준금리 동결", "gold": ["news-rates"]},
    {"id": "u1", "text": "Vue computed property", "kind": "unanswerable", "gold": []},
    {"id": "u2", "text": "쿠버네티스 인그레스 설정", "kind": "unanswerable", "gold": []},
    {"id": "u3", "text": "how to bake sourdough bread", "kind": "unanswerable", "gold": []},
    {"id": "u4", "text": "주택담보대출 금리 비교", "kind": "unanswerable", "gold": []},
]


@pytest.fixture(scope="session")
def corpus_questions():
    """Eight answerable questions about the fixture corpus and four it cannot answer."""
    from chaja.eval.questions import question_from_dict
    return [question_from_dict(q) for q in CORPUS_QUESTIONS]


@pytest.fixture(scope="session")
def query_memo(encoder):
    """The real encoder behind one query cache shared by the sweep and abstention tests."""
    from chaja.eval.sweep import QueryMemo
    return QueryMemo(encoder)
