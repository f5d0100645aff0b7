"""The command line, run in-process on real files and the real model."""
import json

import pytest

from chaja.cli import SEARCH_SCHEMA, main


@pytest.fixture(scope="module")
def store(tmp_path_factory, corpus):
    path = tmp_path_factory.mktemp("cli") / "s.chaja"
    assert main(["index", str(corpus), "--store", str(path), "--quiet"]) == 0
    return path


def test_index_prints_a_summary(store, capsys, corpus):
    assert main(["index", str(corpus), "--store", str(store)]) == 0
    out = capsys.readouterr()
    assert "0 added, 0 changed, 9 unchanged" in out.out
    assert "by source: DART 3" in out.out


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


def test_config_prints_every_setting_as_toml(capsys):
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# defaults") and "[search]" in out and "rrf_k = 20.0" in out and "gate = true" in out


def test_stats_and_delete(store, capsys):
    assert main(["stats", "--store", str(store)]) == 0
    assert "documents: 9" in capsys.readouterr().out
    assert main(["delete", "news-rates", "missing-doc", "--store", str(store)]) == 1
    captured = capsys.readouterr()
    assert "deleted news-rates" in captured.out and "not found: missing-doc" in captured.err


def test_not_a_store_file(tmp_path, capsys):
    bad = tmp_path / "bad.chaja"
    bad.write_bytes(b"this is not sqlite" * 100)
    assert main(["stats", "--store", str(bad)]) == 2
    assert "not a chaja store" in capsys.readouterr().err


def test_index_with_nothing_to_read(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["index", str(tmp_path / "empty"), "--store", str(tmp_path / "s.chaja"), "--quiet"]) == 1
    assert "nothing indexed: no file under the paths could be read" in capsys.readouterr().err
    assert not list(tmp_path.glob("s.chaja*")), "a run that read nothing left a store behind"


def test_index_warns_when_an_expected_document_type_is_missing(store, capsys, corpus):
    args = ["index", str(corpus), "--store", str(store), "--quiet",
            "--set", 'index.expect_doc_types={"DART": ["filing", "annual-report"], "news": ["news"]}']
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "type 'annual-report' from source 'DART'" in err
    assert "'filing'" not in err and "source 'news'" not in err


def test_reuse_vectors_from_another_store(store, tmp_path, capsys, corpus):
    new = tmp_path / "whitespace.chaja"
    args = ["index", str(corpus), "--store", str(new), "--quiet", "--reuse-vectors", str(store),
            "--set", "index.analyzer=whitespace"]
    assert main(args) == 0
    out = capsys.readouterr().out
    chunks = int(out.split("chunks written: ")[1].split(";")[0])
    reused = int(out.split("vectors reused from other stores: ")[1].split(";")[0])
    assert reused > chunks  # every chunk vector, and the heading vectors too
    assert "newly encoded: 0" in out
    from chaja.stores.sqlite import SqliteStore
    with SqliteStore(store) as a, SqliteStore(new) as b:
        va, ia, _ = a._vectors()
        vb, ib, _ = b._vectors()
        same = {cid: va[i] for i, cid in enumerate(ia)}
        assert all((vb[i] == same[cid]).all() for i, cid in enumerate(ib) if cid in same)
        assert b.get_meta("index.analyzer") == "whitespace"


def test_serve_without_the_server_extra_names_it(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "fastapi", None)      # as if it were not installed
    assert main(["serve", "--store", str(tmp_path / "s.chaja")]) == 2
    assert "pip install 'chaja[server]'" in capsys.readouterr().err


def test_search_filters_on_the_command_line(store, capsys):
    assert main(["search", "dividend 배당", "--store", str(store), "--json", "--filter", "lang=en"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["results"] and {r["lang"] for r in got["results"]} == {"en"}
    assert main(["search", "dividend", "--store", str(store), "--filter", "colour=red"]) == 2
    assert "unknown filter 'colour'" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["search", "x"], ["stats"], ["delete", "some-id"]])
def test_reading_commands_never_create_a_store(tmp_path, capsys, command):
    missing = tmp_path / "no" / "such.chaja"
    assert main([*command, "--store", str(missing)]) == 2
    assert "no store at" in capsys.readouterr().err
    assert not missing.exists() and not missing.parent.exists()


@pytest.mark.parametrize("k", ["0", "-1", "1000000000"])
def test_k_out_of_range_is_an_error(store, capsys, k):
    assert main(["search", "배당", "--store", str(store), "-k", k]) == 2
    assert "k must be a whole number from 1 to 1000" in capsys.readouterr().err


def test_an_empty_query_fails_before_anything_is_opened(tmp_path, capsys):
    assert main(["search", "   ", "--store", str(tmp_path / "none.chaja")]) == 2
    assert "the query is empty" in capsys.readouterr().err


def test_version(capsys):
    import chaja
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.strip() == f"chaja {chaja.__version__}"


