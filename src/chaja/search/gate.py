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


def best_coverage(query_terms: Sequence[str], keyword: Sequence[Hit],
                  terms_of: Callable[[list[str]], dict[str, set[str]]], depth: int = 20) -> float:
    """The highest share of query terms held by one of the top ``depth`` keyword results."""
    top = [h.chunk_id for h in keyword[:depth]]
    if not top:
        return 0.0
    found = terms_of(top)
    return max(term_coverage(query_terms, found.get(cid, set())) for cid in top)


def keyword_passes(query_terms: Sequence[str], keyword: Sequence[Hit], vector_found: bool,
                   terms_of: Callable[[list[str]], dict[str, set[str]]],
                   depth: int = 20, share: float = 0.5) -> bool:
    """True when the keyword list stays in fusion."""
    if not keyword:
        return False
    if not vector_found:
        return True
    return best_coverage(query_terms, keyword, terms_of, depth) >= share
