"""A query's context, built once per search: what every later stage reads.

The text checked, ``k`` and the candidate depth ``n = max(search.candidates, k)``,
the filters, the query's content terms (:mod:`chaja.search.query`) and a memo of the
terms each chunk holds, the query's language, the query vector and the aligned
encoder's vector (encoded side by side), the words to carry into other languages and
their translations (:mod:`chaja.search.lexicon`), and the reranker, when one is set.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from chaja.filters import Filters
from chaja.language import detect_language
from chaja.rerank import Reranker
from chaja.search.query import query_terms
from chaja.search.stage_costs import timed

if TYPE_CHECKING:
    from chaja.search.searcher import Searcher


class QueryError(ValueError):
    """The query cannot be searched (empty, or longer than the limit)."""


MAX_QUERY_CHARS = 4000
MAX_TOP_K = 1000
#: distinct terms a query keeps (a long query of distinct Hangul syllables has thousands of bigrams)
MAX_QUERY_TERMS = 256
MODES = ("hybrid", "keyword", "vector")


def check_query(text: str) -> str:
    if not isinstance(text, str):
        raise QueryError("the query must be a string")
    text = text.replace("\x00", " ").strip()
    if not text:
        raise QueryError("the query is empty")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is {len(text)} characters long; the limit is {MAX_QUERY_CHARS}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise QueryError("the query is not valid Unicode text (it holds a lone surrogate)") from None
    expanded = len(unicodedata.normalize("NFKC", text))
    if expanded > MAX_QUERY_CHARS:   # one character may stand for many (U+FDFA is 18)
        raise QueryError(f"the query is {expanded} characters long once normalised (NFKC); "
                         f"the limit is {MAX_QUERY_CHARS}")
    return text


def check_top_k(top_k: object) -> int | None:
    """``None`` (the configured ``search.top_k``) or a whole number from 1 to :data:`MAX_TOP_K`."""
    if top_k is None:
        return None
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
        raise QueryError(f"k must be a whole number from 1 to {MAX_TOP_K}, not {top_k!r}")
    return top_k


@dataclass
class QueryContext:
    text: str
    k: int                                   # results asked for
    n: int                                   # candidates per list
    where: Filters | None
    terms: list[str]                         # the query's content terms
    terms_of: Callable[[list[str]], dict[str, set[str]]]   # chunk → the query terms it holds (memo)
    qlang: str                               # the query's language
    qv: np.ndarray | None                    # query vector (None: keyword mode, or no encoder)
    qa: np.ndarray | None                    # aligned query vector (None: not asked)
    carried: dict[str, list[str | None]] = field(default_factory=dict)   # language → the words translated
    reranker: Reranker | None = None

    @property
    def use_vectors(self) -> bool:
        return self.qv is not None


def build_context(s: Searcher, text: str, top_k: int | None, filters: Filters | None) -> QueryContext:
    """Check the query, analyse it, encode it (and the words to translate) once."""
    cfg = s.cfg
    text = check_query(text)
    k = check_top_k(top_k) or cfg.top_k
    reranker = s.rerankers(cfg.reranker) if cfg.reranker != "none" and s.rerank_cfg.depth else None
    if cfg.mode not in MODES:
        raise ValueError(f"search.mode must be hybrid, keyword or vector, not {cfg.mode!r}")
    terms = query_terms(s.analyzer, text, cfg.query_terms)[:MAX_QUERY_TERMS]
    use_vectors = cfg.mode != "keyword" and s.encoder is not None
    qlang = detect_language(text)
    # a keyword list in translation: hybrid search with calibrated fusion only (vector-only stays vectors)
    words = s.words_to_translate(text, qlang) if use_vectors and cfg.mode == "hybrid" and cfg.fusion == "calibrated" \
        else []
    known = timed("context: known words", s.known_word_vectors, words)
    unknown = [w for w in words if w not in known]
    qv, (qa, encoded) = timed("context: encode", s.encode_query, text, unknown) if use_vectors else (None, (None, None))
    carried = timed("context: translate", s.translations, words, {**known, **dict(zip(unknown, encoded))}, qlang) \
        if qa is not None and words else {}
    return QueryContext(text=text, k=k, n=max(cfg.candidates, k), where=filters or None, terms=terms,
                        terms_of=s.terms_memo(terms), qlang=qlang, qv=qv, qa=qa, carried=carried, reranker=reranker)
