from chaja.documents import Hit
from chaja.search.gate import keyword_passes, term_coverage

TERMS = {"c1": {"소각", "각결"}, "c2": {"결정"}, "c3": set()}


def terms_of(ids):
    return {i: TERMS[i] for i in ids}


def test_coverage():
    assert term_coverage(["소각", "각결", "결정"], {"소각", "각결"}) == 2 / 3
    assert term_coverage([], {"x"}) == 0.0


def test_gate_keeps_keyword_when_a_result_holds_half_the_terms():
    q = ["소각", "각결", "결정"]
    assert keyword_passes(q, [Hit("c2", 1), Hit("c1", 1)], True, terms_of)


def test_gate_removes_keyword_when_no_result_holds_half():
    q = ["소각", "각결", "결정", "공시"]
    assert not keyword_passes(q, [Hit("c2", 1), Hit("c3", 1)], True, terms_of)


def test_gate_only_looks_at_the_top_depth():
    q = ["소각", "각결", "결정"]
    assert not keyword_passes(q, [Hit("c2", 1), Hit("c1", 1)], True, terms_of, depth=1)


def test_without_vector_results_the_keyword_list_stays():
    assert keyword_passes(["x", "y"], [Hit("c3", 1)], False, terms_of)
    assert not keyword_passes(["x"], [], True, terms_of)
