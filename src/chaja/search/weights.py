"""Multipliers on fused scores: source weight and freshness.

Source: a fixed factor per source (the write-up used filings and statistics 1.15,
brokerage API 1.10, news 1.00, keeping the gap within 15% so that news is not
always pushed under old filings). Unknown sources get 1.0.

Freshness, with a half-life h per document type and age a in days:

    f(a) = 0.5 + 0.5 · exp(−ln 2 · a / h)

so a new document gets 1.0, one half-life old 0.75, and nothing drops below 0.5.
Documents without a date or with a type that has no half-life get 1.0; a date in
the future counts as age 0.
"""
from __future__ import annotations

import math
from datetime import date

from chaja.documents import Chunk


def freshness(age_days: float, half_life_days: float) -> float:
    if half_life_days <= 0:
        raise ValueError("half-life must be positive")
    return 0.5 + 0.5 * math.exp(-math.log(2) * max(0.0, age_days) / half_life_days)


def age_in_days(doc_date: str | None, now: date) -> float | None:
    if not doc_date:
        return None
    try:
        return float((now - date.fromisoformat(doc_date[:10])).days)
    except ValueError:
        return None


def chunk_multiplier(chunk: Chunk, source_weights: dict[str, float],
                     half_life_days: dict[str, float], now: date) -> float:
    m = source_weights.get(chunk.source, 1.0) if source_weights else 1.0
    if half_life_days and chunk.doc_type in half_life_days:
        age = age_in_days(chunk.date, now)
        if age is not None:
            m *= freshness(age, half_life_days[chunk.doc_type])
    return m
