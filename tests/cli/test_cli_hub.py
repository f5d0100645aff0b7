"""The hub side of the command line: ``chaja serve``."""
from chaja.cli import main


def test_serve_without_the_server_extra_names_it(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "fastapi", None)      # as if it were not installed
    assert main(["serve", "--store", str(tmp_path / "s.chaja")]) == 2
    assert "pip install 'chaja[server]'" in capsys.readouterr().err
