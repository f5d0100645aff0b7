"""End to end over the fixture corpus with the real embedding model."""
import pytest

import numpy as np
from chaja.search.searcher import QueryError


def top_doc(idx, q, **kw):
    return idx.search(q, **kw).documents[0].doc_id


@pytest.mark.parametrize("query, doc", [
    ("자기주식 소각 결정", "filings/share-cancellation"),
    ("소각결정", "filings/share-cancellation"),
    ("유상증자 발행가액", "filings/rights-issue"),
    ("how do I descale the espresso machine", "manuals/espresso-machine"),
    ("체인 윤활유", "manuals/bicycle"),
    ("wireless password", "manuals/router"),
    ("base rate inflation", "news-rates"),
])
def test_same_language_questions_find_their_document(corpus_index, query, doc):
    assert top_doc(corpus_index, query) == doc


@pytest.fixture
def fusion(corpus_index):
    """Set search.fusion on the shared index for one test (the aligned lists off, so the
    formula names the lists it sums), then put everything back."""
    cfg = corpus_index.config.search
    before = (cfg.fusion, cfg.aligned_list, cfg.aligned_heading_list)

    def use(name):
        cfg.fusion, cfg.aligned_list, cfg.aligned_heading_list = name, False, False
    yield use
    cfg.fusion, cfg.aligned_list, cfg.aligned_heading_list = before


def test_result_explains_its_ranking_rrf(corpus_index, fusion):
    fusion("rrf")
    res = corpus_index.search("자기주식 소각")
    assert res.keyword_used
    best = res.documents[0].best
    assert best.keyword_rank is not None and best.vector_rank is not None
    heading = 1 / (20 + best.heading_rank) if best.heading_rank is not None else 0.0
    assert best.score == pytest.approx(1 / (20 + best.keyword_rank) + 1 / (20 + best.vector_rank) + heading)


def test_convex_score_is_the_sum_of_normalised_path_scores(corpus_index, fusion):
    from chaja.search.fusion import minmax
    fusion("convex")
    q = "자기주식 소각"
    res = corpus_index.search(q)
    s = corpus_index.searcher()
    kw = minmax(s.keyword_list(res.terms, 60))
    vec = minmax(s.vector_list(q, 60))
    head = minmax(s.store.vector(s.query_vector(q), 60, field="heading"))
    assert head, "the fixture corpus has headings, so the heading list takes part"
    for c in res.chunks:
        parts = kw.get(c.chunk.id, 0.0) + vec.get(c.chunk.id, 0.0) + head.get(c.chunk.id, 0.0)
        assert c.score == pytest.approx(parts, abs=1e-6)
    assert [d.rank for d in res.documents] == list(range(1, len(res.documents) + 1))
    assert len(res.chunks) <= 10


def test_gate_removes_keyword_list_of_stray_matches(corpus_index, fusion):
    # none of the content words matches by keyword ("the" is a function word, not a term)
    fusion("convex")
    res = corpus_index.search("the quixotic zeppelin flabbergasted")
    assert not res.keyword_used
    from chaja.search.fusion import minmax
    s = corpus_index.searcher()
    vec = minmax(s.vector_list(res.query, 60))
    head = minmax(s.store.vector(s.query_vector(res.query), 60, field="heading"))
    assert all(c.score == pytest.approx(vec.get(c.chunk.id, 0.0) + head.get(c.chunk.id, 0.0), abs=1e-6)
               for c in res.chunks)


@pytest.mark.parametrize("query", ['"', "*", "-", "NEAR", "AND", "OR NOT", "(", ")", "a AND (b OR",
                                   'title:"x', "🙂", "^", "{x}", "NEAR(a b, 3)", "\\", "'; DROP TABLE chunks;--"])
def test_hostile_queries_never_raise(corpus_index, query):
    res = corpus_index.search(query)
    assert isinstance(res.documents, list)


def test_empty_and_huge_queries_get_clear_errors(corpus_index):
    with pytest.raises(QueryError, match="empty"):
        corpus_index.search("   ")
    with pytest.raises(QueryError, match="limit"):
        corpus_index.search("가" * 5000)


