"""What every reranker is: a function from a question and passages to one score each.

A reranker orders the fused top ``rerank.depth`` candidates of a search (one chunk per
document) by its own score of each (question, passage) pair, as the reranker
evaluation's pipeline does (up to 50 candidates reranked, a selected prefix of 3–20
returned). Higher is better; equal scores keep the fused order (a stable sort), so a
reranker that cannot tell two candidates apart leaves them as fusion ranked them.
Scores are the model's raw outputs (logits or cosines); :mod:`chaja.rerank.selection`
maps them to [0, 1].
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from chaja.documents import Chunk


@runtime_checkable
class Reranker(Protocol):
    name: str

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        """One score per passage, higher = more relevant to ``query`` (float64, same order)."""
        ...


def rerank_order(scores: Sequence[float]) -> list[int]:
    """Positions by descending score; equal scores keep their given order."""
    return sorted(range(len(scores)), key=lambda i: -float(scores[i]))


def passage_text(chunk: Chunk) -> str:
    """The passage a reranker reads for a chunk: its title and heading path (what the
    page and section are about), then its text."""
    path = " > ".join(p for p in (chunk.title, *chunk.heading_path) if p)
    return f"{path}\n{chunk.text}" if path else chunk.text


def check_scores(scores: np.ndarray, n: int, name: str) -> np.ndarray:
    """The scores as a float64 vector of length ``n``; a clear error for anything else."""
    out = np.asarray(scores, dtype=np.float64).reshape(-1)
    if out.shape[0] != n:
        raise RuntimeError(f"reranker {name} gave {out.shape[0]} scores for {n} passages")
    if not np.all(np.isfinite(out)):
        raise RuntimeError(f"reranker {name} gave a score that is not a finite number")
    return out
