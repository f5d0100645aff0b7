"""What a store's vector matrix should hold for the vectors it was given: the same numbers
for float32, each within one and a half steps of its dimension's scale for int8 codes
(half a step when written at once; each widening of a dimension's range by rows added
later rounds the codes held once more, within half of the new step: these tests' stores
widen a range at most twice)."""
from __future__ import annotations

import numpy as np

from chaja.stores.quantized import ScaledInt8


def holds(matrix, given, rows=None) -> bool:
    """Whether ``matrix`` (or its ``rows``) holds the float vectors ``given`` as it keeps them."""
    given = np.asarray(given, dtype=np.float32)
    got = np.asarray(matrix if rows is None else matrix[rows], dtype=np.float32).reshape(given.shape)
    if isinstance(matrix, ScaledInt8):
        return bool(np.all(np.abs(got - given) <= 1.5 * matrix.scales * (1 + 1e-5)))
    return bool(np.array_equal(got, given))


def numbers(matrix) -> np.ndarray:
    """The array a matrix keeps its numbers in (int8 codes or the float rows)."""
    return matrix.codes if isinstance(matrix, ScaledInt8) else matrix
