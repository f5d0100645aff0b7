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
