"""The keyword gate of the production setup.

The keyword list leaves fusion when vector results exist and none of the top
``depth`` (20) keyword results holds at least ``share`` (half) of the query's
distinct terms:

    keep_keyword = not vector or ∃ d ∈ top_depth(keyword): |T(q) ∩ T(d)| ≥ share · |T(q)|

A keyword list that only matched stray bigrams would otherwise add noise to
fusion; one that matched the question's words stays.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from chaja.documents import Hit


def term_coverage(query_terms: Sequence[str], chunk_terms: set[str]) -> float:
    """Share of the query's distinct terms found in a chunk."""
    q = set(query_terms)
    return len(q & chunk_terms) / len(q) if q else 0.0


def keyword_passes(query_terms: Sequence[str], keyword: Sequence[Hit], vector_found: bool,
                   terms_of: Callable[[list[str]], dict[str, set[str]]],
                   depth: int = 20, share: float = 0.5) -> bool:
    """True when the keyword list stays in fusion."""
    if not keyword:
        return False
    if not vector_found:
        return True
    top = [h.chunk_id for h in keyword[:depth]]
    found = terms_of(top)
    return any(term_coverage(query_terms, found.get(cid, set())) >= share for cid in top)
