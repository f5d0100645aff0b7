"""Which vector lists a search walks (chaja.search.lists), on the fixture corpus with the real model."""
import pytest

from chaja.search.lists import SECTION_LISTS
from chaja.search.query import content_words

#: a question longer than any section name, and one as short as a section name
LONG = "what tire pressure should the bicycle have before a long ride on wet gravel roads"
SHORT = "tire pressure"


@pytest.fixture
def settings(corpus_index):
    """Change search settings of the shared index for one test, then put them back."""
    cfg = corpus_index.config.search
    saved: dict = {}

    def use(**changes):
        for name, value in changes.items():
            saved.setdefault(name, getattr(cfg, name))
            setattr(cfg, name, value)
    yield use
    for name, value in saved.items():
        setattr(cfg, name, value)


def test_the_questions_are_long_and_short(corpus_index):
    limit = corpus_index.config.search.heading_list_words
    assert len(content_words(LONG)) > limit >= len(content_words(SHORT)) > 0


def test_a_long_question_does_not_walk_the_section_name_lists(corpus_index):
    res = corpus_index.search(LONG)
    assert "vector" in res.lists and not set(SECTION_LISTS) & set(res.lists)
    assert all(c.heading_rank is None for c in res.chunks)
    assert res.documents[0].doc_id == "manuals/bicycle"


def test_a_short_question_walks_them(corpus_index):
    res = corpus_index.search(SHORT)
    assert set(SECTION_LISTS) <= set(res.lists)
    assert res.documents[0].best.heading_rank == 1


def test_the_section_names_still_count_for_a_long_question(corpus_index, settings):
    scored = {c.chunk.id: c.score for c in corpus_index.search(LONG).chunks}
    weights = dict(corpus_index.config.search.calibrated_weights)
    settings(calibrated_weights={**weights, "heading": 0.0, "aligned_heading": 0.0})
    unweighted = {c.chunk.id: c.score for c in corpus_index.search(LONG).chunks}
    common = scored.keys() & unweighted.keys()
    assert common and any(abs(scored[c] - unweighted[c]) > 1e-6 for c in common)


def test_the_limit_is_a_setting(corpus_index, settings):
    settings(heading_list_words=100)
    assert set(SECTION_LISTS) <= set(corpus_index.search(LONG).lists)
    settings(heading_list_words=0)
    assert not set(SECTION_LISTS) & set(corpus_index.search(SHORT).lists)


def test_rank_fusions_walk_every_list(corpus_index, settings):
    settings(fusion="rrf")
    assert "heading" in corpus_index.search(LONG).lists


def test_a_vector_search_walks_every_list(corpus_index, settings):
    settings(mode="vector")
    assert "heading" in corpus_index.search(LONG).lists
