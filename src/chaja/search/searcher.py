"""The searcher: what a search reads from the store and the encoders, held between
searches (the language means and their basis, the background statistics, the
translation lexicon), and the primitives the stages call: the query vectors, the
keyword and vector lists, the cross-language lists, the words in translation, and the
terms each chunk holds. The search itself runs as named stages in
:mod:`chaja.search.pipeline`; the stages and their order are described there.
"""
from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping

import numpy as np

from chaja import heap
from chaja.analysis import Analyzer
from chaja.config import RerankConfig, SearchConfig
from chaja.documents import Hit
from chaja.encoders.base import Encoder
from chaja.filters import Filters
from chaja.language import is_hangul_syllable
from chaja.language_means import META_KEY, decode_means, language_basis, project_out
from chaja.rerank import Reranker, get_reranker
from chaja.search import background, background_prior, lexicon, pipeline
from chaja.search.calibrated_search import FIELD_OF_LIST
from chaja.search.context import MAX_QUERY_CHARS, MAX_QUERY_TERMS, QueryError, check_query, check_top_k
from chaja.search.gate import best_coverage
from chaja.search.query import script_groups
from chaja.search.results import SearchResult
from chaja.stores import side_by_side
from chaja.stores.base import Store

__all__ = ["MAX_QUERY_CHARS", "MAX_QUERY_TERMS", "QueryError", "Searcher", "check_query", "check_top_k"]

#: a translated keyword list holds at most this many chunks: its value share² · s / max s falls
#: fast with rank (dev: 10 / 20 / 60 gave 0.824 / 0.826 / 0.826), and each is scored in every field
TRANSLATED_DEPTH = 20


class Searcher:
    def __init__(self, store: Store, encoder: Encoder | None, cfg: SearchConfig, analyzer: Analyzer,
                 aligned: Encoder | None = None, rerank: RerankConfig | None = None,
                 rerankers: Callable[[str], Reranker | None] | None = None):
        self.store, self.encoder, self.cfg, self.analyzer = store, encoder, cfg, analyzer
        self.aligned = aligned
        self.rerank_cfg = rerank or RerankConfig()
        #: reranker spec → the reranker (``search.reranker``)
        self.rerankers = rerankers or (lambda spec: get_reranker(spec, self.rerank_cfg, self.encoder))
        self._blended: dict[float, dict[str, dict]] = {}   # search.background_prior → blended statistics
        self._languages: set[str] | None = None
        self._means: dict[str, np.ndarray] | None = None
        self._basis = np.zeros((0, 0), dtype=np.float32)
        self._lexicon: lexicon.Lexicon | bool | None = None     # False: read, and the store has none
        heap.map_large_buffers()        # a searching process gives its large buffers back (chaja.heap)

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
    def basis(self) -> np.ndarray:
        """The language directions' orthonormal basis, as far as the means are read."""
        return self._basis

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
        run ``meanwhile`` first. The passage list brings ``n`` candidates; under calibrated
        fusion, which scores every candidate in every field (docs/search.md, step 5), the
        section-name and aligned lists bring at most ``search.side_candidates``: a candidate
        only they find is rarely the answer (of 438 React and Vue dev questions' gold pages
        in the top 10, one was found by the heading list alone and one by the aligned list
        alone). Rank fusions count a list's votes, and keep ``n`` from every list."""
        many = getattr(self.store, "vector_many", None)
        side = min(n, self.cfg.side_candidates) if self.cfg.fusion == "calibrated" else n
        asked = [(q, n if name == "vector" else side, field) for name, (q, field) in requests.items()]
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
        """Per vector field, the stored vectors' mean and covariance (:mod:`chaja.search.background`)
        with ``search.background_prior`` vectors of the encoder's shipped prior pooled in
        (:mod:`chaja.search.background_prior`); a store indexed before they were recorded
        gets them computed here, in memory."""
        weight = float(self.cfg.background_prior)
        if weight not in self._blended:
            text = self.store.get_meta(background.META_KEY)
            salt = f"{weight}|{getattr(self.encoder, 'name', '')}|{getattr(self.aligned, 'name', '')}"
            blend = functools.partial(self._blend, weight=weight)
            self._blended[weight] = background.decode(text, blend, salt) if text else blend({})
        return self._blended[weight]

    def _blend(self, stats: dict[str, dict], weight: float) -> dict[str, dict]:
        """:attr:`background` from the decoded ``stats`` ({}: computed from the store)."""
        if not stats:
            stats = {f: s for f, s in background.of_store(self.store).items() if s is not None}
        blended = {f: background_prior.blend(stats.get(f), self._prior(f), weight) for f in background.FIELDS}
        return {f: s for f, s in blended.items() if s is not None}

    def _prior(self, field: str) -> dict | None:
        """The shipped prior of a field for the encoder that writes it (None where none ships)."""
        encoder = self.aligned if field.startswith("aligned") else self.encoder
        return background_prior.load(encoder.name).get(field) if encoder is not None else None

    def coverage(self, terms: list[str], keyword: list[Hit],
                 terms_of: Callable[[list[str]], dict[str, set[str]]] | None = None) -> float:
        """The gate's measure: the best share of the query's terms one top keyword result
        holds, judged per script for a mixed-script query (the better script counts).
        ``terms_of`` reads chunks' terms (default: the store; a search passes its memo)."""
        if not keyword:
            return 0.0
        terms_of = terms_of or self.store.chunk_terms
        return max(best_coverage(group, keyword, terms_of, self.cfg.gate_depth) for group in script_groups(terms))

    def terms_memo(self, terms: list[str]) -> Callable[[list[str]], dict[str, set[str]]]:
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

    # ---- the search -----------------------------------------------------
    def search(self, text: str, top_k: int | None = None, filters: Filters | None = None) -> SearchResult:
        """Search ``text`` (:func:`chaja.search.pipeline.search`); with ``filters``
        (:mod:`chaja.filters`) every list holds only chunks that pass them. Every read
        sees the store as of the search's start (``store.reading()``,
        :mod:`chaja.stores.one_view`)."""
        with self.store.reading():
            return pipeline.search(self, text, top_k, filters)
