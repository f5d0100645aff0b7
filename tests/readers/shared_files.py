"""The real office documents in ../shared/data/documents, read from there (never copied
into the repository); tests that need one skip with a message where it is absent."""
from __future__ import annotations

from pathlib import Path

import pytest

DOCUMENTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "documents"


def shared_file(name: str) -> Path:
    path = DOCUMENTS / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (the shared data sets are not beside this checkout)")
    return path
