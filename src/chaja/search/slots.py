"""Reserved slots: places in the top-k handed out before fused order.

The write-up on hybrid search in PostgreSQL found plain RRF buried documents
whose titles matched exactly, and gave ``round(top_k × share)`` of the top slots
(2 of 5 at share 0.4) to the best keyword results first, plus one slot to a
document whose title holds the question's key words. The reserved chunks take
the first places in keyword order; the rest follow in fused order, without repeats.
"""
from __future__ import annotations


def reserve(fused: list[str], reserved: list[str], top_k: int) -> tuple[list[str], set[str]]:
    """Top-k chunk ids with ``reserved`` placed first (deduplicated), then ``fused``."""
    head = list(dict.fromkeys(reserved))[:top_k]
    taken = set(head)
    tail = [c for c in fused if c not in taken]
    return (head + tail)[:top_k], taken


def keyword_slot_count(top_k: int, share: float) -> int:
    return max(0, min(top_k, int(round(top_k * share))))
