"""Where keys sit in an ascending array of keys."""
import numpy as np

from chaja.stores.sorted_keys import held_in, positions


def test_each_key_gets_its_place_and_whether_it_is_there():
    pos, found = positions(np.array([3, 7, 9]), np.array([7, 3, 8, 10, 1]))
    assert found.tolist() == [True, True, False, False, False]
    assert pos[found].tolist() == [1, 0]
    assert pos.max() <= 2                                   # past the end: the last place, not out of range


def test_held_in_says_which_keys_are_there_even_in_no_keys():
    assert held_in(np.array([3, 7, 9]), np.array([7, 8, 9, 1])).tolist() == [True, False, True, False]
    assert held_in(np.array([], dtype=np.int64), np.array([1, 2])).tolist() == [False, False]


def test_keys_without_a_gap_are_found_as_a_binary_search_finds_them():
    rng = np.random.default_rng(3)
    dense = np.arange(1_000, 6_000, dtype=np.int64)           # a store's row ids, written without deletions
    gapped = np.delete(dense, [0, 17, 2_500])
    asked = np.concatenate([rng.integers(900, 6_100, 500), [1_000, 5_999, 999, 6_000]])
    for keys in (dense, gapped, dense[:1]):
        pos, found = positions(keys, asked)
        want = np.isin(asked, keys)
        assert found.tolist() == want.tolist() and pos.min() >= 0 and pos.max() < keys.size
        assert np.array_equal(keys[pos[found]], asked[found])
    pos, found = positions(dense, np.zeros(0, np.int64))
    assert pos.size == found.size == 0
