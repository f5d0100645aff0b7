"""The store's own words per language, as aligned vectors: word-by-word query translation.

The keyword list cannot see across scripts: a Korean question's bigrams never match an
English page. The aligned encoder (:mod:`chaja.encoders.aligned`) puts a word and its
translation close together even as single words (상태 → state 0.87, 경계 → boundary
0.91, 사용자 → user 0.95), so a query's content words can be carried into another
language by nearest neighbour among that language's words *in this store*:

    t(w, L) = argmax_{u ∈ W_L} a(w)·a(u),  kept when a(w)·a(u) ≥ θ,

with W_L the lexicon of language L and a(·) the aligned encoder's unit vector. The
translated words, analysed as the store analyses text, search L's chunks as one more
keyword list (:meth:`Searcher.translated_lists`), and calibrated fusion counts it for
those chunks only (:mod:`chaja.search.calibrated`).

A language's lexicon is the content words (:func:`chaja.search.query.content_words`;
Hangul words for Korean, the other words for every other language) of a sample of its
chunks (at most :data:`SAMPLE` chunks of the store, in the order
:meth:`Store.chunk_sample` gives, the same in every store) seen at least
:data:`MIN_COUNT` times, the :data:`MAX_WORDS` most frequent kept. It is recorded in
the store's meta (``index.lexicon``, vectors as float16) with the statistics, and a
word's vector is reused from the previous lexicon rather than encoded again.
"""
from __future__ import annotations

import base64
import functools
import json
from collections import Counter
from collections.abc import Iterable

import numpy as np

from chaja.function_words import is_hangul
from chaja.search.query import content_words

META_KEY = "index.lexicon"
SAMPLE = 20_000       # chunks read to count words
MIN_COUNT = 2         # a word seen fewer times in the sample is not in the lexicon
MAX_WORDS = 30_000    # the most frequent words kept per language
ENCODE_BATCH = 256
MAX_TRANSLATIONS = 100_000   # translations a lexicon keeps between searches
COARSE_FROM = 4096           # words of a language from which translation scans int8 copies first
COARSE_CANDIDATES = 64       # words of the int8 scan rescored from their float vectors
COARSE_THREADS = 2


def words_of(text: str, lang: str) -> list[str]:
    """The lexicon words of one text in ``lang``: its content words in that language's
    script (Hangul for ``ko``, any other for the rest), two characters or more, not numbers."""
    korean = lang == "ko"
    return [w for w in content_words(text)
            if len(w) >= 2 and is_hangul(w) == korean and not w.isdigit()]


def count_words(texts: Iterable[tuple[str, str]]) -> dict[str, Counter]:
    """language → word → count, over ``(lang, text)`` pairs (chunks with no language skipped)."""
    counts: dict[str, Counter] = {}
    for lang, text in texts:
        if lang:
            counts.setdefault(lang, Counter()).update(words_of(text, lang))
    return counts


class Lexicon:
    """Per language, its words and their unit aligned vectors (rows of one matrix)."""

    def __init__(self, words: dict[str, list[str]], vectors: dict[str, np.ndarray]):
        self.words, self.vectors = words, vectors
        self._rows: dict[tuple[str, str], int] | None = None
        self._coarse_search: dict[str, object] = {}
        #: (word, language, threshold) → its translation, once computed (a search asks again
        #: and again); cleared past :data:`MAX_TRANSLATIONS` so a long-running server stays bounded
        self.translations: dict[tuple[str, str, float], str | None] = {}

    def _row(self, lang: str, word: str) -> int | None:
        if self._rows is None:
            self._rows = {(lang_, w): i for lang_, ws in self.words.items() for i, w in enumerate(ws)}
        return self._rows.get((lang, word))

    def vector_of(self, word: str, lang: str | None = None) -> np.ndarray | None:
        """The stored vector of ``word`` in ``lang``'s lexicon, or in any language's with
        ``lang`` None (the vector of a word is the same whichever list holds it), or None."""
        for name in ([lang] if lang is not None else self.languages):
            i = self._row(name, word)
            if i is not None:
                return self.vectors[name][i]
        return None

    @property
    def languages(self) -> list[str]:
        return sorted(lang for lang, ws in self.words.items() if ws)

    def known(self) -> dict[str, np.ndarray]:
        """word → vector, over every language (to reuse when the lexicon is rebuilt)."""
        return {w: self.vectors[lang][i] for lang, ws in self.words.items() for i, w in enumerate(ws)}

    def remember(self, found: dict[tuple[str, str, float], str | None]) -> None:
        """Keep translations for the next search (all forgotten once there are too many)."""
        if len(self.translations) + len(found) > MAX_TRANSLATIONS:
            self.translations.clear()
        self.translations.update(found)

    def translate(self, vectors: np.ndarray, lang: str, threshold: float) -> list[str | None]:
        """For each row of ``vectors`` (aligned vectors of query words), the nearest word of
        ``lang`` when its cosine is at least ``threshold``, else None.

        Scoring every word reads the language's whole matrix (30,000 words: 61 MB, 10 ms for
        four words on two cores, seldom in the cache after a search's graph walks). From
        :data:`COARSE_FROM` words, with the ``ann`` extra, usearch's exact scan of int8 copies
        (a quarter of the bytes) finds the best :data:`COARSE_CANDIDATES`, rescored from the
        float vectors: the same word unless more than that many lie within int8 rounding of
        the nearest (none of some 100,000 lexicon words of the benchmark stores)."""
        mat = self.vectors.get(lang)
        if mat is None or not len(mat) or not len(vectors):
            return [None] * len(vectors)
        q = np.asarray(vectors, dtype=np.float32)
        coarse = self._coarse(lang)
        if coarse is None:
            scores = q @ mat.T
            best = scores.argmax(axis=1)
            top = scores[np.arange(len(q)), best]
        else:
            found = coarse(q)
            exact = np.einsum("ij,ikj->ik", q, mat[found])
            pick = _first_best(exact, found)
            best = found[np.arange(len(q)), pick]
            top = exact[np.arange(len(q)), pick]
        return [self.words[lang][j] if top[i] >= threshold else None for i, j in enumerate(best.tolist())]

    def _coarse(self, lang: str):
        """``q → (len(q), k)`` word rows of the best int8 scores in language ``lang``, or None
        (too few words to gain, or usearch not installed)."""
        if lang not in self._coarse_search:
            self._coarse_search[lang] = _coarse_search(self.vectors[lang])
        return self._coarse_search[lang]


