"""A short window of chunk text around the first place a query term occurs."""
from __future__ import annotations

import re

from chaja.analysis import normalize


def snippet(text: str, terms: list[str], width: int = 200) -> str:
    flat = re.sub(r"\s+", " ", text).strip()
    if len(flat) <= width:
        return flat
    low = normalize(flat).lower()
    hits = [i for t in terms if (i := low.find(t)) >= 0]
    at = min(hits) if hits else 0
    start = max(0, min(at - width // 4, len(flat) - width))
    out = flat[start : start + width].strip()
    return ("…" if start > 0 else "") + out + ("…" if start + width < len(flat) else "")
