"""A short window of chunk text around the query's terms, with the matches marked.

- **Code blocks out**: fenced blocks (```` ``` ```` or ``~~~``) are left out of the
  window when the prose around them holds a query term or the chunk has prose at
  all; a chunk that is all code, or whose only match is inside code, keeps it.
- **Where**: the window of ``width`` characters starts a quarter width before the
  first place a query term occurs (case-insensitive, after NFKC), or at the start.
- **Marks**: :func:`highlights` gives the character spans of the window that match a
  term; overlapping and touching matches merge, so the bigrams 자기, 기주, 주식 mark
  자기주식 as one span. The search JSON carries them beside the snippet; the command
  line draws them in bold on a terminal.
"""
from __future__ import annotations

import re

from chaja.analysis import normalize

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)", re.S | re.M)


def _searchable(flat: str) -> str:
    """``flat`` folded for matching, character for character (NFKC only where it keeps lengths)."""
    folded = normalize(flat)
    return (folded if len(folded) == len(flat) else flat).lower()


def _first_hit(low: str, terms: list[str]) -> int | None:
    hits = [i for t in terms if t and (i := low.find(t.lower())) >= 0]
    return min(hits) if hits else None


def without_code(text: str, terms: list[str]) -> str:
    """``text`` with fenced code blocks removed, unless that leaves no prose or loses the
    only matches."""
    prose = _FENCE.sub(" ", text)
    if not prose.strip():
        return text
    flat_prose = re.sub(r"\s+", " ", prose)
    if terms and _first_hit(_searchable(flat_prose), terms) is None and \
            _first_hit(_searchable(re.sub(r"\s+", " ", text)), terms) is not None:
        return text
    return prose


def snippet(text: str, terms: list[str], width: int = 200) -> str:
    flat = re.sub(r"\s+", " ", without_code(text, terms)).strip()
    if len(flat) <= width:
        return flat
    at = _first_hit(_searchable(flat), terms) or 0
    start = max(0, min(at - width // 4, len(flat) - width))
    out = flat[start : start + width].strip()
    return ("…" if start > 0 else "") + out + ("…" if start + width < len(flat) else "")


def highlights(text: str, terms: list[str]) -> list[list[int]]:
    """``[start, end)`` spans of ``text`` where a term occurs, merged, in order."""
    low = _searchable(text)
    spans = []
    for t in {t.lower() for t in terms if t.strip()}:
        i = low.find(t)
        while i >= 0:
            spans.append((i, i + len(t)))
            i = low.find(t, i + 1)
    merged: list[list[int]] = []
    for s, e in sorted(spans):
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    return merged


def marked(text: str, terms: list[str], before: str = "\033[1m", after: str = "\033[0m") -> str:
    """``text`` with every :func:`highlights` span between ``before`` and ``after``."""
    out, at = [], 0
    for s, e in highlights(text, terms):
        out += [text[at:s], before, text[s:e], after]
        at = e
    return "".join(out) + text[at:]
