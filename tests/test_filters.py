"""Filters from mappings and ``key=value`` strings, their validation, and the Python
test that the stores' SQL mirrors."""
from __future__ import annotations

import pytest

from chaja.documents import Chunk
from chaja.filters import FilterError, Filters


def chunk(**kw) -> Chunk:
    base = dict(id="d#0", doc_id="filings/d", ordinal=0, title="t", heading_path=(), text="x",
                lang="ko", source="dart", doc_type="report", date="2024-03-05")
    base.update(kw)
    return Chunk(**base)


def test_empty_filters_are_false_and_pass_everything():
    assert not Filters()
    assert not Filters.from_mapping(None) and not Filters.from_mapping({})
    assert Filters().matches(chunk())


def test_from_mapping_and_parse_agree():
    a = Filters.from_mapping({"lang": "ko", "source": ["dart", "wire"], "date_from": "2024-01-01",
                              "doc_id_prefix": "filings/"})
    b = Filters.parse(["lang=ko", "source=dart, wire", "date_from=2024-01-01", "doc_id_prefix=filings/"])
    assert a == b and a
    assert a.to_dict() == {"lang": ["ko"], "source": ["dart", "wire"], "date_from": "2024-01-01",
                           "doc_id_prefix": "filings/"}
    assert Filters.from_mapping(a.to_dict()) == a


@pytest.mark.parametrize("data, passes", [
    ({"lang": "ko"}, True), ({"lang": ["en"]}, False),
    ({"source": ["wire", "dart"]}, True), ({"doc_type": "note"}, False),
    ({"date_from": "2024-03-05"}, True), ({"date_from": "2024-03-06"}, False),
    ({"date_to": "2024-03-05"}, True), ({"date_to": "2024-03-04"}, False),
    ({"doc_id_prefix": "filings/"}, True), ({"doc_id_prefix": "news/"}, False),
])
def test_matches(data, passes):
    assert Filters.from_mapping(data).matches(chunk()) is passes


def test_a_chunk_without_a_date_fails_date_conditions_only():
    c = chunk(date=None)
    assert not Filters.from_mapping({"date_from": "2000-01-01"}).matches(c)
    assert Filters.from_mapping({"lang": "ko"}).matches(c)


def test_dates_compare_on_the_day():
    assert Filters.from_mapping({"date_to": "2024-03-05"}).matches(chunk(date="2024-03-05T23:59:00"))


@pytest.mark.parametrize("bad, needle", [
    ("lang", "must be an object"),
    ({"colour": "red"}, "unknown filter 'colour'"),
    ({"lang": 3}, "string or a list"),
    ({"lang": ["ko", 1]}, "string or a list"),
    ({"date_from": "2024-1-1"}, "YYYY-MM-DD"),
    ({"date_to": 20240101}, "YYYY-MM-DD"),
    ({"date_from": "2024-05-01", "date_to": "2024-04-01"}, "after"),
    ({"doc_id_prefix": ""}, "non-empty"),
    ({"source": "a\x00b"}, "NUL"),
    ({"source": "\ud800"}, "surrogate"),
    ({"lang": ["x"] * 101}, "limit"),
])
def test_bad_filters_are_clear_errors(bad, needle):
    with pytest.raises(FilterError, match=needle):
        Filters.from_mapping(bad)


def test_parse_needs_key_value():
    with pytest.raises(FilterError, match="key=value"):
        Filters.parse(["lang"])


def test_a_single_value_given_to_the_constructor_is_one_value_not_its_letters():
    assert Filters(lang="ko") == Filters(lang=("ko",)) == Filters.from_mapping({"lang": "ko"})
    assert Filters(source=["a", "b"]).source == ("a", "b")
    assert Filters(lang="ko").matches(chunk(lang="ko"))
    assert not Filters(lang="ko").matches(chunk(lang="k"))
