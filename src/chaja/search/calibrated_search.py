"""Calibrated fusion of one query's lists against the store (the formula is in
:mod:`chaja.search.calibrated`): the candidates' cosines read from the store in
every vector field, turned into background z-scores (:mod:`chaja.search.background`),
the keyword and translated keyword evidence, and the feedback borrowed from the
query's own language (:mod:`chaja.search.feedback`)."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from chaja.documents import Hit, doc_id_of
from chaja.search import background, feedback
from chaja.search.calibrated import (
    PARTNER,
    Evidence,
    calibrated_evidence,
    calibrated_scores,
    fused_order,
    keyword_values,
    tail_yielded,
)
from chaja.search.fusion import ranks

if TYPE_CHECKING:
    from chaja.search.searcher import Searcher

#: candidate list → the vector field it searches
FIELD_OF_LIST = {"vector": "chunk", "heading": "heading", "aligned": "aligned", "aligned_heading": "aligned_heading"}


def translated_values(s: Searcher, translated: dict[str, tuple[list[Hit], list[list[str]]]]) -> dict[str, float]:
    """K_T(c) of the chunks of the translated lists (:func:`calibrated.keyword_values`, with
    the share of the query's words the chunk holds in translation: the mean over the
    words of the share of the word's terms it holds, 0 for a word left untranslated;
    raised to the power ``search.keyword_share_power``, as the native list's share is)."""
    out: dict[str, float] = {}
    for hits, groups in translated.values():
        terms = list(dict.fromkeys(t for g in groups for t in g))
        held = s.terms_memo(terms)([h.chunk_id for h in hits])
        shares = {c: sum(len(t.intersection(g)) / len(g) for g in groups if g) / len(groups)
                  for c, t in held.items()}
        for c, v in keyword_values(hits, shares, s.cfg.keyword_share_power).items():
            out[c] = max(out.get(c, 0.0), v)
    return out


class StoreCandidates:
    """A store's answers about one search's candidates, for a store without
    ``candidate_rows`` (:class:`chaja.stores.candidate_rows.CandidateRows`, which looks
    them up once): the same questions, each asked of the store."""

    def __init__(self, store, ids: list[str]):
        self.store, self.ids = store, ids
        lang_of = store.chunk_languages(ids)
        self.langs = np.array([lang_of.get(c) for c in ids], dtype=object)

    def cosines(self, query: np.ndarray, field: str) -> np.ndarray:
        scores = self.store.vector_scores(query, self.ids, field=field)
        return np.array([scores.get(c, np.nan) for c in self.ids], dtype=np.float64)

    def vectors(self, which: Sequence[int], field: str) -> list[np.ndarray]:
        return list(self.store.stored_vectors([self.ids[i] for i in which], field).values())


def candidate_rows(s: Searcher, ids: list[str]):
    """The candidates' languages, cosines and vectors (None as a language where the store has
    no chunk vector of one): looked up once where the store has ``candidate_rows``, else
    asked of it each time (:class:`StoreCandidates`)."""
    at = getattr(s.store, "candidate_rows", None)
    return at(ids) if at is not None else StoreCandidates(s.store, ids)


def calibrated_fusion(s: Searcher, lists: dict[str, list[Hit]], queries: dict[str, np.ndarray | None],
                      shares: dict[str, float], qlang: str,
                      translated: dict[str, float] | None = None, mixed_korean: bool = False,
                      scored_only: Sequence[str] = ()) -> tuple[list, float]:
    """The fused list and g(q) of one query's lists. ``queries``: vector field → the
    query vector that searches it; ``shares``: chunk → share of the query's terms it
    holds, for the keyword-like lists; ``translated``: K_T of the chunks of the
    translated keyword lists; ``mixed_korean``: the query is Korean and names Latin-script
    terms, so the keyword list's best hit, when it is a Korean chunk, holds g(q) up by the
    share of the query's terms it holds (:func:`chaja.search.calibrated.held_share`);
    ``scored_only``: vector lists the search did not walk whose fields still count as evidence
    (:func:`chaja.search.lists.unwalked`)."""
    cfg = s.cfg
    keyword, title = lists.get("keyword", []), lists.get("title", [])
    if not any(lists.get(m) for m in FIELD_OF_LIST):
        return [(h.chunk_id, h.score) for h in keyword], 1.0   # keyword only: nothing to calibrate
    best: dict[str, int] = {}
    for hits in lists.values():
        for cid, r in ranks(hits).items():
            best[cid] = min(best.get(cid, r), r)
    candidates = sorted(best)
    # a list that is off (or found nothing) adds neither candidates nor evidence; one not walked adds evidence
    weights = {FIELD_OF_LIST[m]: w for m, w in cfg.calibrated_weights.items()
               if m in FIELD_OF_LIST and w and (lists.get(m) or m in scored_only)}
    needed = set(weights) | {PARTNER[f] for f in weights if f in PARTNER}
    asked = [(f, queries.get(f), s.background.get(f)) for f in sorted(needed)]
    asked = [(f, q, stats) for f, q, stats in asked if q is not None and stats is not None]
    found = candidate_rows(s, candidates)
    z = {}
    for field, q, stats in asked:
        mu, sigma = background.moments(stats, q)
        z[field] = (found.cosines(q, field) - mu) / sigma
    own = found.langs == qlang
    own_coverage = shares.get(keyword[0].chunk_id, 0.0) if keyword and mixed_korean and own[
        candidates.index(keyword[0].chunk_id)] else 0.0
    ev = calibrated_evidence(candidates, z, own, keyword, shares, also=[title] if title else [], weights=weights,
                             d0=cfg.language_margin, tau=cfg.language_softness, translated=translated,
                             translated_weight=cfg.translated_keyword, own_coverage=own_coverage,
                             hold=cfg.keyword_hold, hold_floor=cfg.gate_share,
                             share_power=cfg.keyword_share_power)
    fusion = {"keyword_weight": cfg.calibrated_weights.get("keyword", 1.0),
              "neutral_depth": cfg.keyword_neutral_depth, "neutral_best_share": cfg.keyword_neutral_best,
              "keyword_floor": cfg.keyword_floor}

    def tail(scores: np.ndarray) -> np.ndarray:
        if not (cfg.other_language_yield and ev.g):
            return scores
        docs = np.array([doc_id_of(c) for c in candidates], dtype=object)
        return tail_yielded(scores, own, docs, ev.g, cfg.other_language_keep, cfg.other_language_yield)

    scores = calibrated_scores(ev, own, **fusion)
    rank_of = np.array([best[c] for c in candidates])
    if not (cfg.feedback_weight > 0 and ev.g > 0 and own.any() and not own.all()):
        return fused_order(candidates, tail(scores), rank_of), ev.g
    return with_feedback(s, ev, own, scores, found, rank_of, fusion, tail), ev.g


def with_feedback(s: Searcher, ev: Evidence, own: np.ndarray, scores: np.ndarray, found, rank_of: np.ndarray,
                  fusion: dict, tail: Callable[[np.ndarray], np.ndarray]) -> list[tuple[str, float]]:
    """The fused list with the evidence borrowed from the query's own language
    (:mod:`chaja.search.feedback`): at most ``feedback_limit`` candidates of other languages
    keep a lift, never above the sources, and they count what they borrow in their standing,
    so their neutral keyword value comes from the query language's pages of the same
    standing (the query language's scores, and so the sources and the ceiling, do not change).
    ``tail``: the other languages' tail yielding, last (:func:`chaja.search.calibrated.tail_yielded`)."""
    cfg = s.cfg
    candidates = found.ids
    src = feedback.sources(fused_order(candidates, scores, rank_of), dict(zip(candidates, own.tolist())),
                           cfg.feedback_depth)
    add = borrowed_evidence(s, src, found, own, ev.g)
    if add is None:
        return fused_order(candidates, tail(scores), rank_of)
    at = np.array([candidates.index(c) for c in src])
    ceiling = float(scores[at].min())
    keep = feedback.keep_lifted(scores, feedback.lifted(scores, add, ceiling), cfg.feedback_limit, rank_of)
    add = np.where(keep, add, np.minimum(add, 0.0))
    scores = tail(feedback.lifted(calibrated_scores(ev, own, borrowed=add, **fusion), add, ceiling))
    not_source = np.ones(len(candidates), dtype=bool)
    not_source[at] = False
    order = np.lexsort((np.arange(scores.size), rank_of, not_source, -scores))
    return [(candidates[i], v) for i, v in zip(order.tolist(), scores[order].tolist())]


def borrowed_evidence(s: Searcher, src: list[str], found, own: np.ndarray, g: float) -> np.ndarray | None:
    """``w_B · g(q) · B(c)`` for each candidate of ``found`` (:func:`candidate_rows`), 0 for
    those of the query's language (:mod:`chaja.search.feedback`), ``src`` the sources; None
    where no field has a feedback vector."""
    cfg = s.cfg
    at = [found.ids.index(c) for c in src]
    borrowed = np.zeros(len(found.ids))
    asked = False
    for field, w in feedback.FIELDS.items():
        stats = s.background.get(field)
        basis = s.basis if field == "chunk" and cfg.language_projection else None
        f = feedback.feedback_vector(found.vectors(at, field), basis) if stats else None
        if f is None:
            continue
        asked = True
        mu, sigma = background.moments(stats, f)
        borrowed += w * np.nan_to_num((found.cosines(f, field) - mu) / sigma, nan=0.0)
    if not asked:
        return None
    return np.where(own, 0.0, cfg.feedback_weight * g * borrowed)
