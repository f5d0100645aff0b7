"""Text → index terms, the same way for documents and queries.

The default analyser (``"bigram"``) follows the production setup: every maximal
run of Hangul syllables yields its overlapping two-syllable pairs (a run of one
syllable yields itself: "소각결정" → 소각, 각결, 결정), and every other run of
letters or digits is one lower-cased word. Text is NFKC-normalised first, so
decomposed Hangul (NFD, as macOS writes it) and full-width Latin match.

``"whitespace"`` keeps Korean words whole (word + particle, the failure mode the
bigram analyser fixes); ``"kiwi"`` uses the Kiwi morphological analyser (extra).
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache

_HANGUL_RUN = "\uac00-\ud7a3"
# A Hangul syllable run, or a run of other word characters (letters, digits; not "_").
_TOKEN = re.compile(rf"[{_HANGUL_RUN}]+|[^\W_{_HANGUL_RUN}]+")

Analyzer = Callable[[str], list[str]]


def normalize(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def hangul_bigrams(run: str) -> list[str]:
    """Overlapping two-syllable pairs of one Hangul run; a single syllable is kept whole."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


#: the tokens of ASCII text: NFKC leaves it as it is, and of its characters exactly the
#: letters and digits are word characters other than "_"
_ASCII_TOKEN = re.compile(r"[A-Za-z0-9]+")


def bigram_terms(text: str) -> list[str]:
    if text.isascii():          # (the same terms, a third of the time: no Unicode classes to test)
        return _ASCII_TOKEN.findall(text.lower())
    terms: list[str] = []
    for m in _TOKEN.finditer(normalize(text)):
        tok = m.group()
        if "\uac00" <= tok[0] <= "\ud7a3":
            terms.extend(hangul_bigrams(tok))
        else:
            terms.append(tok.lower())
    return terms


def whitespace_terms(text: str) -> list[str]:
    """Whitespace words with punctuation removed; Korean words stay whole."""
    out = []
    for word in normalize(text).split():
        out.extend(t.lower() for t in re.findall(r"[^\W_]+", word))
    return out


@lru_cache(maxsize=1)
def _kiwi():
    try:
        from kiwipiepy import Kiwi
    except ImportError as exc:  # pragma: no cover - depends on the extra
        raise ImportError(
            "the 'kiwi' analyser needs the kiwi extra: pip install 'chaja[kiwi]'"
        ) from exc
    return Kiwi()


# Kiwi part-of-speech tags kept as index terms: nouns, verb/adjective stems, roots,
# foreign words, Chinese characters and numbers.
_KIWI_KEEP = ("NN", "NR", "NP", "VV", "VA", "XR", "SL", "SH", "SN", "MAG")


def kiwi_terms(text: str) -> list[str]:
    """Korean morphemes from Kiwi (content tags only); non-Korean words lower-cased."""
    terms = []
    for tok in _kiwi().tokenize(normalize(text)):
        if tok.tag.startswith(_KIWI_KEEP):
            terms.append(tok.form.lower())
    return terms


ANALYZERS: dict[str, Analyzer] = {
    "bigram": bigram_terms,
    "whitespace": whitespace_terms,
    "kiwi": kiwi_terms,
}


def get_analyzer(name: str) -> Analyzer:
    try:
        return ANALYZERS[name]
    except KeyError:
        raise ValueError(f"unknown analyser {name!r}; choose one of {sorted(ANALYZERS)}") from None


def query_terms(analyzer: Analyzer, text: str) -> list[str]:
    """Distinct terms of a query, in first-seen order (the gate counts these)."""
    return list(dict.fromkeys(analyzer(text)))
