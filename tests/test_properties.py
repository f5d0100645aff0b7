"""Properties on any input (hypothesis): the analysers never fail and are
deterministic, chunks cover every character of a document, fusion and grouping keep
their invariants, and a search on any string either answers in shape or refuses
with a QueryError."""
from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis", reason="hypothesis is in the dev extra")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from chaja.analysis import bigram_terms, whitespace_terms  # noqa: E402
from chaja.chunking import chunk_document  # noqa: E402
from chaja.documents import Chunk, Document, Hit, Section  # noqa: E402
from chaja.filters import FilterError, Filters  # noqa: E402
from chaja.search.fusion import convex, rrf  # noqa: E402
from chaja.search.grouping import cap_per_document, group_by_document  # noqa: E402
from chaja.search.results import ChunkResult  # noqa: E402
from chaja.search.searcher import QueryError  # noqa: E402

# text with Hangul, Latin, digits, punctuation, spaces and the odd control or symbol
TEXT = st.text(st.one_of(st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3),
                         st.characters(codec="utf-8")), max_size=400)


@given(TEXT)
def test_analysers_never_fail_and_are_deterministic(text):
    for analyse in (bigram_terms, whitespace_terms):
        terms = analyse(text)
        assert terms == analyse(text)
        assert all(isinstance(t, str) and t and not any(c.isspace() for c in t) for t in terms)
        assert all(t == t.lower() for t in terms)


@given(st.lists(st.tuples(st.lists(st.text(min_size=1, max_size=20), max_size=3), TEXT), max_size=6),
       st.integers(min_value=50, max_value=600))
def test_chunks_cover_every_character_of_the_text(sections, max_chars):
    doc = Document(id="d", title="제목", sections=[Section(tuple(h), t) for h, t in sections])
    chunks = chunk_document(doc, max_chars)
    squeeze = lambda s: "".join(s.split())   # noqa: E731 - whitespace may move between chunks
    assert squeeze("".join(c.text for c in chunks)) == squeeze("".join(t for _, t in sections))
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert len({c.id for c in chunks}) == len(chunks)


HITS = st.lists(st.sampled_from([f"c{i}" for i in range(30)]), unique=True, max_size=30).map(
    lambda ids: [Hit(cid, 1.0 - i / 40) for i, cid in enumerate(ids)])


@given(st.dictionaries(st.sampled_from(["keyword", "vector", "heading"]), HITS, max_size=3),
       st.floats(min_value=0, max_value=100))
def test_fusion_keeps_every_candidate_once_best_first(lists, k):
    everyone = {h.chunk_id for hits in lists.values() for h in hits}
    for fused in (rrf(lists, k=k), convex(lists)):
        ids = [cid for cid, _ in fused]
        assert len(ids) == len(set(ids)) and set(ids) == everyone
        scores = [s for _, s in fused]
        assert scores == sorted(scores, reverse=True)
    swapped = dict(rrf(dict(reversed(list(lists.items()))), k=k))    # the order of the lists does not
    assert {c: pytest.approx(s) for c, s in rrf(lists, k=k)} == swapped  # matter (up to rounding)


@given(st.lists(st.tuples(st.sampled_from("abcdef"), st.integers(0, 5)), unique=True, max_size=30),
       st.integers(min_value=0, max_value=4))
def test_cap_and_grouping_invariants(pairs, cap):
    order = [f"{d}#{n}" for d, n in pairs]
    doc_of = {cid: cid.split("#")[0] for cid in order}
    capped = cap_per_document(order, doc_of, cap)
    assert capped == [c for c in order if c in set(capped)]                # order kept
    if cap:
        assert all(sum(doc_of[c] == d for c in capped) <= cap for d in set(doc_of.values()))
    results = [ChunkResult(chunk=Chunk(id=c, doc_id=doc_of[c], ordinal=0, title="t", heading_path=(), text=""),
                           score=1.0 / (i + 1)) for i, c in enumerate(capped)]
    docs = group_by_document(results)
    assert [d.rank for d in docs] == list(range(1, len(docs) + 1))
    assert sorted(c.chunk.id for d in docs for c in d.chunks) == sorted(capped)


@given(st.lists(st.text(max_size=30), max_size=5))
def test_filter_expressions_parse_or_fail_clearly(expressions):
    try:
        Filters.parse(expressions)
    except FilterError:
        pass


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(TEXT, st.integers(min_value=1, max_value=12))
def test_any_query_answers_in_shape_or_is_refused(corpus_index, text, k):
    try:
        res = corpus_index.search(text, top_k=k)
    except QueryError:
        return
    assert len(res.chunks) <= k
    assert [d.rank for d in res.documents] == list(range(1, len(res.documents) + 1))
    assert len({d.doc_id for d in res.documents}) == len(res.documents)
