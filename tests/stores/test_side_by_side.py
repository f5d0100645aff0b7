"""The pool that runs a search's graph walks side by side."""
from __future__ import annotations

import threading
import time

import pytest

from chaja.stores import side_by_side


def test_results_come_back_in_the_order_of_the_calls():
    calls = [lambda i=i: (time.sleep(0.01 * (5 - i)), i)[1] for i in range(5)]
    assert side_by_side.run(calls, workers=1) == list(range(5))
    assert side_by_side.run(calls, workers=0) == list(range(5))
    assert side_by_side.run([]) == [] and side_by_side.run([lambda: 7]) == [7]


def test_calls_overlap_on_the_pool():
    """Two calls that each wait for the other finish only if they run at the same time."""
    both = threading.Barrier(2, timeout=5)
    names = side_by_side.run([lambda: (both.wait(), threading.current_thread().name)[1]] * 2, workers=1)
    assert names[0] == threading.current_thread().name and names[1].startswith("chaja-search")


def test_an_error_is_raised_after_every_call_has_finished():
    finished = []

    def fails():
        raise ValueError("bad query")

    def slow():
        time.sleep(0.05)
        finished.append(True)
        return 1

    with pytest.raises(ValueError, match="bad query"):
        side_by_side.run([fails, slow, slow], workers=1)
    assert finished == [True, True]
