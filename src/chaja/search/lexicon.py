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
:data:`MIN_COUNT` times (every word, in a sample of fewer than :data:`SMALL_SAMPLE` chunks:
a small store repeats few words, and its questions name the words it holds once), the
:data:`MAX_WORDS` most frequent kept. It is recorded in
the store's meta (``index.lexicon``, vectors as int8 codes with a scale a row) with the statistics, and a
word's vector is reused from the previous lexicon rather than encoded again. With it go
each word's nearest word in every other language (:mod:`chaja.search.nearest_words`), so a
query word the store holds is translated by looking it up.
"""
from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np

from chaja import heap, meta_arrays
from chaja.function_words import is_hangul, word_runs
from chaja.search import nearest_words, word_codes
from chaja.search.decoded_by_digest import DecodedByDigest
from chaja.search.query import content_words, run_content_words
from chaja.stores.id_rows import IdRows

META_KEY = "index.lexicon"
#: the counting rules' edition: raised when :func:`count_words` or the words it keeps change,
#: so that a store's lexicon is counted again (:func:`chaja.store_statistics.sample_key`)
RULES = 1
SAMPLE = 20_000       # chunks read to count words
MIN_COUNT = 2         # a word seen fewer times in the sample is not in the lexicon ...
SMALL_SAMPLE = 1000   # ... unless the sample holds fewer chunks than this: then every word is
MAX_WORDS = 30_000    # the most frequent words kept per language
ENCODE_BATCH = 256
MAX_TRANSLATIONS = 100_000   # translations a lexicon keeps between searches
SCAN_FROM = 4096             # words of a language from which translation scans with a bound first


def words_of(text: str, lang: str) -> list[str]:
    """The lexicon words of one text in ``lang``: its content words in that language's
    script (Hangul for ``ko``, any other for the rest), two characters or more, not numbers."""
    korean = lang == "ko"
    return [w for w in content_words(text) if _lexicon_word(w, korean)]


def _lexicon_word(w: str, korean: bool) -> bool:
    """Two characters or more, not a number, in Hangul exactly when ``korean``."""
    return len(w) >= 2 and is_hangul(w) == korean and not w.isdigit()


def count_words(texts: Iterable[tuple[str, str]]) -> dict[str, Counter]:
    """language → word → count, over ``(lang, text)`` pairs (chunks with no language
    skipped): the counts :func:`words_of` gives text by text, with each distinct run of
    letters and digits analysed once (a run's words depend on it alone), not each time a
    text holds it: a store's text repeats its words."""
    runs: dict[str, Counter] = {}
    for lang, text in texts:
        if lang:
            runs.setdefault(lang, Counter()).update(word_runs(text))
    counts: dict[str, Counter] = {}
    for lang, seen in runs.items():
        korean = lang == "ko"
        counted = counts[lang] = Counter()
        for run, n in seen.items():
            for w in run_content_words(run):
                if _lexicon_word(w, korean):
                    counted[w] += n
    return counts


class Lexicon:
    """Per language, its words and their unit aligned vectors (rows of one matrix); and per
    (language, other language), each word's nearest word there (:mod:`chaja.search.nearest_words`)."""

    def __init__(self, words: dict[str, list[str]], vectors: dict[str, np.ndarray],
                 nearest: dict[tuple[str, str], nearest_words.Table] | None = None):
        self.words, self.vectors = words, vectors
        self.nearest = nearest or {}
        #: per language, word → row, as sorted string hashes (:class:`~chaja.stores.id_rows.IdRows`):
        #: a dictionary keyed by (language, word) held 6.4 MB of a 100,000-chunk store's 48,800 words
        self._rows: dict[str, IdRows] = {}
        self._scans: dict[str, nearest_words.BoundedScan] = {}
        #: (word, language, threshold) → its translation, once computed (a search asks again
        #: and again); cleared past :data:`MAX_TRANSLATIONS` so a long-running server stays bounded
        self.translations: dict[tuple[str, str, float], str | None] = {}

    def _row(self, lang: str, word: str) -> int | None:
        if lang not in self.words:
            return None
        if lang not in self._rows:
            self._rows[lang] = IdRows(self.words[lang])
        row = self._rows[lang].get(word)
        return row if row >= 0 else None

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

    def known(self) -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
        """word → (codes, scales, row): where its vector's int8 codes and scale lie, over every
        language (to reuse when the lexicon is rebuilt: :func:`build`). A lexicon held as
        float rows (recorded before the codes) gives the codes of its unit rows."""
        out: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
        for lang, ws in self.words.items():
            if not ws:
                continue
            m = self.vectors[lang]
            codes, scales = (m.codes, m.scales) if isinstance(m, word_codes.WordRows) else \
                word_codes.row_codes(_unit_rows(np.array(m, dtype=np.float32)))
            out.update((w, (codes, scales, i)) for i, w in enumerate(ws))
        return out

    def remember(self, found: dict[tuple[str, str, float], str | None]) -> None:
        """Keep translations for the next search (all forgotten once there are too many)."""
        if len(self.translations) + len(found) > MAX_TRANSLATIONS:
            self.translations.clear()
        self.translations.update(found)

    def translate_words(self, words: list[str], vectors: Mapping[str, np.ndarray], lang: str,
                        threshold: float) -> list[str | None]:
        """:meth:`translate` of ``words`` (``vectors``: word → its aligned vector): a word of
        another language's lexicon is looked up in the nearest-word table built with it, the
        others are scanned for."""
        found: dict[str, str | None] = {}
        for w in words:
            hit = self._nearest_known(w, lang)
            if hit is not None:
                row, cos = hit
                found[w] = self.words[lang][row] if cos >= threshold else None
        scan = [w for w in dict.fromkeys(words) if w not in found]
        if scan:
            found.update(zip(scan, self.translate(np.stack([vectors[w] for w in scan]), lang, threshold)))
        return [found[w] for w in words]

    def _nearest_known(self, word: str, lang: str) -> tuple[int, float] | None:
        """(row in ``lang``'s words, cosine) of ``word``'s nearest word in ``lang``, where a
        lexicon of another language holds ``word`` and its table was built; else None."""
        for src in self.languages:
            table = self.nearest.get((src, lang)) if src != lang else None
            i = self._row(src, word) if table is not None else None
            if i is not None:
                return int(table[0][i]), float(table[1][i])
        return None

    def translate(self, vectors: np.ndarray, lang: str, threshold: float) -> list[str | None]:
        """For each row of ``vectors`` (aligned vectors of query words), the nearest word of
        ``lang`` when its cosine is at least ``threshold``, else None.

        Scoring every word reads the language's whole matrix (30,000 words: 61 MB, about
        1.5 ms a word on two cores, seldom in the cache after a search's graph walks). From
        :data:`SCAN_FROM` words a :class:`~chaja.search.nearest_words.BoundedScan` reads a
        quarter of it and scores in full only the words that can still win: the same word."""
        mat = self.vectors.get(lang)
        if mat is None or not len(mat) or not len(vectors):
            return [None] * len(vectors)
        q = np.asarray(vectors, dtype=np.float32)
        if len(mat) < SCAN_FROM:
            scores = (mat @ q.T).T
            best = scores.argmax(axis=1)
            top = scores[np.arange(len(q)), best]
        else:
            if lang not in self._scans:
                self._scans[lang] = nearest_words.BoundedScan(mat)
            best, top = self._scans[lang].nearest(q, threshold)
        return [self.words[lang][j] if top[i] >= threshold else None for i, j in enumerate(best.tolist())]


def build(texts: Iterable[tuple[str, str]], encoder, previous: Lexicon | None = None,
          tables: bool = True) -> Lexicon:
    """The lexicon of ``(lang, text)`` pairs, new words encoded with ``encoder`` (the aligned
    encoder), known ones taken from ``previous``; without its nearest-word tables where
    ``tables`` is False (a bulk load: :func:`with_tables` adds them later, and until then
    every query word is scanned for, with the same answers). A word's vector is kept as the
    int8 codes of its unit vector (:mod:`chaja.search.word_codes`); a known word's codes are
    copied, not decoded and quantised again: the codes of a row its codes give back are the
    same codes."""
    known = previous.known() if previous is not None else {}
    words: dict[str, list[str]] = {}
    texts = list(texts)
    least = MIN_COUNT if len(texts) >= SMALL_SAMPLE else 1
    for lang, counter in sorted(count_words(texts).items()):
        kept = [w for w, c in sorted(counter.items(), key=lambda wc: (-wc[1], wc[0])) if c >= least]
        words[lang] = kept[:MAX_WORDS]
    missing = sorted({w for ws in words.values() for w in ws if w not in known})
    for at in range(0, len(missing), ENCODE_BATCH):
        batch = missing[at:at + ENCODE_BATCH]
        codes, scales = word_codes.row_codes(_unit_rows(np.array(encoder.encode_passages(batch), dtype=np.float32)))
        known.update((w, (codes, scales, i)) for i, w in enumerate(batch))
    vectors: dict[str, np.ndarray | word_codes.WordRows] = {}
    for lang, ws in words.items():
        at = [known[w] for w in ws]
        vectors[lang] = word_codes.WordRows(np.stack([c[i] for c, _, i in at]),
                                            np.array([s[i] for _, s, i in at], dtype=np.float32)) \
            if ws else np.zeros((0, 0), np.float32)
    lex = Lexicon(words, vectors)
    return with_tables(lex, previous) if tables else lex


def _unit_rows(mat: np.ndarray) -> np.ndarray:
    """``mat``'s rows scaled to unit length, in place (a zero row stays zero)."""
    if mat.size:
        mat /= np.maximum(np.linalg.norm(mat, axis=1, keepdims=True), 1e-12)
    return mat


def with_tables(lex: Lexicon, previous: Lexicon | None = None) -> Lexicon:
    """``lex`` with its nearest-word tables, from its vectors as the store keeps them (so a
    bulk load's tables, added later, are a full build's), updated from ``previous``'s where
    given (:func:`chaja.search.nearest_words.tables`)."""
    vectors = {lang: np.asarray(m, dtype=np.float32) for lang, m in lex.vectors.items()}
    return Lexicon(lex.words, lex.vectors, nearest_words.tables(lex.words, vectors, previous))


def of_store(store, encoder, previous: Lexicon | None = None, tables: bool = True) -> Lexicon:
    """The lexicon of a store: :func:`build` over its chunk sample (:meth:`Store.chunk_sample`,
    at most :data:`SAMPLE` chunks), each chunk read as its section name and text."""
    sample = store.chunk_sample(SAMPLE)
    return build(((c.lang, f"{c.section_name}\n{c.text}") for c in sample), encoder, previous, tables)


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(a.tobytes()).decode("ascii")


def encode(lex: Lexicon, binary: bool = False) -> str | bytes:
    """The lexicon for the store's meta: per language its words, their vectors as int8 codes
    with one scale a row (:mod:`chaja.search.word_codes`) and the nearest-word tables; as
    JSON with the arrays in base64, or with ``binary`` as one packed value
    (:mod:`chaja.meta_arrays`: 3/4 of the bytes, read without decoding), for a store that
    keeps bytes."""
    out, arrays = {}, {}
    for lang, ws in sorted(lex.words.items()):
        kept = lex.vectors[lang]
        codes, scales = ((kept.codes, kept.scales) if isinstance(kept, word_codes.WordRows)
                         else word_codes.row_codes(kept))
        tables = {dst: (rows.astype("<i4"), cos.astype("<f4"))
                  for (src, dst), (rows, cos) in sorted(lex.nearest.items()) if src == lang}
        if binary:          # (the codes' shape is the dimension)
            out[lang] = {"words": ws, "nearest": sorted(tables)}
            arrays[f"{lang}.codes"], arrays[f"{lang}.scales"] = codes, scales.astype("<f4")
            for dst, (rows, cos) in tables.items():
                arrays[f"{lang}.{dst}.rows"], arrays[f"{lang}.{dst}.cos"] = rows, cos
        else:
            out[lang] = {"words": ws, "dim": int(lex.vectors[lang].shape[1]) if ws else 0,
                         "codes": _b64(codes), "scales": _b64(scales.astype("<f4")),
                         "nearest": {dst: {"rows": _b64(rows), "cos": _b64(cos)}
                                     for dst, (rows, cos) in tables.items()}}
    return meta_arrays.pack(out, arrays) if binary else json.dumps(out, ensure_ascii=False)


def is_current(value: str | bytes | None) -> bool:
    """Whether the stored value is a lexicon as :func:`encode` writes it today (or the mark
    that a store of one language has none): not missing, and with the nearest-word tables,
    which a lexicon recorded before them lacks (the next index run adds them)."""
    return value == "" or meta_arrays.is_packed(value) or (isinstance(value, str) and '"nearest":' in value)


def decode(value: str | bytes | None) -> Lexicon | None:
    """The lexicon :func:`encode` wrote, in either form, or None (shared between callers: read only)."""
    return _DECODED.get(value, _decoded_and_given_back) if value else None


#: the last lexicons decoded (:mod:`chaja.search.decoded_by_digest`)
_DECODED: DecodedByDigest[Lexicon | None] = DecodedByDigest(keep=2)


def _decoded_and_given_back(value: str | bytes) -> Lexicon | None:
    lex = _decoded(value)
    heap.give_back()        # the decode's transient strings, about three times what is kept
    return lex


def _unpacked(value: bytes) -> tuple[dict, dict, dict]:
    """(words, vectors, nearest) of a lexicon :func:`encode` packed."""
    meta, arrays = meta_arrays.unpack(value)
    words, vectors, nearest = {}, {}, {}
    for lang, entry in meta.items():
        ws, codes = list(entry["words"]), arrays[f"{lang}.codes"]
        if codes.ndim != 2 or codes.shape[0] != len(ws):
            raise ValueError(f"the {lang} codes do not fit its words")
        words[lang] = ws
        vectors[lang] = word_codes.WordRows(codes, arrays[f"{lang}.scales"]) if ws else np.zeros((0, 0), np.float32)
        for dst in entry["nearest"]:
            nearest[lang, dst] = (arrays[f"{lang}.{dst}.rows"], arrays[f"{lang}.{dst}.cos"])
    return words, vectors, nearest


def _decoded(value: str | bytes) -> Lexicon | None:
    try:
        if not isinstance(value, str):
            return _checked(*_unpacked(value))
        raw = json.loads(value)
        words, vectors, nearest = {}, {}, {}
        for lang, entry in raw.items():
            ws, dim = list(entry["words"]), int(entry["dim"])
            if "codes" in entry and ws:     # kept as codes in memory too (float32 rows on access)
                codes = np.frombuffer(base64.b64decode(entry["codes"]), dtype=np.int8).reshape(len(ws), dim)
                mat = word_codes.WordRows(codes, np.frombuffer(base64.b64decode(entry["scales"]), dtype="<f4"))
            elif ws:            # recorded before the codes: float16
                mat = np.frombuffer(base64.b64decode(entry["vectors"]), dtype=np.float16).astype(np.float32)
                mat = mat.reshape(len(ws), dim)
                mat.flags.writeable = False
            else:
                mat = np.zeros((0, 0), np.float32)
            words[lang], vectors[lang] = ws, mat
            for dst, table in entry.get("nearest", {}).items():     # a lexicon recorded before has none
                nearest[lang, dst] = (np.frombuffer(base64.b64decode(table["rows"]), dtype="<i4"),
                                      np.frombuffer(base64.b64decode(table["cos"]), dtype="<f4"))
        return _checked(words, vectors, nearest)
    except (ValueError, KeyError, TypeError):
        return None          # a damaged value: no translation until the next index run rewrites it


def _checked(words: dict, vectors: dict, nearest: dict) -> Lexicon:
    """The lexicon of these parts, once each nearest-word table fits its two languages."""
    for (src, dst), (rows, cos) in nearest.items():
        if dst not in words or len(rows) != len(words[src]) or len(cos) != len(rows) \
                or (len(rows) and not 0 <= int(rows.min()) <= int(rows.max()) < len(words[dst])):
            raise ValueError(f"the nearest-word table {src} → {dst} does not fit the lexicon")
    return Lexicon(words, vectors, nearest)
