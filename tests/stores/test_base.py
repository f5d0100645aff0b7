"""The helpers both stores write vectors with."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.stores.base import StoreError, flat_vector, refuse_non_finite


def test_flat_vector_gives_one_flat_float32_array():
    flat = np.arange(4, dtype=np.float32)
    assert flat_vector(flat) is flat                       # already flat float32: passed as it is
    assert flat_vector(None) is None
    for given in ([0.0, 1.0, 2.0, 3.0], np.arange(4, dtype=np.float64), np.arange(4, dtype=np.float32)[None, :],
                  np.arange(8, dtype=np.float32)[::2] / 2):
        got = flat_vector(given)
        assert got.dtype == np.float32 and got.ndim == 1
        assert np.array_equal(got, np.asarray(given, dtype=np.float32).ravel())


def test_non_finite_vectors_are_refused_by_name_with_or_without_the_vectors_given():
    good, bad = np.ones(3, np.float32), np.array([1.0, np.nan, 0.0], np.float32)
    named = [("a#0", good), ("a#1", None), ("b#0", bad)]
    for given in (None, [good, bad]):
        with pytest.raises(StoreError, match="'b#0'.*NaN or infinity"):
            refuse_non_finite(iter(named), given=given)
    refuse_non_finite(iter(named[:2]), given=[good])
    refuse_non_finite(iter([]))
    with pytest.raises(StoreError, match="'c#0'"):
        refuse_non_finite([("c#0", np.array([np.inf], np.float32))])
