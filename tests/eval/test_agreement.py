"""Agreement coefficients against published worked examples."""
import pytest

from chaja.eval.agreement import cohen_kappa, krippendorff_alpha

# Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 coders, 12 units,
# missing values left out; published alpha: nominal 0.743, ordinal 0.815, interval 0.849
N = None
CODERS = [[1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
          [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
          [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
          [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N]]
UNITS = [[v for v in unit if v is not None] for unit in zip(*CODERS)]


@pytest.mark.parametrize("metric, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorffs_worked_example(metric, published):
    assert krippendorff_alpha(UNITS, metric) == pytest.approx(published, abs=5e-4)


def test_alpha_limits():
    assert krippendorff_alpha([[2, 2], [0, 0], [3, 3]]) == pytest.approx(1.0)
    assert krippendorff_alpha([[1, 1], [1, 1]]) is None          # no expected disagreement
    assert krippendorff_alpha([[1], [2]]) is None                # nothing pairable
    assert krippendorff_alpha([[0, 3], [3, 0], [0, 3], [3, 0]]) < 0      # systematic disagreement
    with pytest.raises(ValueError, match="metric"):
        krippendorff_alpha(UNITS, "ratio")


def test_cohens_kappa_textbook_table():
    # 20 yes/yes, 5 yes/no, 10 no/yes, 15 no/no: p_o = 0.7, p_e = 0.5, kappa = 0.4
    a = [1] * 25 + [0] * 25
    b = [1] * 20 + [0] * 5 + [1] * 10 + [0] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)


def test_weighted_kappa_counts_near_misses_less():
    a = [0, 1, 2, 3, 3, 2, 1, 0]
    near = [0, 1, 2, 2, 3, 2, 1, 1]          # off by one twice
    far = [0, 1, 2, 0, 3, 2, 1, 3]           # off by three twice
    assert cohen_kappa(a, near) == pytest.approx(cohen_kappa(a, far))
    assert cohen_kappa(a, near, "quadratic") > cohen_kappa(a, far, "quadratic")
    assert cohen_kappa(a, a) == pytest.approx(1.0) and cohen_kappa([], []) is None
    with pytest.raises(ValueError):
        cohen_kappa([1, 2], [1])
