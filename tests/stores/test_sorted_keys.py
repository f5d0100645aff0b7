"""Where keys sit in an ascending array of keys."""
import numpy as np

from chaja.stores.sorted_keys import positions


def test_each_key_gets_its_place_and_whether_it_is_there():
    pos, found = positions(np.array([3, 7, 9]), np.array([7, 3, 8, 10, 1]))
    assert found.tolist() == [True, True, False, False, False]
    assert pos[found].tolist() == [1, 0]
    assert pos.max() <= 2                                   # past the end: the last place, not out of range
