import pytest

from chaja.documents import Hit
from chaja.search.fusion import ranks, rrf


def hits(*ids):
    return [Hit(i, 1.0) for i in ids]


def test_rrf_arithmetic_k20():
    fused = dict(rrf({"fts": hits("a", "b", "c"), "vec": hits("c", "a")}, k=20))
    assert fused["a"] == pytest.approx(1 / 21 + 1 / 22)
    assert fused["b"] == pytest.approx(1 / 22)
    assert fused["c"] == pytest.approx(1 / 23 + 1 / 21)


def test_order_and_deterministic_ties():
    # a and b tie on score; a has the better single rank... both rank 1 in one list → id order
    order = [cid for cid, _ in rrf({"x": hits("b", "c"), "y": hits("a", "c")}, k=60)]
    assert order == ["c", "a", "b"]


def test_k_changes_the_balance():
    # p is first in one list only; q is third in both
    lists = {"x": hits("p", "m", "q"), "y": hits("n", "o", "q")}
    small, big = dict(rrf(lists, k=0)), dict(rrf(lists, k=60))
    assert small["p"] > small["q"]      # 1/1 > 2/3
    assert big["q"] > big["p"]          # 2/63 > 1/61


def test_list_weights_and_duplicates():
    fused = dict(rrf({"x": hits("a", "a", "b"), "y": hits("b")}, k=20, weights={"y": 2.0}))
    assert ranks(hits("a", "a", "b")) == {"a": 1, "b": 3}
    assert fused["b"] == pytest.approx(1 / 23 + 2 / 21)


def test_negative_k_rejected():
    with pytest.raises(ValueError):
        rrf({}, k=-1)


def test_minmax_and_convex():
    from chaja.search.fusion import convex, minmax
    kw = [Hit("a", 10.0), Hit("b", 6.0), Hit("c", 2.0)]
    vec = [Hit("c", 0.9), Hit("a", 0.8), Hit("d", 0.7)]
    assert minmax(kw) == {"a": 1.0, "b": 0.5, "c": 0.0}
    assert minmax([Hit("x", 3.0)]) == {"x": 1.0}
    fused = dict(convex({"keyword": kw, "vector": vec}))
    assert fused["a"] == pytest.approx(1.0 + 0.5)
    assert fused["c"] == pytest.approx(0.0 + 1.0)
    assert fused["d"] == pytest.approx(0.0)
    weighted = convex({"keyword": kw, "vector": vec}, weights={"keyword": 2.0})
    assert weighted[0] == ("a", pytest.approx(2.5))


def test_zscore_normalisation():
    from chaja.search.fusion import convex, zscore
    hits = [Hit("a", 4.0), Hit("b", 2.0), Hit("c", 0.0)]
    z = zscore(hits)
    assert z["a"] == pytest.approx(2 / (8 / 3) ** 0.5) and z["b"] == 0.0 and z["c"] == 0.0
    assert zscore([Hit("x", 1.0), Hit("y", 1.0)]) == {"x": 0.0, "y": 0.0}
    assert convex({"k": hits}, normalization="zscore")[0][0] == "a"
    with pytest.raises(ValueError):
        convex({"k": hits}, normalization="rank")
