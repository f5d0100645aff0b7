"""The search pipeline: candidate lists → gate → fusion → weights → slots → cap → documents.

1. keyword list: BM25 over the query's content terms (:mod:`chaja.search.query`;
   title and heading weighted);
2. vector list: cosine of the query vector against chunk vectors;
   heading list (``heading_list``, when the store keeps heading vectors): cosine
   against the vectors of the chunks' section names (title > heading path);
   aligned lists (``aligned_list``, ``aligned_heading_list``, on a store of more
   than one language): the aligned encoder's vectors of passages and section
   names, in which translations land together (docs/crosslingual.md); the vector
   lists are asked for in one call, which the SQLite store answers side by side
   while the keyword lists (1 and the translated one) run in the calling thread;
3. optional title list: BM25 over titles alone;
4. the keyword gate may remove the keyword list (see :mod:`chaja.search.gate`),
   judged per script for a mixed-script query;
5. fusion: calibrated (:mod:`chaja.search.calibrated`, the default), convex or
   RRF (:mod:`chaja.search.fusion`);
6. source and freshness multipliers scale fused scores (:mod:`chaja.search.weights`);
7. reserved slots put the best keyword (and title) hits first (:mod:`chaja.search.slots`);
8. a per-document chunk cap, then the top-k chunks are grouped into documents;
9. with ``search.reranker``, the first ``rerank.depth`` capped candidates are reordered
   by the reranker (:mod:`chaja.rerank`; ties keep the fused order) before the top-k,
   and a selected prefix is chosen from the mapped scores.
"""
from __future__ import annotations

import copy
import unicodedata
from collections.abc import Callable, Mapping
from datetime import date

import numpy as np

from chaja.analysis import Analyzer
from chaja.language import detect_language, is_hangul_syllable
from chaja.config import RerankConfig, SearchConfig
from chaja.documents import Hit
from chaja.encoders.base import Encoder
from chaja.rerank import Reranker, get_reranker, passage_text, rerank_order
from chaja.rerank.selection import mapped, prefix_length
from chaja.search import background, feedback, lexicon, multipart
from chaja.search.calibrated import PARTNER, calibrated_arrays, keyword_values
from chaja.search.fusion import convex, ranks, rrf
from chaja.search.abstain import should_abstain
from chaja.filters import Filters
from chaja.search.gate import best_coverage, term_coverage
from chaja.search.query import query_terms, script_groups
from chaja.language_means import META_KEY, decode_means, language_basis, project_out
from chaja.search.grouping import cap_per_document, group_by_document
from chaja.search.results import ChunkResult, SearchResult
from chaja.search.slots import keyword_slot_count, reserve
from chaja.search.weights import chunk_multiplier
from chaja.stores import side_by_side
from chaja.stores.base import Store


#: candidate list → the vector field it searches
FIELD_OF_LIST = {"vector": "chunk", "heading": "heading", "aligned": "aligned", "aligned_heading": "aligned_heading"}


class QueryError(ValueError):
    """The query cannot be searched (empty, or longer than the limit)."""


MAX_QUERY_CHARS = 4000
MAX_TOP_K = 1000
#: distinct terms a query keeps (a long query of distinct Hangul syllables has thousands of bigrams)
MAX_QUERY_TERMS = 256
#: a translated keyword list holds at most this many chunks: its value share² · s / max s falls
#: fast with rank (dev: 10 / 20 / 60 gave 0.824 / 0.826 / 0.826), and each is scored in every field
TRANSLATED_DEPTH = 20


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