def test_chunk_cap_and_top_k(corpus_index):
    before, corpus_index.config.search.chunk_cap = corpus_index.config.search.chunk_cap, 1
    try:
        res = corpus_index.search("소각", top_k=5)
    finally:
        corpus_index.config.search.chunk_cap = before
    assert len(res.chunks) <= 5
    assert len({c.chunk.doc_id for c in res.chunks}) == len(res.chunks)


def test_source_weight_multiplies_fused_scores(corpus_index):
    q = "central bank decision announcement"
    before = corpus_index.search(q)
    corpus_index.config.search.source_weights = {"news": 3.0}
    try:
        after = corpus_index.search(q)
    finally:
        corpus_index.config.search.source_weights = {}
    b = {c.chunk.id: c.score for c in before.chunks}
    news = [c for c in after.chunks if c.chunk.source == "news" and c.chunk.id in b]
    assert news and all(c.score == pytest.approx(3 * b[c.chunk.id]) for c in news)
    first_news = lambda res: next(d.rank for d in res.documents if d.best.chunk.source == "news")
    assert first_news(after) <= first_news(before)


def test_freshness_scales_fused_scores_by_age(corpus_index):
    cfg = corpus_index.config.search
    q = "quarterly revenue report"
    before = {c.chunk.id: c for c in corpus_index.search(q).chunks}
    cfg.half_life_days, cfg.now = {"financials": 1.0}, "2026-11-15"   # the report is 1 day old: × 0.75
    try:
        after = {c.chunk.id: c for c in corpus_index.search(q).chunks}
    finally:
        cfg.half_life_days, cfg.now = {}, None
    report = [cid for cid in after if cid.startswith("filings/quarterly-report") and cid in before]
    others = [cid for cid in after if not cid.startswith("filings/quarterly-report") and cid in before]
    assert report and others
    for cid in report:
        assert after[cid].score == pytest.approx(before[cid].score * 0.75)
    for cid in others:
        assert after[cid].score == pytest.approx(before[cid].score)


def test_abstention_answers_nothing_when_both_signals_are_weak(corpus_index):
    cfg = corpus_index.config.search
    res = corpus_index.search("우주 발사체 시험 발사")
    assert not res.abstained and res.signals["keyword_coverage"] == 1.0
    cfg.abstain_below = 0.99     # every cosine is below this ...
    try:
        strong_keyword = corpus_index.search("우주 발사체 시험 발사")
        weak = corpus_index.search("quantum chromodynamics lattice gauge")
    finally:
        cfg.abstain_below = 0.0
    assert not strong_keyword.abstained        # ... but the keyword list holds every term
    assert weak.abstained and weak.documents == [] and weak.signals["top_cosine"] < 0.99


@pytest.mark.parametrize("mode", ["keyword", "vector"])
def test_single_path_modes(corpus_index, mode):
    corpus_index.config.search.mode = mode
    try:
        res = corpus_index.search("자기주식 소각")
    finally:
        corpus_index.config.search.mode = "hybrid"
    assert res.documents[0].doc_id == "filings/share-cancellation"
    if mode == "keyword":
        assert all(c.vector_rank is None and c.keyword_rank is not None for c in res.chunks)
    else:
        assert all(c.keyword_rank is None and c.vector_rank is not None for c in res.chunks)


def _with(corpus_index, **settings):
    cfg = corpus_index.config.search
    old = {k: getattr(cfg, k) for k in settings}
    for k, v in settings.items():
        setattr(cfg, k, v)
    return old


def test_reserved_keyword_slots_put_the_best_keyword_hits_first(corpus_index):
    q = "revenue growth memory chips"
    s = corpus_index.searcher()
    kw = s.keyword_list(corpus_index.search(q).terms, 60)
    old = _with(corpus_index, reserved_keyword_share=0.4)
    try:
        res = corpus_index.search(q, top_k=5)      # round(5 × 0.4) = 2 slots
    finally:
        _with(corpus_index, **old)
    assert res.keyword_used
    assert [c.chunk.id for c in res.chunks[:2]] == [h.chunk_id for h in kw[:2]]
    assert [c.reserved for c in res.chunks] == [True, True, False, False, False]


