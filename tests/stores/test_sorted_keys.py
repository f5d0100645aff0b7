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
