"""Where keys sit in an ascending array of keys (row ids, graph nodes, group members)."""
from __future__ import annotations

import numpy as np


def positions(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where each of ``keys`` would sit in ``sorted_keys`` (non-empty, ascending), and
    whether it is there."""
    pos = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return pos, sorted_keys[pos] == keys


def held_in(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Which of ``keys`` are in ``sorted_keys`` (ascending; may be empty)."""
    if not sorted_keys.size:
        return np.zeros(np.shape(keys), dtype=bool)
    return positions(sorted_keys, keys)[1]
