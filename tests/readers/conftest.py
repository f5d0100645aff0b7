"""Fixtures the reader tests share."""
from __future__ import annotations

import pytest


@pytest.fixture
def no_tesseract(monkeypatch, tmp_path):
    """A machine without Tesseract: a PATH where the program is not."""
    from chaja.readers import image

    monkeypatch.setenv("PATH", str(tmp_path))
    image.ocr_problem.cache_clear()
    yield
    image.ocr_problem.cache_clear()
