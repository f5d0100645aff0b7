"""Evidence borrowed from the query's own language: pages of another language that resemble
the best pages of the query's language.

A short question and a page in another language meet only through the encoders, and
the encoders prefer their own language: "자기주식 소각 결정" finds the Korean share
cancellation filings, which hold those very words, while the English report's section on
cancelling treasury shares sits among unrelated English pages a few tenths of a standard
deviation apart. Two pages on the same subject in two languages are much closer to each
other than a short question is to either, so the best pages of the query's language
say what the other language's answer looks like (pseudo-relevance feedback, used across
languages only):

    f_F = P · mean_{s ∈ S} v_F(s),    S = the ``depth`` best candidates of the query's language,
    B(c) = Σ_F w_F · (f_F·v_F(c) − μ_F(f_F)) / σ_F(f_F),

for the fields F with weights w_F (the passage fields, e5 ``chunk`` and aligned
``aligned``), P the language projection for e5 (:mod:`chaja.language_means`) and
μ, σ the store's background moments (:mod:`chaja.search.background`), so B is on the
same scale as the vector evidence. A candidate outside the query's language gets

    score'(c) = max(score(c), min(score(c) + w_B · g(q) · B(c), min_{s ∈ S} score(s)))   (B(c) > 0;
    score(c) + w_B · g(q) · B(c) otherwise),

g(q) the keyword list's share of calibrated fusion (:mod:`chaja.search.calibrated`): the
query's language leads, so its best pages are worth borrowing from. At most ``limit``
(5) candidates keep a lift, the first in the lifted order, the others their score
before it (:func:`keep_lifted`). Borrowed evidence
never lifts a page above the pages it was borrowed from (a translation of the best
page resembles it most, and must not pass it), and a page fusion already put above
them stays where it was; a page unlike them (B < 0) falls. A chunk of the query's
language is never touched, and nothing here is learned: the vectors are the store's own.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from chaja.language_means import project_out

#: the fields feedback vectors are built in and their weights in B(c)
FIELDS = {"chunk": 1.0, "aligned": 0.5}


def sources(fused: Sequence[tuple[str, float]], own: Mapping[str, bool], depth: int) -> list[str]:
    """The ``depth`` best chunks of the query's language in the fused order."""
    return [c for c, _ in fused if own.get(c)][:depth]


def feedback_vector(vectors: Sequence[np.ndarray], basis: np.ndarray | None = None) -> np.ndarray | None:
    """The unit mean of ``vectors``, with the rows of ``basis`` (orthonormal) projected out."""
    if not len(vectors):
        return None
    f = np.mean(np.asarray(vectors, dtype=np.float64), axis=0)
    if basis is not None:
        f = project_out(f, basis)
    norm = float(np.linalg.norm(f))
    return (f / norm).astype(np.float32) if norm > 0 else None


def lifted(scores: np.ndarray, added: np.ndarray, ceiling: float) -> np.ndarray:
    """``scores + added``, no higher than ``ceiling`` where ``added`` > 0, unless the score
    already was (element-wise)."""
    return np.where(added > 0, np.maximum(scores, np.minimum(scores + added, ceiling)), scores + added)


def keep_lifted(before: np.ndarray, after: np.ndarray, limit: int, ranks: np.ndarray) -> np.ndarray:
    """Which candidates keep a lift (``after`` > ``before``): at most ``limit`` (0: all), the
    first by raised score, then by ``ranks`` (their best single rank), then their order.
    Borrowed evidence picks out the page that answers in the other language; lifting every
    page that resembles the sources fills the first page with the other language's
    neighbours of the answer."""
    raised = after > before
    found = np.flatnonzero(raised)
    if limit <= 0 or found.size <= limit:
        return raised
    first = found[np.lexsort((found, ranks[found], -after[found]))[:limit]]
    keep = np.zeros_like(raised)
    keep[first] = True
    return keep
