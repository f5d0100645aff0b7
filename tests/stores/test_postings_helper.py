"""Postings pages built by a helper process: the same segment as one process builds, and
a helper that cannot start or dies costs nothing but time."""
from __future__ import annotations

import random
import sys

from chaja.stores import postings, postings_helper
from tests.stores.test_postings import rows, same


def paged(everything: list[tuple], size: int):
    """``next_rows`` over ``everything`` in pages of ``size`` rows."""
    ordered = sorted(everything)

    def next_rows(last: int) -> list[tuple]:
        return [r for r in ordered if r[0] > last][:size]
    return next_rows


def test_pages_built_half_by_a_helper_give_the_segment_one_process_gives(monkeypatch):
    monkeypatch.setattr(postings, "HELPER_MIN_ROWS", 50)
    started = []
    start = postings_helper.start
    monkeypatch.setattr(postings_helper, "start", lambda: started.append(1) or start())
    everything = rows(random.Random(5), 700)
    alone = postings.build_paged(paged(everything, 100), helper=False)
    assert not started
    beside = postings.build_paged(paged(everything, 100))
    assert started == [1]                           # one helper for every page
    same(alone, beside)
    same(alone, postings.build(everything))
    assert beside.n_rows == 700


def test_the_helper_builds_a_page_exactly_as_this_process_does():
    page = rows(random.Random(6), 120) + [(10_000, "en", "Upper CASE, punctuation!", "", "\x01 odd")]
    helper = postings_helper.start()
    assert helper is not None                       # two cores or more here
    try:
        assert helper.submit(page)
        got = helper.result()
    finally:
        helper.close()
    same(got, postings.build(page))


def test_a_helper_that_dies_hands_the_page_back():
    helper = postings_helper.start()
    assert helper.submit(rows(random.Random(7), 50))
    helper.proc.kill()
    assert helper.result() is None                  # the caller builds the page itself
    assert helper.proc is None and not helper.submit(rows(random.Random(8), 5))


def test_no_helper_where_none_can_start(monkeypatch):
    monkeypatch.setattr(postings, "HELPER_MIN_ROWS", 50)
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    assert postings_helper.start() is None
    everything = rows(random.Random(9), 300)
    same(postings.build_paged(paged(everything, 70)), postings.build(everything))


def test_small_pages_are_built_here_without_a_helper(monkeypatch):
    started = []
    monkeypatch.setattr(postings_helper, "start", lambda: started.append(1))
    everything = rows(random.Random(10), 260)
    same(postings.build_paged(paged(everything, 100)), postings.build(everything))
    assert not started                              # under HELPER_MIN_ROWS rows a page