def test_title_path_adds_a_title_only_list(corpus_index):
    old = _with(corpus_index, title_path=True)
    try:
        res = corpus_index.search("유상증자 결정")
    finally:
        _with(corpus_index, **old)
    assert "title" in res.lists
    # every chunk of the page shares its title; the page's best chunk is one of them
    assert res.chunks[0].chunk.title == "유상증자 결정" and res.chunks[0].title_rank is not None
    assert all(c.title_rank is None for c in corpus_index.search("유상증자 결정").chunks)


def test_title_slot_reserves_one_place_for_a_matching_title(corpus_index):
    old = _with(corpus_index, title_slot=True)
    try:
        res = corpus_index.search("espresso machine manual")
        weak = corpus_index.search("zeppelin espresso quixotic flabbergasted")   # title holds 1 of 4 terms
    finally:
        _with(corpus_index, **old)
    assert res.chunks[0].reserved and res.chunks[0].chunk.title == "Espresso machine manual"
    assert not any(c.reserved for c in weak.chunks)


def test_candidates_bound_each_list(corpus_index):
    old = _with(corpus_index, candidates=3)
    try:
        res = corpus_index.search("자기주식 소각 결정 공시", top_k=3)
    finally:
        _with(corpus_index, **old)
    assert all((c.keyword_rank or 0) <= 3 and (c.vector_rank or 0) <= 3 for c in res.chunks)


def test_side_lists_bring_fewer_candidates_only_where_every_candidate_is_scored(corpus_index):
    """Under calibrated fusion the section-name and aligned lists bring at most
    side_candidates (every candidate is scored in their fields anyway); a rank fusion
    counts their votes, and takes as many from them as from the passage list."""
    def side_ranks(fusion: str) -> tuple[int, int]:
        old = _with(corpus_index, candidates=8, side_candidates=2, fusion=fusion)
        try:
            res = corpus_index.search("자기주식 소각 결정 공시 how to descale", top_k=8)
        finally:
            _with(corpus_index, **old)
        side = [r for c in res.chunks for name, r in c.ranks.items()
                if name in ("heading", "aligned", "aligned_heading")]
        return max(side), max(c.vector_rank or 0 for c in res.chunks)
    side, vector = side_ranks("calibrated")
    assert side <= 2 < vector
    assert side_ranks("rrf")[0] > 2


def test_an_unavailable_reranker_is_refused(corpus_index):
    old = _with(corpus_index, reranker="cross-encoder")
    try:
        with pytest.raises(ValueError, match="reranker"):
            corpus_index.search("소각")
    finally:
        _with(corpus_index, **old)


@pytest.mark.parametrize("query, chunk", [("how to clean the chain", "manuals/bicycle#0"),
                                          ("tire pressure", "manuals/bicycle#1")])
def test_heading_list_finds_a_korean_section_from_an_english_question(corpus_index, query, chunk):
    s = corpus_index.searcher()
    assert s.store.vector(s.query_vector(query), 3, field="heading")[0].chunk_id == chunk
    res = corpus_index.search(query)
    assert res.documents[0].doc_id == "manuals/bicycle"
    assert res.documents[0].best.heading_rank == 1


def test_heading_list_can_be_turned_off(corpus_index):
    corpus_index.config.search.heading_list = False
    try:
        res = corpus_index.search("how to clean the chain")
    finally:
        corpus_index.config.search.heading_list = True
    assert all(c.heading_rank is None for c in res.chunks)


def test_index_without_heading_vectors_has_no_heading_list(tmp_path, encoder, corpus):
    import chaja
    from chaja.config import Config

    cfg = Config().override(["index.heading_vectors=false"])
    with chaja.open(tmp_path / "s.chaja", cfg, encoder=encoder) as idx:
        idx.add([corpus])
        assert idx.store.vector(encoder.encode_queries(["tire pressure"])[0], 5, field="heading") == []
        assert all(c.heading_rank is None for c in idx.search("tire pressure").chunks)
    # the setting is the store's: reopening with the default config keeps it off
    with chaja.open(tmp_path / "s.chaja", encoder=encoder) as idx:
        assert idx.config.index.heading_vectors is False


