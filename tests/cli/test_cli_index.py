"""The ``chaja index`` command, run in-process on real files and the real model."""
import json

from chaja.cli import main


def test_index_prints_a_summary(store, capsys, corpus):
    assert main(["index", str(corpus), "--store", str(store)]) == 0
    out = capsys.readouterr()
    assert "0 added, 0 changed, 9 unchanged" in out.out
    assert "by source: DART 3" in out.out


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


def test_stats_and_index_as_json(tmp_path, capsys, corpus):
    store = str(tmp_path / "j.chaja")
    assert main(["index", str(corpus), "--store", store, "--json", "--quiet"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["schema"] == "chaja.index/1" and got["added"] == 9 and got["chunks_written"] >= 9
    assert got["store"]["documents"] == 9 and got["by_lang"] == {"en": 5, "ko": 4} and got["warnings"] == []
    assert main(["index", str(corpus), "--store", store, "--json", "--quiet"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["unchanged"] == 9
    assert main(["stats", "--store", store, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["schema"] == "chaja.stats/1" and stats["documents"] == 9 and stats["chunks"] == got["store"]["chunks"]
    # the index run empties the write-ahead log before it reports: both commands give the store's size
    assert got["store"]["size_bytes"] == again["store"]["size_bytes"] == stats["size_bytes"]
    assert stats["encoder"] and stats["index"]["analyzer"] == "bigram" and stats["by_lang"] == {"en": 5, "ko": 4}


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