def _first_best(exact: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per query, the column of ``exact`` with the highest score, the lowest word row among equals."""
    best = exact.max(axis=1, keepdims=True)
    return np.where(exact == best, rows, np.iinfo(np.int64).max).argmin(axis=1)


def _coarse_search(mat: np.ndarray):
    """The int8 first pass of :meth:`Lexicon.translate` over ``mat`` (unit rows), or None."""
    if mat.shape[0] < COARSE_FROM:
        return None
    from chaja.stores import sqlite_ann
    if not sqlite_ann.available():
        return None
    index = sqlite_ann.usearch_module()
    codes = np.clip(np.rint(mat * 127.0), -127, 127).astype(np.int8)
    k = min(COARSE_CANDIDATES, mat.shape[0])

    def search(q: np.ndarray) -> np.ndarray:
        query = np.clip(np.rint(q * 127.0), -127, 127).astype(np.int8)
        found = index.search(codes, query, k, index.MetricKind.IP, exact=True, threads=COARSE_THREADS)
        return np.asarray(found.keys, dtype=np.int64).reshape(len(q), k)
    return search


def build(texts: Iterable[tuple[str, str]], encoder, previous: Lexicon | None = None) -> Lexicon:
    """The lexicon of ``(lang, text)`` pairs, new words encoded with ``encoder`` (the aligned
    encoder), known ones taken from ``previous``."""
    known = previous.known() if previous is not None else {}
    words: dict[str, list[str]] = {}
    for lang, counter in sorted(count_words(texts).items()):
        kept = [w for w, c in sorted(counter.items(), key=lambda wc: (-wc[1], wc[0])) if c >= MIN_COUNT]
        words[lang] = kept[:MAX_WORDS]
    missing = sorted({w for ws in words.values() for w in ws if w not in known})
    for at in range(0, len(missing), ENCODE_BATCH):
        batch = missing[at:at + ENCODE_BATCH]
        for w, v in zip(batch, encoder.encode_passages(batch)):
            known[w] = v
    vectors = {}
    for lang, ws in words.items():
        mat = np.stack([np.asarray(known[w], dtype=np.float32) for w in ws]) if ws else np.zeros((0, 0), np.float32)
        if mat.size:
            mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
        vectors[lang] = mat
    return Lexicon(words, vectors)


def of_store(store, encoder, previous: Lexicon | None = None) -> Lexicon:
    """The lexicon of a store: :func:`build` over its chunk sample (:meth:`Store.chunk_sample`,
    at most :data:`SAMPLE` chunks), each chunk read as its section name and text."""
    sample = store.chunk_sample(SAMPLE)
    return build(((c.lang, f"{c.section_name}\n{c.text}") for c in sample), encoder, previous)


def encode(lex: Lexicon) -> str:
    return json.dumps({lang: {"words": ws, "dim": int(lex.vectors[lang].shape[1]) if ws else 0,
                              "vectors": base64.b64encode(lex.vectors[lang].astype(np.float16).tobytes()).decode("ascii")}
                       for lang, ws in sorted(lex.words.items())}, ensure_ascii=False)


def decode(text: str | None) -> Lexicon | None:
    """The lexicon :func:`encode` wrote, or None (shared between callers: read only)."""
    return _decoded(text) if text else None


@functools.lru_cache(maxsize=2)
def _decoded(text: str) -> Lexicon | None:
    try:
        raw = json.loads(text)
        words, vectors = {}, {}
        for lang, entry in raw.items():
            ws, dim = list(entry["words"]), int(entry["dim"])
            mat = np.frombuffer(base64.b64decode(entry["vectors"]), dtype=np.float16).astype(np.float32)
            mat = mat.reshape(len(ws), dim) if ws else np.zeros((0, 0), np.float32)
            mat.flags.writeable = False
            words[lang], vectors[lang] = ws, mat
        return Lexicon(words, vectors)
    except (ValueError, KeyError, TypeError):
        return None          # a damaged value: no translation until the next index run rewrites it