def test_borrowed_evidence_is_recomputed_from_the_stored_vectors(corpus_index):
    """Other-language candidates gain w_B · g(q) · B(c), B their background z-scores against
    the mean stored vector of the two best own-language candidates, no higher than those;
    the query's language is untouched."""
    from chaja.search import background, feedback
    q = "자기주식 소각"
    s = corpus_index.searcher()
    plain = {"chunk_cap": 0, "other_language_yield": 0}     # the tail's yield: its own test below
    off = corpus_index.search(q, top_k=50, settings={**plain, "feedback_weight": 0})   # fused order
    on = corpus_index.search(q, top_k=50, settings=plain)
    assert s.cfg.feedback_weight == 1.0 and s.cfg.feedback_depth == 2
    before = {c.chunk.id: c.score for c in off.chunks}
    after = {c.chunk.id: c.score for c in on.chunks}
    lang = {c.chunk.id: c.chunk.lang for c in off.chunks}
    order = sorted(before, key=lambda c: -before[c])
    src = [c for c in order if lang[c] == "ko"][:2]
    ceiling = min(before[c] for c in src)
    g = off.signals["keyword_share"]
    assert g > 0 and any(lang[c] != "ko" for c in before)
    borrowed = {c: 0.0 for c in before}
    for field, w in feedback.FIELDS.items():
        basis = s._basis if field == "chunk" else None
        f = feedback.feedback_vector(list(s.store.stored_vectors(src, field).values()), basis)
        mu, sigma = background.moments(s.background[field], f)
        for c, x in s.store.vector_scores(f, list(before), field=field).items():
            borrowed[c] += w * (x - mu) / sigma
    changed = 0
    for c in set(before) & set(after):
        if lang[c] == "ko":
            assert after[c] == pytest.approx(before[c], abs=1e-9)
        else:
            assert after[c] == pytest.approx(feedback.lifted(before[c], g * borrowed[c], ceiling), abs=1e-4)
            assert after[c] <= max(before[c], ceiling) + 1e-9
            changed += after[c] != pytest.approx(before[c], abs=1e-6)
    assert changed


@pytest.mark.parametrize("off", [None, "aligned_list"])
def test_calibrated_score_is_recomputed_from_the_store(corpus_index, off):
    """The default fusion: background z-scores of every candidate in every weighted field,
    a missing heading filled from the chunk, plus the shared keyword evidence; a list
    that is off adds no evidence."""
    from chaja.search import background
    from chaja.search.calibrated import keyword_values
    cfg = corpus_index.config.search
    assert cfg.fusion == "calibrated"
    q = "자기주식 소각"
    if off:
        setattr(cfg, off, False)
    depth, cfg.keyword_neutral_depth = cfg.keyword_neutral_depth, 0   # its own test below
    borrowed, cfg.feedback_weight = cfg.feedback_weight, 0.0             # and this one
    tail, cfg.other_language_yield = cfg.other_language_yield, 0.0      # and the tail's yield
    try:
        res = corpus_index.search(q)
    finally:
        cfg.keyword_neutral_depth, cfg.feedback_weight, cfg.other_language_yield = depth, borrowed, tail
        if off:
            setattr(cfg, off, True)
    s = corpus_index.searcher()
    expected_lists = ["vector", "heading", "keyword", "aligned", "aligned_heading"]
    assert res.lists == [m for m in expected_lists if not (off and m == "aligned")]
    qv, qa = s.query_vector(q), s.aligned.encode_queries([q])[0]
    w = dict(cfg.calibrated_weights, **({"aligned": 0.0} if off else {}))
    ids = [c.chunk.id for c in res.chunks]
    z = {}
    for field, vec in (("chunk", qv), ("heading", qv), ("aligned", qa), ("aligned_heading", qa)):
        mu, sigma = background.moments(s.background[field], vec)
        z[field] = {c: (x - mu) / sigma for c, x in s.store.vector_scores(vec, ids, field=field).items()}
    kw = s.keyword_list(res.terms, cfg.candidates)
    found = s.store.chunk_terms([h.chunk_id for h in kw])
    shares = {c: len(set(res.terms) & t) / len(set(res.terms)) for c, t in found.items()}
    kv = keyword_values(kw, shares, cfg.keyword_share_power)
    g = res.signals["keyword_share"]
    for c in res.chunks:
        cid = c.chunk.id
        expect = w["vector"] * z["chunk"][cid] + w["heading"] * z["heading"].get(cid, z["chunk"][cid]) \
            + w["aligned"] * z["aligned"][cid] + w["aligned_heading"] * z["aligned_heading"].get(cid, z["aligned"][cid]) \
            + w["keyword"] * g * kv.get(cid, 0.0)
        assert c.score == pytest.approx(expect, abs=1e-4)
    assert [c.score for c in res.chunks] == sorted((c.score for c in res.chunks), reverse=True)


