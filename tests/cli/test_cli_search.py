"""The ``chaja search`` command, run in-process on a real store and the real model."""
import json

import pytest

from chaja.cli import SEARCH_SCHEMA, main


def test_search_text_output_explains_ranks(store, capsys):
    assert main(["search", "자기주식 소각", "--store", str(store), "-k", "5"]) == 0
    out = capsys.readouterr().out
    assert "자기주식 소각 결정" in out and "[filings/share-cancellation]" in out
    assert "why: keyword #" in out and "vector #" in out and "fused" in out


def test_search_json_schema(store, capsys):
    assert main(["search", "wireless password", "--store", str(store), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["schema"] == SEARCH_SCHEMA
    assert set(data) >= {"query", "terms", "keyword_used", "top_k", "results"}
    first = data["results"][0]
    assert first["doc_id"] == "manuals/router" and first["rank"] == 1
    assert set(first) >= {"title", "score", "chunk_id", "heading", "snippet", "keyword_rank", "vector_rank",
                          "heading_rank", "heading_score"}
    # the best chunk sits under the heading "Wireless password", so it is in the heading list
    assert first["heading_rank"] is not None and 0 < first["heading_score"] <= 1


def test_search_text_names_the_heading_rank(store, capsys):
    assert main(["search", "tire pressure", "--store", str(store)]) == 0
    assert "heading #" in capsys.readouterr().out


def test_search_errors_are_clear(store, capsys):
    assert main(["search", "  ", "--store", str(store)]) == 2
    assert "empty" in capsys.readouterr().err
    assert main(["search", "x", "--store", str(store), "--set", "search.rrf=1"]) == 2
    assert "unknown setting" in capsys.readouterr().err


def test_search_filters_on_the_command_line(store, capsys):
    assert main(["search", "dividend 배당", "--store", str(store), "--json", "--filter", "lang=en"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["results"] and {r["lang"] for r in got["results"]} == {"en"}
    assert main(["search", "dividend", "--store", str(store), "--filter", "colour=red"]) == 2
    assert "unknown filter 'colour'" in capsys.readouterr().err


@pytest.mark.parametrize("k", ["0", "-1", "1000000000"])
def test_k_out_of_range_is_an_error(store, capsys, k):
    assert main(["search", "배당", "--store", str(store), "-k", k]) == 2
    assert "k must be a whole number from 1 to 1000" in capsys.readouterr().err


def test_an_empty_query_fails_before_anything_is_opened(tmp_path, capsys):
    assert main(["search", "   ", "--store", str(tmp_path / "none.chaja")]) == 2
    assert "the query is empty" in capsys.readouterr().err


def test_a_query_with_nothing_to_match_says_so(store, capsys):
    assert main(["search", "?!.,;:", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "nothing relevant: the query has no words to match" in out
    assert main(["search", "?!.,;:", "--store", str(store), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["abstained"] is True and data["results"] == [] and "no words to match" in data["reason"]


def test_min_score_keeps_the_results_above_it(store, capsys):
    assert main(["search", "wireless password", "--store", str(store), "--json"]) == 0
    every = json.loads(capsys.readouterr().out)["results"]
    probabilities = [r["probability"] for r in every]
    assert all(0 < p < 1 for p in probabilities) and probabilities == sorted(probabilities, reverse=True)
    cut = (probabilities[0] + probabilities[-1]) / 2
    assert main(["search", "wireless password", "--store", str(store), "--json", "--min-score", str(cut)]) == 0
    kept = json.loads(capsys.readouterr().out)["results"]
    assert [r["doc_id"] for r in kept] == [r["doc_id"] for r in every if r["probability"] >= cut]
    assert 0 < len(kept) < len(every)
    assert main(["search", "wireless password", "--store", str(store), "--min-score", "0.9999"]) == 0
    assert "nothing relevant: no result reaches search.min_probability (0.9999)" in capsys.readouterr().out
    assert main(["search", "wireless password", "--store", str(store), "--min-score", "1.5"]) != 0
    assert "--min-score is a probability from 0 to 1" in capsys.readouterr().err