@pytest.mark.parametrize("setting, needle", [
    ("search.fusion=foo", "not one of calibrated, convex, rrf"),
    ("search.top_k=-3", "out of range (from 1 to 1000)"),
    ("search.top_k=2.5", "whole number"),
    ("index.analyzer=mecab", "not one of bigram, whitespace, kiwi"),
])
def test_config_values_are_checked_where_they_are_read(capsys, setting, needle, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["config", "--set", setting]) == 2
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "chaja.toml").exists()         # nothing written
    assert main(["search", "x", "--store", str(tmp_path / "none.chaja"), "--set", setting]) == 2
    assert needle in capsys.readouterr().err


def test_check_and_repair(store, tmp_path, capsys):
    import shutil
    import sqlite3

    copy = tmp_path / "copy.chaja"
    with sqlite3.connect(store) as a, sqlite3.connect(copy) as b:
        a.backup(b)
    assert main(["check", "--store", str(copy)]) == 0
    assert "whole:" in capsys.readouterr().out
    with sqlite3.connect(copy) as db:
        db.execute("DELETE FROM chunks_fts WHERE rowid = (SELECT min(rowid) FROM chunks)")
        db.execute("UPDATE meta SET value = '{}' WHERE key = 'index.language_means'")
    assert main(["check", "--store", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "fault: chunk" in out and "no keyword row" in out and "fault: statistics" in out
    assert main(["check", "--store", str(copy), "--repair"]) == 0
    out = capsys.readouterr().out
    assert "repaired: wrote the keyword row" in out and "repaired: recomputed the language statistics" in out
    assert "whole:" in out
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_stats_and_index_as_json(tmp_path, capsys, corpus):
    store = str(tmp_path / "j.chaja")
    assert main(["index", str(corpus), "--store", store, "--json", "--quiet"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["schema"] == "chaja.index/1" and got["added"] == 9 and got["chunks_written"] >= 9
    assert got["store"]["documents"] == 9 and got["by_lang"] == {"en": 5, "ko": 4} and got["warnings"] == []
    assert main(["index", str(corpus), "--store", store, "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["unchanged"] == 9
    assert main(["stats", "--store", store, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["schema"] == "chaja.stats/1" and stats["documents"] == 9 and stats["chunks"] == got["store"]["chunks"]
    assert stats["encoder"] and stats["index"]["analyzer"] == "bigram" and stats["by_lang"] == {"en": 5, "ko": 4}


def test_a_bulk_load_and_optimize(tmp_path, capsys, corpus):
    store = str(tmp_path / "bulk.chaja")
    assert main(["index", str(corpus), "--store", store, "--defer-graphs", "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["deferred_graphs"] == []     # too small for a graph
    assert main(["optimize", "--store", store, "--quiet"]) == 0
    assert "nothing to build" in capsys.readouterr().out
    assert main(["optimize", "--store", str(tmp_path / "none.chaja")]) == 2
    assert "no store at" in capsys.readouterr().err
    assert main(["index", str(corpus), "--hub", "http://127.0.0.1:9", "--defer-graphs"]) == 2
    assert "--defer-graphs is for a store" in capsys.readouterr().err


def test_a_reader_that_goes_away_ends_the_command_quietly(store):
    """`chaja … | head`: the pipe closes before the command is done writing."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)                   # nobody will read: the first write fails with EPIPE
    try:
        done = subprocess.run([sys.executable, "-m", "chaja.cli", "stats", "--store", str(store), "--json"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr


def test_two_folders_of_one_layout_do_not_replace_each_other_in_silence(tmp_path, capsys):
    for lang, text in (("en", "# Guide\n\nHow to descale the machine, step by step."),
                       ("ko", "# 안내\n\n커피 머신의 석회를 제거하는 방법입니다.")):
        (tmp_path / lang).mkdir()
        (tmp_path / lang / "guide.md").write_text(text, encoding="utf-8")
    store = str(tmp_path / "s.chaja")
    assert main(["index", str(tmp_path / "en"), "--store", store, "--quiet"]) == 0
    capsys.readouterr()
    assert main(["index", str(tmp_path / "ko"), "--store", store, "--quiet", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["changed"] == 0 and len(out["kept_elsewhere"]) == 1 and "en/guide.md" in out["kept_elsewhere"][0]
    import chaja
    with chaja.open(store) as idx:
        assert idx.store.documents(ids=["guide"])[0].path.endswith("en/guide.md")
    # a folder renamed: its documents are the same documents, moved
    (tmp_path / "en").rename(tmp_path / "en-old")
    assert main(["index", str(tmp_path / "ko"), "--store", store, "--quiet"]) == 0
    with chaja.open(store) as idx:
        assert idx.store.documents(ids=["guide"])[0].path.endswith("ko/guide.md")
    (tmp_path / "en-old").rename(tmp_path / "en")
    assert main(["index", str(tmp_path / "en"), "--store", store, "--quiet", "--replace-moved"]) == 0
    with chaja.open(store) as idx:
        assert idx.store.documents(ids=["guide"])[0].path.endswith("en/guide.md")