def test_the_keyword_share_power_sets_how_much_a_partial_match_counts(corpus_index):
    """``search.keyword_share_power`` reaches the fusion: a chunk holding some of the query's
    content terms gains w_K · m(q) · (share^1 − share^2) · s / max s at p = 1 over p = 2,
    and a chunk of the query's language holding every term or none scores the same at both."""
    from chaja.search.calibrated import keyword_values
    cfg = corpus_index.config.search
    q = "자기주식 소각 결정 공시 일정"
    saved = (cfg.keyword_share_power, cfg.keyword_neutral_depth, cfg.feedback_weight, cfg.other_language_yield)
    cfg.keyword_neutral_depth, cfg.feedback_weight, cfg.other_language_yield = 0, 0.0, 0.0
    try:
        runs = {}
        for p in (1.0, 2.0):
            cfg.keyword_share_power = p
            res = corpus_index.search(q)
            # the query's own language: the translated list's addition to the other's depends on p too
            runs[p] = ({c.chunk.id: c.score for c in res.chunks if c.chunk.lang == "ko"},
                       res.signals["keyword_share"], res.terms)
    finally:
        cfg.keyword_share_power, cfg.keyword_neutral_depth, cfg.feedback_weight, cfg.other_language_yield = saved
    (one, g, terms), (two, g2, _) = runs[1.0], runs[2.0]
    assert g == pytest.approx(g2)
    s = corpus_index.searcher()
    kw = s.keyword_list(terms, cfg.candidates)
    found = s.store.chunk_terms([h.chunk_id for h in kw])
    shares = {c: len(set(terms) & t) / len(set(terms)) for c, t in found.items()}
    k1, k2 = keyword_values(kw, shares, 1.0), keyword_values(kw, shares, 2.0)
    gap = {c: k1[c] - k2[c] for c in k1}
    m = cfg.keyword_floor + (1 - cfg.keyword_floor) * g
    partial = [c for c in one if c in two and 0 < shares.get(c, 0) < 1]
    assert partial, "the query should have a result that holds some of its terms"
    for c in set(one) & set(two):
        assert one[c] - two[c] == pytest.approx(cfg.calibrated_weights["keyword"] * m * gap.get(c, 0.0), abs=1e-4)
    assert any(one[c] > two[c] + 1e-3 for c in partial)


def test_a_query_that_normalisation_expands_past_the_limit_is_refused(corpus_index):
    from chaja.search.searcher import QueryError
    with pytest.raises(QueryError, match="once normalised"):
        corpus_index.search("\ufdfa" * 4000)


def test_a_query_keeps_at_most_its_first_terms(corpus_index):
    from chaja.search.searcher import MAX_QUERY_TERMS
    syllables = "".join(chr(0xAC00 + i * 2) for i in range(3999))     # about 4,000 distinct bigrams
    res = corpus_index.search(syllables)
    assert 0 < len(res.terms) <= MAX_QUERY_TERMS


@pytest.mark.parametrize("k", [0, -1, 1001, 2.5, "3", True])
def test_top_k_is_checked(corpus_index, k):
    from chaja.search.searcher import QueryError
    with pytest.raises(QueryError, match="k must be a whole number"):
        corpus_index.search("배당", top_k=k)


