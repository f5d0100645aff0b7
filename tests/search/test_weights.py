import math
from datetime import date

import pytest

from chaja.documents import Chunk
from chaja.search.weights import age_in_days, chunk_multiplier, freshness


def test_freshness_formula():
    assert freshness(0, 14) == 1.0
    assert freshness(14, 14) == pytest.approx(0.75)
    assert freshness(28, 14) == pytest.approx(0.625)
    assert freshness(10_000, 14) == pytest.approx(0.5)
    assert freshness(-5, 14) == 1.0
    assert freshness(30, 90) == pytest.approx(0.5 + 0.5 * math.exp(-math.log(2) * 30 / 90))


def test_age():
    assert age_in_days("2026-11-01", date(2026, 11, 15)) == 14
    assert age_in_days(None, date(2026, 1, 1)) is None
    assert age_in_days("garbage", date(2026, 1, 1)) is None


def chunk(source, doc_type, d):
    return Chunk(id="x#0", doc_id="x", ordinal=0, title="", heading_path=(), text="", source=source,
                 doc_type=doc_type, date=d)


def test_source_times_freshness():
    now = date(2026, 11, 15)
    w = {"DART": 1.15, "KIS": 1.10}
    h = {"news": 14, "filing": 90}
    assert chunk_multiplier(chunk("DART", "filing", "2026-11-15"), w, h, now) == pytest.approx(1.15)
    assert chunk_multiplier(chunk("news", "news", "2026-11-01"), w, h, now) == pytest.approx(0.75)
    assert chunk_multiplier(chunk("KIS", "other", "2020-01-01"), w, h, now) == pytest.approx(1.10)
    assert chunk_multiplier(chunk("blog", "news", None), w, h, now) == 1.0
