"""The ``chaja config`` command, and settings checked where a command reads them."""
import pytest

from chaja.cli import main


def test_config_prints_every_setting_as_toml(capsys):
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# defaults") and "[search]" in out and "rrf_k = 20.0" in out and "gate = true" in out


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