def test_a_long_document_does_not_crowd_out_the_others(tmp_path, encoder):
    """A document of many matching chunks fills the first fused candidates; with one
    chunk a document, top_k documents still come back while other documents match."""
    import chaja
    from chaja.documents import Document, Section

    long_doc = Document(id="long", title="Warranty handbook", lang="en", sections=[
        Section((f"Part {i}",), f"The warranty covers part {i} for two years. Warranty claims for part {i} "
                                "need the receipt and the serial number.") for i in range(40)])
    short = [Document(id=f"short-{i}", title=f"Note {i}", lang="en",
                      sections=[Section((), f"A note on warranty terms, number {i}.")]) for i in range(3)]
    cfg = chaja.Config()
    cfg.index.chunk_chars = 120
    with chaja.Index.open(tmp_path / "long.chaja", cfg, encoder=encoder) as idx:
        idx.add_documents([long_doc, *short])
        assert idx.store.stats().chunks > 30
        for k in (1, 2, 3, 4):
            res = idx.search("warranty claims receipt", top_k=k)
            assert len(res.documents) == k, [d.doc_id for d in res.documents]
            assert len({d.doc_id for d in res.documents}) == k


def test_the_two_query_encoders_side_by_side_give_what_each_gives_alone(corpus_index):
    import numpy as np

    s = corpus_index.searcher()
    assert s.aligned is not None and len(s.languages) > 1           # both encoders are asked
    text, words = "자기주식 소각 결정은 언제 하나요?", ["자기주식", "소각"]
    qv, (qa, encoded) = s.encode_query(text, words)
    alone_qa, alone_encoded = s.aligned_query(text, words)
    assert np.array_equal(qv, s.query_vector(text))
    assert np.array_equal(qa, alone_qa) and np.array_equal(encoded, alone_encoded) and encoded.shape[0] == 2


def test_the_other_languages_tail_yields_to_the_query_language(corpus_index):
    """Past the two best documents of another language than the query's, every chunk of
    that language loses other_language_yield · g(q); the query's language and those two
    documents keep their scores."""
    from chaja.documents import doc_id_of
    q = "자기주식 소각"
    plain = corpus_index.search(q, top_k=50, settings={"chunk_cap": 0, "other_language_yield": 0})
    tail = corpus_index.search(q, top_k=50, settings={"chunk_cap": 0})
    assert corpus_index.config.search.other_language_yield == 2.0
    g = plain.signals["keyword_share"]
    before = {c.chunk.id: c.score for c in plain.chunks}
    after = {c.chunk.id: c.score for c in tail.chunks}
    lang = {c.chunk.id: c.chunk.lang for c in plain.chunks}
    kept: list[str] = []
    for c in sorted(before, key=lambda c: -before[c]):
        doc = doc_id_of(c)
        if lang[c] != "ko" and doc not in kept and len(kept) < 2:
            kept.append(doc)
    assert g > 0 and len(kept) == 2
    yielded = 0
    for c in set(before) & set(after):
        if lang[c] == "ko" or doc_id_of(c) in kept:
            assert after[c] == pytest.approx(before[c], abs=1e-9)
        else:
            assert after[c] == pytest.approx(before[c] - 2.0 * g, abs=1e-9)
            yielded += 1
    assert yielded


def test_background_is_the_blend_kept_without_the_decoded_statistics(corpus_index):
    """The searcher's background statistics are the stored ones blended with the encoders'
    shipped prior; what stays in memory is the blend, not the decoded arrays beside it
    (3.1 MB of a store with four fields)."""
    import gc
    import tracemalloc

    from chaja.search import background, background_prior
    s = corpus_index.searcher()
    weight = float(s.cfg.background_prior)
    stored = background.decode(s.store.get_meta(background.META_KEY))
    assert weight > 0 and stored
    for field, got in s.background.items():
        want = background_prior.blend(stored.get(field), s._prior(field), weight)
        np.testing.assert_allclose(got["mean"], want["mean"], rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(got["cov"], want["cov"], rtol=1e-6, atol=1e-7)
    from chaja.search.searcher import Searcher
    fresh = Searcher(s.store, s.encoder, s.cfg, s.analyzer, s.aligned)     # as after a write
    background._DECODED.clear()
    del stored
    tracemalloc.start()
    try:
        got = fresh.background
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    arrays = sum(a.nbytes for st in got.values() for a in (st["mean"], st["cov"]))
    assert arrays > 1_000_000 and kept < arrays + 128 * 1024, (kept, arrays)