class Searcher:
    def __init__(self, store: Store, encoder: Encoder | None, cfg: SearchConfig, analyzer: Analyzer,
                 aligned: Encoder | None = None, rerank: RerankConfig | None = None,
                 rerankers: Callable[[str], Reranker | None] | None = None):
        self.store, self.encoder, self.cfg, self.analyzer = store, encoder, cfg, analyzer
        self.aligned = aligned
        self.rerank_cfg = rerank or RerankConfig()
        self._rerankers = rerankers or (lambda spec: get_reranker(spec, self.rerank_cfg, self.encoder))
        self._background: dict[str, dict] | None = None
        self._languages: set[str] | None = None
        self._means: dict[str, np.ndarray] | None = None
        self._basis = np.zeros((0, 0), dtype=np.float32)
        self._lexicon: lexicon.Lexicon | bool | None = None     # False: read, and the store has none

    def with_config(self, cfg: SearchConfig) -> "Searcher":
        """This searcher with other search settings, sharing what it has read of the store."""
        other = copy.copy(self)
        other.cfg = cfg
        return other

    # ---- candidate lists -------------------------------------------------
    def keyword_list(self, terms: list[str], n: int, field: str = "all", lang: str | None = None,
                     where: Filters | None = None) -> list[Hit]:
        return self.store.keyword(terms, n, title_weight=self.cfg.title_weight,
                                  heading_weight=self.cfg.heading_weight, field=field, lang=lang, where=where)

    @property
    def language_means(self) -> dict[str, np.ndarray]:
        if self._means is None:
            self._means = decode_means(self.store.get_meta(META_KEY))
            self._basis = language_basis(self._means)
        return self._means

    @property
    def languages(self) -> set[str]:
        """The languages the store holds chunks of (from the recorded means, any count)."""
        if self._languages is None:
            self._languages = set(decode_means(self.store.get_meta(META_KEY), min_chunks=1))
        return self._languages

    def query_vector(self, text: str) -> np.ndarray:
        q = self.encoder.encode_queries([text])[0]
        if self.cfg.language_projection and self.language_means:
            q = project_out(q, self._basis)
        return q

    def vector_list(self, text: str, n: int, q: np.ndarray | None = None, where: Filters | None = None) -> list[Hit]:
        """Cosine candidates; with centring, per-language lists merged by score − q·μ_lang.
        ``q`` is the query vector when the caller has it already."""
        if self.encoder is None:
            return []
        if q is None:
            q = self.query_vector(text)
        if not (self.cfg.language_centering and self.language_means):
            return self.store.vector(q, n, where=where)
        merged = {h.chunk_id: h.score for h in self.store.vector(q, n, where=where)}   # languages without a mean
        for lang, mu in self.language_means.items():
            offset = float(q @ mu)
            for h in self.store.vector(q, n, lang=lang, where=where):
                merged[h.chunk_id] = h.score - offset
        best = sorted(merged.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
        return [Hit(cid, s) for cid, s in best]

    def cross_language_vectors(self, q: np.ndarray, qlang: str, n: int,
                               where: Filters | None = None) -> dict[str, list[Hit]]:
        """One vector list per language other than the query's (``qlang``), so the best page
        of the other language competes even when same-language pages fill the global list."""
        own = self.store.vector(q, 1, lang=qlang, where=where)
        own_best = own[0].score if own else float("-inf")
        out = {}
        for lang in self.language_means:
            if lang == qlang:
                continue
            hits = self.store.vector(q, n, lang=lang, where=where)
            if hits and hits[0].score >= own_best - self.cfg.cross_language_margin:
                out[f"vector:{lang}"] = hits
        return out

    def cross_language_lists(self, qlang: str, terms: list[str], n: int,
                             where: Filters | None = None) -> dict[str, list[Hit]]:
        """Keyword lists over chunks of the other languages, with the query's words that can
        match across scripts (for a Korean query: its non-Hangul words), each gated on its own terms."""
        words = [t for t in terms if not is_hangul_syllable(t[0])] if qlang == "ko" else terms
        out: dict[str, list[Hit]] = {}
        if not words:
            return out
        for lang in self.language_means:
            if lang == qlang:
                continue
            hits = self.keyword_list(words, n, lang=lang, where=where)
            if hits and best_coverage(words, hits, self.store.chunk_terms, self.cfg.gate_depth) >= self.cfg.gate_share:
                out[f"keyword:{lang}"] = hits
        return out

    def aligned_query(self, text: str, words: list[str] = ()) -> tuple[np.ndarray | None, np.ndarray]:
        """The query's aligned vector and those of ``words`` (encoded in the same call, for
        :meth:`translations`); None unless the store holds aligned vectors and more than
        one language (on KorQuAD and SciFact, one language each, the aligned lists cost
        0.01–0.05 nDCG@10)."""
        if not self._asks_aligned():
            return None, np.zeros((0, 0), dtype=np.float32)
        encoded = self.aligned.encode_queries([text, *words])
        return encoded[0], encoded[1:]

    def _asks_aligned(self) -> bool:
        """Whether a search encodes its query with the aligned encoder: it bridges languages,
        so a store of one language searches without it."""
        cfg = self.cfg
        return bool(self.aligned is not None and (cfg.aligned_list or cfg.aligned_heading_list)
                    and len(self.languages) > 1)

    def encode_query(self, text: str, words: list[str] = ()
                     ) -> tuple[np.ndarray, tuple[np.ndarray | None, np.ndarray]]:
        """:meth:`query_vector` and :meth:`aligned_query`, once per search; where both encode,
        they run side by side (:mod:`chaja.stores.side_by_side`: both release the GIL while
        they compute), since the e5 encoder alone leaves most of two cores idle on one short query."""
        if not self._asks_aligned():
            return self.query_vector(text), self.aligned_query(text, words)
        qv, aligned = side_by_side.run([lambda: self.query_vector(text), lambda: self.aligned_query(text, words)])
        return qv, aligned

    def vector_requests(self, qv: np.ndarray | None, qa: np.ndarray | None) -> dict[str, tuple[np.ndarray, str]]:
        """The vector lists a search asks the store for, list name → (query vector, field):
        ``vector`` (unless language centering merges per-language lists, :meth:`vector_list`),
        ``heading``, and the aligned encoder's passages (``aligned``) and section names
        (``aligned_heading``), each when its setting is on."""
        cfg = self.cfg
        out: dict[str, tuple[np.ndarray, str]] = {}
        if qv is not None:
            if not (cfg.language_centering and self.language_means):
                out["vector"] = (qv, "chunk")
            if cfg.heading_list:
                out["heading"] = (qv, "heading")
        if qa is not None:
            for name, on in (("aligned", cfg.aligned_list), ("aligned_heading", cfg.aligned_heading_list)):
                if on:
                    out[name] = (qa, FIELD_OF_LIST[name])
        return out

    def vector_lists(self, requests: Mapping[str, tuple[np.ndarray, str]], n: int,
                     where: Filters | None = None,
                     meanwhile: Callable[[], object] | None = None) -> dict[str, list[Hit]]:
        """The hits of each of ``requests`` (:meth:`vector_requests`), in one call where the
        store can search its fields side by side (``vector_many``), which runs ``meanwhile``
        (the search's keyword lists) in this thread while its graph walks run; other stores
        run ``meanwhile`` first."""
        many = getattr(self.store, "vector_many", None)
        asked = [(q, n, field) for q, field in requests.values()]
        if many is not None and asked:
            found = many(asked, where=where, meanwhile=meanwhile)
        else:
            if meanwhile is not None:
                meanwhile()
            found = [self.store.vector(q, k, field=field, where=where) for q, k, field in asked]
        return dict(zip(requests, found))

    @property
    def lexicon(self) -> lexicon.Lexicon | None:
        """The store's translation lexicon (:mod:`chaja.search.lexicon`), None when it has none."""
        if self._lexicon is None:
            self._lexicon = lexicon.decode(self.store.get_meta(lexicon.META_KEY)) or False
        return self._lexicon or None

    def words_to_translate(self, text: str, qlang: str) -> list[str]:
        """The query's content words in its own script (Hangul for a Korean query, the
        others otherwise), when the store has a lexicon of another language to carry them into."""
        lex = self.lexicon if self.cfg.translated_keyword > 0 and self.aligned is not None else None
        if lex is None or not any(lang != qlang for lang in lex.languages):
            return []
        return lexicon.words_of(text, "ko" if qlang == "ko" else "")

    def known_word_vectors(self, words: list[str]) -> dict[str, np.ndarray]:
        """The vectors of those ``words`` the lexicon holds (they need no encoding; the rest
        are encoded with the query)."""
        lex = self.lexicon
        found = {w: lex.vector_of(w) for w in words} if lex is not None else {}
        return {w: v for w, v in found.items() if v is not None}

    def translations(self, words: list[str], vectors: Mapping[str, np.ndarray], qlang: str) -> dict[str, list[str | None]]:
        """Per other language L of the lexicon, each of the query's ``words`` translated into
        L (:meth:`Lexicon.translate_words`; ``vectors``: word → its aligned vector), None
        where it stays untranslated; remembered for the next search. A search asks before
        its graph walks start: a word the store has not seen is scanned with matrix products
        that would otherwise compete with the walks for the cores."""
        lex = self.lexicon
        out: dict[str, list[str | None]] = {}
        words = [w for w in words if w in vectors]
        if lex is None or not words:
            return out
        threshold = self.cfg.translation_threshold
        for lang in lex.languages:
            if lang == qlang:
                continue
            todo = [w for w in words if (w, lang, threshold) not in lex.translations]
            if todo:
                fresh = lex.translate_words(todo, vectors, lang, threshold)
                lex.remember({(w, lang, threshold): t for w, t in zip(todo, fresh)})
            out[lang] = [lex.translations.get((w, lang, threshold)) for w in words]
        return out

    def translated_lists(self, translations: Mapping[str, list[str | None]], n: int,
                         where: Filters | None = None) -> dict[str, tuple[list[Hit], list[list[str]]]]:
        """Per language L of ``translations`` (:meth:`translations`), the keyword list over
        L's chunks of the query's words translated into L, and each word's terms (empty for
        a word left untranslated)."""
        out: dict[str, tuple[list[Hit], list[list[str]]]] = {}
        for lang, found in translations.items():
            groups = [list(dict.fromkeys(self.analyzer(w))) if w else [] for w in found]
            terms = list(dict.fromkeys(t for g in groups for t in g))[:MAX_QUERY_TERMS]
            hits = self.keyword_list(terms, min(n, TRANSLATED_DEPTH), lang=lang, where=where) if terms else []
            if hits:
                out[f"translated:{lang}"] = (hits, groups)
        return out

    @property
    def background(self) -> dict[str, dict]:
        """Per vector field, the stored vectors' mean and covariance (:mod:`chaja.search.background`);
        a store indexed before they were recorded gets them computed here, in memory."""
        if self._background is None:
            self._background = background.decode(self.store.get_meta(background.META_KEY))
            if not self._background:
                self._background = {f: s for f, s in background.of_store(self.store).items() if s is not None}
        return self._background

    def _translated_values(self, translated: dict[str, tuple[list[Hit], list[list[str]]]]) -> dict[str, float]:
        """K_T(c) of the chunks of the translated lists (:func:`calibrated.keyword_values`, with
        the share of the query's words the chunk holds in translation: the mean over the
        words of the share of the word's terms it holds, 0 for a word left untranslated)."""
        out: dict[str, float] = {}
        for hits, groups in translated.values():
            terms = list(dict.fromkeys(t for g in groups for t in g))
            held = self._terms_memo(terms)([h.chunk_id for h in hits])
            shares = {c: sum(len(t.intersection(g)) / len(g) for g in groups if g) / len(groups)
                      for c, t in held.items()}
            for c, v in keyword_values(hits, shares).items():
                out[c] = max(out.get(c, 0.0), v)
        return out

    def _calibrated(self, lists: dict[str, list[Hit]], queries: dict[str, np.ndarray | None],
                    shares: dict[str, float], qlang: str,
                    translated: dict[str, float] | None = None) -> tuple[list, float]:
        """Calibrated fusion (:mod:`chaja.search.calibrated`) of one query's lists: the fused
        list and g(q). ``queries``: vector field → the query vector that searches it;
        ``shares``: chunk → share of the query's terms it holds, for the keyword-like lists;
        ``translated``: K_T of the chunks of the translated keyword lists."""
        cfg = self.cfg
        keyword, title = lists.get("keyword", []), lists.get("title", [])
        if not any(lists.get(m) for m in FIELD_OF_LIST):
            return [(h.chunk_id, h.score) for h in keyword], 1.0   # keyword only: nothing to calibrate
        best: dict[str, int] = {}
        for hits in lists.values():
            for cid, r in ranks(hits).items():
                best[cid] = min(best.get(cid, r), r)
        candidates = sorted(best)
        # a list that is off (or found nothing) adds neither candidates nor evidence
        weights = {FIELD_OF_LIST[m]: w for m, w in cfg.calibrated_weights.items()
                   if m in FIELD_OF_LIST and w and lists.get(m)}
        needed = set(weights) | {PARTNER[f] for f in weights if f in PARTNER}
        asked = [(f, queries.get(f), self.background.get(f)) for f in sorted(needed)]
        asked = [(f, q, stats) for f, q, stats in asked if q is not None and stats is not None]
        langs, cosines = self.candidate_cosines(candidates, [(q, f) for f, q, _ in asked])
        z = {}
        for (field, q, stats), cos in zip(asked, cosines):
            mu, sigma = background.moments(stats, q)
            z[field] = (cos - mu) / sigma
        own = langs == qlang
        fused, g = calibrated_arrays(candidates, z, own, keyword, shares, also=[title] if title else [],
                                     weights=weights, keyword_weight=cfg.calibrated_weights.get("keyword", 1.0),
                                     d0=cfg.language_margin, tau=cfg.language_softness, best_rank=best,
                                     neutral_depth=cfg.keyword_neutral_depth, neutral_best_share=cfg.keyword_neutral_best,
                                     translated=translated, translated_weight=cfg.translated_keyword)
        if cfg.feedback_weight > 0 and g > 0 and own.any() and not own.all():
            fused = self._with_feedback(fused, candidates, own, g, best)
        return fused, g

    def _with_feedback(self, fused: list[tuple[str, float]], candidates: list[str], own: np.ndarray,
                       g: float, best: Mapping[str, int]) -> list[tuple[str, float]]:
        """``fused`` with the evidence borrowed from the query's own language added to the
        other languages' candidates (:mod:`chaja.search.feedback`), in order again."""
        cfg = self.cfg
        src = feedback.sources(fused, dict(zip(candidates, own.tolist())), cfg.feedback_depth)
        asked = []
        for field, w in feedback.FIELDS.items():
            stats = self.background.get(field)
            basis = self._basis if field == "chunk" and cfg.language_projection else None
            f = feedback.feedback_vector(list(self.store.stored_vectors(src, field).values()), basis) if stats else None
            if f is not None:
                asked.append((field, w, f, stats))
        if not asked:
            return fused
        _, cosines = self.candidate_cosines(candidates, [(f, field) for field, _, f, _ in asked])
        borrowed = np.zeros(len(candidates))
        for (field, w, f, stats), cos in zip(asked, cosines):
            mu, sigma = background.moments(stats, f)
            borrowed += w * np.nan_to_num((cos - mu) / sigma, nan=0.0)
        add = dict(zip(candidates, np.where(own, 0.0, cfg.feedback_weight * g * borrowed).tolist()))
        first = set(src)
        ceiling = min(s for c, s in fused if c in first)
        scored = [(c, feedback.lifted(s, add.get(c, 0.0), ceiling)) for c, s in fused]
        return sorted(scored, key=lambda cs: (-cs[1], cs[0] not in first, best[cs[0]], cs[0]))

    def candidate_cosines(self, ids: list[str], asked: list[tuple[np.ndarray, str]]) -> tuple[np.ndarray, list[np.ndarray]]:
        """Each candidate's language (None where the store has no chunk vector of it) and its
        cosine with each (query, field) of ``asked`` (NaN where it has no vector in the
        field): in one call where the store has ``vector_scores_at``, else from
        ``chunk_languages`` and ``vector_scores``."""
        at = getattr(self.store, "vector_scores_at", None)
        if at is not None:
            return at(ids, asked)
        lang_of = self.store.chunk_languages(ids)
        found = [self.store.vector_scores(q, ids, field=f) for q, f in asked]
        return (np.array([lang_of.get(c) for c in ids], dtype=object),
                [np.array([scores.get(c, np.nan) for c in ids], dtype=np.float64) for scores in found])

    def coverage(self, terms: list[str], keyword: list[Hit],
                 terms_of: Callable[[list[str]], dict[str, set[str]]] | None = None) -> float:
        """The gate's measure: the best share of the query's terms one top keyword result
        holds, judged per script for a mixed-script query (the better script counts).
        ``terms_of`` reads chunks' terms (default: the store; a search passes its memo)."""
        if not keyword:
            return 0.0
        terms_of = terms_of or self.store.chunk_terms
        return max(best_coverage(group, keyword, terms_of, self.cfg.gate_depth) for group in script_groups(terms))

    def _terms_memo(self, terms: list[str]) -> Callable[[list[str]], dict[str, set[str]]]:
        """The query's ``terms`` each chunk holds, read once per chunk per search (the gate,
        the shares of calibrated fusion and the title slot all ask, and only ever count
        query terms): ``store.matched_terms`` where the store has it (the SQLite store
        answers from its postings), else ``store.chunk_terms`` ∩ terms."""
        held: dict[str, set[str]] = {}
        wanted = set(terms)
        matched = getattr(self.store, "matched_terms", None)

        def terms_of(ids: list[str]) -> dict[str, set[str]]:
            missing = [c for c in dict.fromkeys(ids) if c not in held]
            if missing:
                if matched is not None:
                    held.update(matched(terms, missing))
                else:
                    held.update({c: t & wanted for c, t in self.store.chunk_terms(missing).items()})
            return {c: held[c] for c in ids if c in held}
        return terms_of

    # ---- the pipeline ----------------------------------------------------
    def search(self, text: str, top_k: int | None = None, filters: Filters | None = None) -> SearchResult:
        """Search ``text``; with ``filters`` (:mod:`chaja.filters`) every list holds
        only chunks that pass them. With ``search.multipart`` a question of two parts
        (:func:`chaja.search.multipart.split_question`) is searched whole and part by part,
        and the three rankings are fused. Every read sees the store as of the search's start
        (``store.reading()``, :mod:`chaja.stores.one_view`)."""
        with self.store.reading():
            return self._search_all(text, top_k, filters)

    def _search_all(self, text: str, top_k: int | None, filters: Filters | None) -> SearchResult:
        whole = self._search(text, top_k, filters)
        parts = multipart.split_question(whole.query) if self.cfg.multipart and not whole.abstained else []
        if not parts:
            return whole
        k = check_top_k(top_k) or self.cfg.top_k
        fused = multipart.fuse(whole, [self._search(p, top_k, filters) for p in parts], parts, k)
        if whole.reranker is not None:   # each search was reranked: the prefix is chosen over the fused order
            fused.reranker = whole.reranker
            fused.selected = prefix_length([d.best.rerank_probability or 0.0 for d in fused.documents],
                                           self.rerank_cfg)
        return fused

    def _search(self, text: str, top_k: int | None = None, filters: Filters | None = None) -> SearchResult:
        cfg = self.cfg
        text = check_query(text)
        where = filters or None
        k = check_top_k(top_k) or cfg.top_k
        n = max(cfg.candidates, k)
        reranker = self._rerankers(cfg.reranker) if cfg.reranker != "none" and self.rerank_cfg.depth else None
        if cfg.mode not in ("hybrid", "keyword", "vector"):
            raise ValueError(f"search.mode must be hybrid, keyword or vector, not {cfg.mode!r}")
        terms = query_terms(self.analyzer, text, cfg.query_terms)[:MAX_QUERY_TERMS]
        terms_of = self._terms_memo(terms)
        use_vectors = cfg.mode != "keyword" and self.encoder is not None
        qlang = detect_language(text)
        # a keyword list in translation: hybrid search with calibrated fusion only (vector-only stays vectors)
        words = self.words_to_translate(text, qlang) \
            if use_vectors and cfg.mode == "hybrid" and cfg.fusion == "calibrated" else []
        known = self.known_word_vectors(words)
        unknown = [w for w in words if w not in known]
        qv, (qa, encoded) = self.encode_query(text, unknown) if use_vectors else (None, (None, None))
        carried = self.translations(words, {**known, **dict(zip(unknown, encoded))}, qlang) \
            if qa is not None and words else {}
        side: dict = {}

        def keyword_lists() -> None:      # while the store walks its graphs
            side["keyword"] = self.keyword_list(terms, n, where=where) if cfg.mode != "vector" else []
            side["translated"] = self.translated_lists(carried, n, where)
        found = self.vector_lists(self.vector_requests(qv, qa), n, where, meanwhile=keyword_lists)
        keyword, translated = side["keyword"], side["translated"]
        if "vector" in found:
            vector = found.pop("vector")
        else:           # language centering merges per-language lists (or no vectors at all)
            vector = self.vector_list(text, n, qv, where) if use_vectors else []
        coverage = self.coverage(terms, keyword, terms_of)
        keyword_used = bool(keyword) and (not cfg.gate or not vector or coverage >= cfg.gate_share)
        signals = {"top_cosine": vector[0].score if vector else 0.0, "keyword_coverage": coverage}
        if should_abstain(signals, cfg):
            return SearchResult(query=text, terms=terms, keyword_used=keyword_used, chunks=[], documents=[],
                                abstained=True, signals=signals)
        lists: dict[str, list[Hit]] = {"vector": vector}
        heading = found.get("heading", [])
        if heading:
            lists["heading"] = heading
        if keyword_used:
            lists["keyword"] = keyword
        lists.update({name: found[name] for name in ("aligned", "aligned_heading") if found.get(name)})
        lists.update({name: hits for name, (hits, _) in translated.items()})
        if cfg.cross_language_keyword:
            lists.update(self.cross_language_lists(qlang, terms, n, where))
        if cfg.cross_language_vector and qv is not None:
            lists.update(self.cross_language_vectors(qv, qlang, n, where))
        title: list[Hit] = []
        if cfg.title_path or cfg.title_slot:
            title = self.keyword_list(terms, n, field="title", where=where)
            if cfg.title_path:
                lists["title"] = title
        if cfg.fusion == "rrf":
            fused = rrf(lists, k=cfg.rrf_k, weights=cfg.list_weights or None)
        elif cfg.fusion == "convex":
            fused = convex(lists, weights=cfg.list_weights or None, normalization=cfg.normalization)
        elif cfg.fusion == "calibrated":
            held = terms_of([h.chunk_id for m in ("keyword", "title") for h in lists.get(m, [])])
            shares = {cid: term_coverage(terms, t) for cid, t in held.items()}
            queries = {"chunk": qv, "heading": qv, "aligned": qa, "aligned_heading": qa}
            fused, signals["keyword_share"] = self._calibrated(lists, queries, shares, qlang,
                                                               self._translated_values(translated))
        else:
            raise ValueError(f"search.fusion must be calibrated, convex or rrf, not {cfg.fusion!r}")
        order, scores, fetched = self._weighted(fused)

        reserved: list[str] = []
        if cfg.title_slot and title:
            best = title[0].chunk_id
            if term_coverage(terms, terms_of([best]).get(best, set())) >= cfg.gate_share:
                reserved.append(best)
        if cfg.reserved_keyword_share > 0 and keyword_used:
            reserved += [h.chunk_id for h in keyword[: keyword_slot_count(k, cfg.reserved_keyword_share)]]

        depth = self.rerank_cfg.depth if reranker is not None else 0
        capped, doc_of = self._capped(order, reserved, fetched, max(k, depth))
        chunks = dict(fetched)   # whole chunks: only those reranked or returned are read (one view)

        def read(ids: list[str]) -> None:
            chunks.update(self.store.chunks([c for c in ids if c not in chunks]))
        reranked: dict[str, tuple[float, int]] = {}
        if reranker is not None:
            read(capped[:depth])
            capped, reranked = self._reranked(reranker, text, capped, chunks, depth)
        top, taken = reserve(capped, [r for r in reserved if r in doc_of], k)
        read(top)

        kr, vr, tr, hr = ranks(keyword), ranks(vector), ranks(title), ranks(heading)
        list_ranks = {m: ranks(h) for m, h in lists.items()}
        list_scores = {m: {h.chunk_id: h.score for h in reversed(hits)} for m, hits in lists.items()}
        ks = {h.chunk_id: h.score for h in keyword}
        vs = {h.chunk_id: h.score for h in vector}
        hs = {h.chunk_id: h.score for h in heading}
        results = [
            ChunkResult(chunk=chunks[cid], score=scores.get(cid, 0.0), keyword_rank=kr.get(cid),
                        vector_rank=vr.get(cid), title_rank=tr.get(cid) if title else None,
                        keyword_score=ks.get(cid), vector_score=vs.get(cid), heading_rank=hr.get(cid),
                        heading_score=hs.get(cid), reserved=cid in taken,
                        ranks={m: r[cid] for m, r in list_ranks.items() if cid in r},
                        scores={m: sc[cid] for m, sc in list_scores.items() if cid in sc})
            for cid in top
        ]
        documents = group_by_document(results)
        selected = None
        if reranker is not None:
            rc = self.rerank_cfg
            for r in results:
                if r.chunk.id in reranked:
                    r.rerank_score, r.fused_rank = reranked[r.chunk.id]
                    r.rerank_probability = mapped(r.rerank_score, rc.scale, rc.shift)
            selected = prefix_length([d.best.rerank_probability or 0.0 for d in documents], rc)
        return SearchResult(query=text, terms=terms, keyword_used=keyword_used,
                            chunks=results, documents=documents, signals=signals,
                            lists=[name for name, hits in lists.items() if hits],
                            reranker=reranker.name if reranker is not None else None, selected=selected)

    def _capped(self, order: list[str], reserved: list[str], fetched: dict,
                want: int) -> tuple[list[str], dict[str, str]]:
        """The fused order with at most ``search.chunk_cap`` chunks a document, and the
        document of each chunk read to know it (``store.doc_ids``, no text; ``fetched``:
        chunks already read): 4·``want`` candidates first, four times more while fewer than
        ``want`` documents remain and candidates are left (one long document can fill the
        first ones)."""
        limit = 4 * want + len(reserved)
        doc_of = {cid: c.doc_id for cid, c in fetched.items()}
        while True:
            doc_of.update(self.store.doc_ids([cid for cid in dict.fromkeys(order[:limit] + reserved)
                                              if cid not in doc_of]))
            capped = cap_per_document([c for c in order[:limit] if c in doc_of], doc_of, self.cfg.chunk_cap)
            if len(capped) >= want + len(reserved) or limit >= len(order):
                return capped, doc_of
            limit *= 4

    @staticmethod
    def _reranked(reranker: Reranker, text: str, capped: list[str], chunks: dict,
                  depth: int) -> tuple[list[str], dict[str, tuple[float, int]]]:
        """The first ``depth`` candidates in the reranker's order (ties keep the fused
        order), the rest after them as fused; and each reranked chunk's (score, fused rank)."""
        pool = capped[:depth]
        scores = reranker.score(text, [passage_text(chunks[c]) for c in pool])
        order = rerank_order(scores)
        found = {pool[i]: (float(scores[i]), i + 1) for i in range(len(pool))}
        return [pool[i] for i in order] + capped[depth:], found

    def _weighted(self, fused: list[tuple[str, float]]) -> tuple[list[str], dict[str, float], dict]:
        """Apply source and freshness multipliers and re-sort (stable); also returns the
        chunks it had to read, so the caller does not read them again."""
        cfg = self.cfg
        scores = dict(fused)
        if not (cfg.source_weights or cfg.half_life_days):
            return [cid for cid, _ in fused], scores, {}
        now = date.fromisoformat(cfg.now) if cfg.now else date.today()
        chunks = self.store.chunks([cid for cid, _ in fused])
        for cid in scores:
            if cid in chunks:
                scores[cid] *= chunk_multiplier(chunks[cid], cfg.source_weights, cfg.half_life_days, now)
        order = sorted((cid for cid, _ in fused), key=lambda c: -scores[c])
        return order, scores, chunks
