"""Calibrated fusion: every candidate judged by every list, on one scale.

Min-max fusion gives each list's best hit 1.0, however weak its cosine, and a
chunk that a list does not hold (a chunk with no heading, a page in the other
language for the keyword list) 0 from that list. Calibrated fusion instead:

1. takes the union of the lists' candidates;
2. scores every candidate in every vector field it has a vector in, exactly
   (:meth:`Store.vector_scores`), as a background z-score
   (:mod:`chaja.search.background`): ``z_f(c) = (q·v_f(c) − μ_f(q)) / σ_f(q)``;
3. fills a field a candidate lacks from its partner field, so missing is neutral:
   a chunk with no heading takes its own passage's z as its heading z
   (``heading`` ← ``chunk``, ``aligned_heading`` ← ``aligned``);
4. sums the vector evidence ``V(c) = Σ_f w_f · z_f(c)``;
5. adds the keyword evidence, BM25 over the list's best times a power of the
   share of the query's content terms the chunk holds
   (``K(c) = share(c)^p · s(c) / max s`` in [0, 1], 0 outside the keyword list,
   p = ``search.keyword_share_power``, 1.5: a chunk that holds one of five words
   counts at most 0.09, the best BM25 hit holding them all 1; p = 2 counted a
   chunk holding 5 of 7 words 0.51 against 0.60, and lost natural questions, which
   seldom reuse every content word, to vector evidence), weighed per query by how
   much the query's own language is where the answer is:

       score(c) = V(c) + w_K · m(q) · K(c),   m(q) = f + (1 − f) · g(q),
       g(q) = 1 − σ((max_{c ∉ L(q)} V(c) − max_{c ∈ L(q)} V(c) − d₀) / τ),

   with L(q) the candidates in the query's language and σ the logistic function.
   The title list (``title_path``), when on, counts the same way, a chunk taking the
   better of its two values. The keyword list only ever matches pages in the query's script, so when the
   vector evidence puts another language's page near or above the best
   same-language page, the keyword list must not decide between them; when the
   query's language clearly leads (or the store holds one language), g ≈ 1.
   A Korean question that names Latin-script terms ("setTimeout 안에서 onMounted를
   등록했더니") and whose keyword list's best hit is a Korean chunk holding a share c
   of its content terms keeps g(q) ≥ hold · (c − c₀)/(1 − c₀) (:func:`held_share`,
   c₀ the gate's share): its Latin words pull its vector toward English pages, but
   they are terms to match, not a sign that the answer is English.
   A chunk in another language, which the keyword list cannot match, takes at
   least a neutral value between the mean K of the five chunks of the query's
   language nearest it in vector evidence and the best K of that language, nearer
   the best as g(q) falls (:func:`neutral_for_other_languages` with a = w_n · (1 − g(q))), so
   missing is neutral there too: where the query's language clearly leads, the
   keyword list reorders it freely; where the other language is close, it
   cannot lift the query's language past it. The floor f (``search.keyword_floor``)
   keeps the keyword list reordering the query's language when another language
   leads: as g(q) falls, the other language's chunks take the best keyword value
   of the query's language as their neutral value, so the floor decides among the
   query's language's chunks, not between the languages.

A query's content words translated into another language L (:mod:`chaja.search.lexicon`)
search L's chunks as one more keyword list; its chunks get

    score(c) += w_T · (1 − g(q) · K*) · K_T(c),   K_T(c) = share_T(c)² · s_T(c) / max s_T,

with ``share_T(c)`` the mean over the query's words of the share of the word's translated
terms the chunk holds (0 for a word left untranslated), ``s_T`` the list's BM25 and K*
the best K of a candidate in the query's language. It is evidence for the other
language, the one the native keyword list cannot give; it never touches a chunk of the
query's language, and it fades where the query's language leads with a chunk that holds
the query's terms (g(q)·K* near 1), so a translated match does not overrule an exact one.

Last, past the ``keep`` best documents of the other languages, their chunks yield
``y · g(q)`` to the query's language (:func:`other_language_tail`), so a same-language
question's first ten stay mostly in its language.

The weights w_f, w_K, w_T, w_n, the floor f, the yield y, d₀ and τ are the only
parameters; their defaults were fit on the dev split of the natural-question sets and
KorQuAD's dev half (docs/crosslingual.md, docs/ranking.md). Ties keep the best single rank, then the chunk id.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from chaja.documents import Hit

#: a field with no vector for a candidate borrows the candidate's z in its partner field
PARTNER = {"heading": "chunk", "aligned_heading": "aligned"}


def logistic(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def keyword_values(hits: Sequence[Hit], shares: Mapping[str, float], power: float = 2.0) -> dict[str, float]:
    """K(c) = share(c)^power · s(c) / max s for the chunks of the keyword list (``shares``:
    chunk → share of the query's content terms it holds). A search passes
    ``search.keyword_share_power`` (1.5) here and down from :func:`calibrated_evidence`; the
    bare default, 2, is the formula as first written, which the formula's tests pin."""
    top = max((h.score for h in hits), default=0.0)
    if top <= 0:
        return {}
    out: dict[str, float] = {}
    for h in hits:
        out.setdefault(h.chunk_id, shares.get(h.chunk_id, 0.0) ** power * max(h.score, 0.0) / top)
    return out


def vector_evidence(z: Mapping[str, np.ndarray], weights: Mapping[str, float], n: int) -> np.ndarray:
    """V(c) = Σ_f w_f z_f(c) over the ``n`` candidates (``z``: field → z-scores aligned with
    the candidates, NaN where a candidate has no vector in the field), a missing field
    filled from its partner (0 when both are missing, and for a field ``z`` lacks)."""
    total = np.zeros(n)
    for field, w in weights.items():
        if not w or field not in z:
            continue
        value = z[field]
        if field in PARTNER and PARTNER[field] in z:
            value = np.where(np.isnan(value), z[PARTNER[field]], value)
        total += w * np.nan_to_num(value, nan=0.0)
    return total


def language_share(vector: np.ndarray, own: np.ndarray, d0: float, tau: float) -> float:
    """g(q): 1 when the query's language (``own``: which candidates are in it) holds the
    best vector evidence by a margin, → 0 as another language's best overtakes it; 1 when
    no candidate is in another language."""
    if own.all():
        return 1.0
    if not own.any():
        return 0.0
    return 1.0 - logistic((float(vector[~own].max()) - float(vector[own].max()) - d0) / tau)


def held_share(g: float, coverage: float, hold: float, floor: float) -> float:
    """g(q) held up by a keyword list that matched the question in its own language:

        g'(q) = max(g(q), hold · ((c − floor) / (1 − floor))₊)

    with c the largest share of the query's content terms that one chunk of the query's
    language among the keyword list's best holds. When such a chunk holds every term, the
    vector evidence for another language cannot take the keyword list's weight below
    ``hold``; a chunk holding ``floor`` of them (the gate's share) or less adds nothing."""
    if hold <= 0 or coverage <= 0:
        return g
    held = 1.0 if coverage >= 1.0 else max(0.0, coverage - floor) / max(1.0 - floor, 1e-9)
    return max(g, hold * min(1.0, held))


def neutral_for_other_languages(kv: np.ndarray, vector: np.ndarray, own: np.ndarray, depth: int,
                                best_share: float = 0.0) -> np.ndarray:
    """Missing is neutral for the keyword list too: a chunk c in another language than the
    query's (not ``own``), which the keyword list cannot match, gets at least

        K₀(c) = (1 − a) · mean K of the ``depth`` chunks of the query's language nearest c in V
                + a · the best K of any chunk of the query's language,

    ``a`` = ``best_share``: the keyword value a chunk of the query's language with the same
    vector evidence would have (its value imputed from its peers, not from the best of
    them), so the keyword list reorders the query's language without deciding against the
    other one, and a chunk of another language with middling vector evidence is not lifted
    past the query's language's chunks of the same standing (with ``a`` = 1 the keyword list
    lifts no chunk of the query's language above one of another). ``depth`` 0 turns this
    off. Arrays are aligned with the candidates; of peers equally near, the one with the
    smaller V (then the earlier candidate) counts first."""
    own_all = np.flatnonzero(own)
    if depth <= 0 or own_all.size == 0 or own_all.size == own.size:
        return kv
    other = np.flatnonzero(~own)
    # the nearest ``depth`` of a sorted row lie within ``depth`` places either side of where
    # the value would go: a window of 2·depth, not the whole row, is ranked by distance
    by_v = own_all[np.argsort(vector[own_all], kind="stable")]
    at = np.searchsorted(vector[by_v], vector[other])
    window = at[:, None] + np.arange(-depth, depth)[None, :]
    inside = (window >= 0) & (window < by_v.size)
    peers = by_v[np.clip(window, 0, by_v.size - 1)]
    gap = np.where(inside, np.abs(vector[peers] - vector[other, None]), np.inf)
    nearest = np.take_along_axis(peers, np.argsort(gap, axis=1, kind="stable")[:, :min(depth, by_v.size)], axis=1)
    neutral = (1.0 - best_share) * kv[nearest].mean(axis=1)
    if best_share:
        neutral = neutral + best_share * float(kv[own_all].max())
    out = kv.copy()
    out[other] = np.maximum(kv[other], neutral)
    return out


@dataclass(frozen=True)
class Evidence:
    """One query's evidence for its candidates (arrays aligned with them): ``vector`` V(c),
    ``keyword`` K(c) before the neutral value, ``translated`` the translated keyword lists'
    addition (0 for the query's own language), and g(q)."""
    vector: np.ndarray
    keyword: np.ndarray
    translated: np.ndarray
    g: float


def calibrated_evidence(candidates: Sequence[str], z: Mapping[str, np.ndarray], own: np.ndarray,
                        keyword: Sequence[Hit], shares: Mapping[str, float], *, also: Sequence[Sequence[Hit]] = (),
                        weights: Mapping[str, float], d0: float, tau: float,
                        translated: Mapping[str, float] | None = None, translated_weight: float = 0.0,
                        own_coverage: float = 0.0, hold: float = 0.0, hold_floor: float = 0.5,
                        share_power: float = 2.0) -> Evidence:
    """The evidence :func:`calibrated_arrays` fuses (its arguments, less the fusion's own;
    ``share_power``: p of K(c))."""
    kv = keyword_evidence(candidates, [keyword, *also], shares, share_power)
    vector = vector_evidence(z, weights, len(candidates))
    g = held_share(language_share(vector, own, d0, tau), own_coverage, hold, hold_floor) \
        if keyword or any(also) else 0.0
    added = np.zeros(len(candidates))
    if translated:
        # the translated list speaks where the query's own language holds no strong match
        own_best = float(kv[own].max()) if own.any() else 0.0
        t = np.array([translated.get(c, 0.0) for c in candidates])
        added = np.where(own, 0.0, translated_weight * (1.0 - g * own_best) * t)
    return Evidence(vector, kv, added, g)


def calibrated_scores(ev: Evidence, own: np.ndarray, *, keyword_weight: float, neutral_depth: int = 5,
                      neutral_best_share: float = 1.0, borrowed: np.ndarray | None = None,
                      keyword_floor: float = 0.0) -> np.ndarray:
    """``V(c) + w_K · m(q) · K(c)`` (K with the neutral value for other languages) plus the
    translated lists' addition, ``m(q) = f + (1 − f) · g(q)``, f = ``keyword_floor``.
    ``borrowed``: evidence the other languages' candidates borrow
    (:mod:`chaja.search.feedback`), counted in their standing for the neutral value only."""
    standing = ev.vector if borrowed is None else ev.vector + borrowed
    kv = neutral_for_other_languages(ev.keyword, standing, own, neutral_depth, neutral_best_share * (1.0 - ev.g))
    m = keyword_floor + (1.0 - keyword_floor) * ev.g
    return ev.vector + keyword_weight * m * kv + ev.translated


def tail_yielded(scores: np.ndarray, own: np.ndarray, docs: np.ndarray, g: float, keep: int,
                 weight: float) -> np.ndarray:
    """The fused scores (the borrowed lift included) less ``weight · g(q)`` for each chunk of
    :func:`other_language_tail`; unchanged where ``weight`` is 0."""
    if not weight or not g:
        return scores
    return scores - weight * g * other_language_tail(scores, own, docs, keep)


def other_language_tail(scores: np.ndarray, own: np.ndarray, docs: np.ndarray, keep: int) -> np.ndarray:
    """Which candidates are the other languages' tail: those in another language than the
    query's whose document is not one of the ``keep`` best documents of those languages
    (a document ranked by its best candidate). Fusion takes ``y · g(q)`` from each
    (``search.other_language_yield``, :func:`tail_yielded`, last in fusion: the evidence
    borrowed from the query's language included):

        score'(c) = score(c) − y · g(q)    for c ∉ L(q) outside the ``keep`` best documents ∉ L(q)

    The vectors (e5 after the language projection, the aligned encoder by design) judge
    pages of either language alike, so past its answer a same-language question's first
    ten were half the other language's neighbours of the topic. The other language keeps
    its best documents where they stand, the answer when the language was misjudged; the
    rest yield as much as g(q) says the question's own language holds the answer. Chosen on
    the React and Vue natural dev splits (docs/ranking.md)."""
    other = np.flatnonzero(~own)
    tail = np.zeros(own.size, dtype=bool)
    if other.size == 0 or other.size == own.size:
        return tail
    order = other[np.argsort(-scores[other], kind="stable")]
    kept: set = set()
    for i in order.tolist():
        d = docs[i]
        if d not in kept and len(kept) >= keep:
            tail[i] = True
        elif d not in kept:
            kept.add(d)
    return tail


def fused_order(candidates: Sequence[str], scores: np.ndarray, ranks: np.ndarray) -> list[tuple[str, float]]:
    """(chunk id, score) best first; ties keep the best single rank (``ranks``), then the
    candidates' order (by id)."""
    order = np.lexsort((np.arange(scores.size), ranks, -scores))
    return [(candidates[i], s) for i, s in zip(order.tolist(), scores[order].tolist())]


def calibrated_arrays(candidates: Sequence[str], z: Mapping[str, np.ndarray], own: np.ndarray,
                      keyword: Sequence[Hit], shares: Mapping[str, float], *, also: Sequence[Sequence[Hit]] = (),
                      weights: Mapping[str, float], keyword_weight: float, d0: float, tau: float,
                      best_rank: Mapping[str, int], neutral_depth: int = 5, neutral_best_share: float = 1.0,
                      translated: Mapping[str, float] | None = None,
                      translated_weight: float = 0.0, own_coverage: float = 0.0, hold: float = 0.0,
                      hold_floor: float = 0.5, keyword_floor: float = 0.0,
                      share_power: float = 2.0) -> tuple[list[tuple[str, float]], float]:
    """Fused (chunk id, score) best first, and g(q), the keyword list's share for this query.
    ``candidates`` sorted by id; ``z``: field → z-scores aligned with them (NaN: no vector);
    ``own``: which of them are in the query's language; ``also``: further keyword-like
    lists (the title list), a chunk taking its best K; ``translated``: K_T of the chunks of
    the translated keyword lists, added with ``translated_weight`` to chunks outside the
    query's language; ``own_coverage``: the largest share of the query's terms one of
    the keyword list's best chunks in the query's language holds, which holds g(q) up to
    ``hold`` (:func:`held_share`); ``keyword_floor``: f of m(q); ``share_power``: p of K(c).
    Ties keep the best single rank, then the id."""
    ev = calibrated_evidence(candidates, z, own, keyword, shares, also=also, weights=weights, d0=d0, tau=tau,
                             translated=translated, translated_weight=translated_weight,
                             own_coverage=own_coverage, hold=hold, hold_floor=hold_floor, share_power=share_power)
    scores = calibrated_scores(ev, own, keyword_weight=keyword_weight, neutral_depth=neutral_depth,
                               neutral_best_share=neutral_best_share, keyword_floor=keyword_floor)
    return fused_order(candidates, scores, np.array([best_rank[c] for c in candidates])), ev.g


def calibrated(z: Mapping[str, Mapping[str, float]], keyword: Sequence[Hit], shares: Mapping[str, float], *,
               lang_of: Mapping[str, str], qlang: str, best_rank: Mapping[str, int],
               **settings) -> tuple[list[tuple[str, float]], float]:
    """:func:`calibrated_arrays` on mappings keyed by chunk id: ``best_rank`` names the
    candidates, ``z`` is field → chunk → z-score and ``lang_of`` chunk → language."""
    candidates = sorted(best_rank)
    arrays = {f: np.array([scores.get(c, np.nan) for c in candidates], dtype=np.float64) for f, scores in z.items()}
    own = np.array([lang_of.get(c) == qlang for c in candidates], dtype=bool)
    return calibrated_arrays(candidates, arrays, own, keyword, shares, best_rank=best_rank, **settings)


def keyword_evidence(candidates: Sequence[str], lists: Sequence[Sequence[Hit]],
                     shares: Mapping[str, float], power: float = 2.0) -> np.ndarray:
    """K of each candidate: its best :func:`keyword_values` over the keyword-like ``lists``, 0 in none."""
    kv: dict[str, float] = {}
    for hits in lists:
        for c, v in keyword_values(hits, shares, power).items():
            kv[c] = max(kv.get(c, 0.0), v)
    return np.array([kv.get(c, 0.0) for c in candidates], dtype=np.float64)
