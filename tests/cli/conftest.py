"""The store the command-line tests share: the fixture corpus indexed by ``chaja index``,
once for each test module."""
import pytest

from chaja.cli import main


@pytest.fixture(scope="module")
def store(tmp_path_factory, corpus):
    path = tmp_path_factory.mktemp("cli") / "s.chaja"
    assert main(["index", str(corpus), "--store", str(path), "--quiet"]) == 0
    return path
