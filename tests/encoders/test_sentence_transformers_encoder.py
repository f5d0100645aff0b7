"""encoder.name = "sentence-transformers:<folder>": a tiny random model folder, loaded
through the same code a user's config reaches, against sentence-transformers itself."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import chaja
from chaja.config import Config, EncoderConfig
from chaja.encoders import get_encoder
from chaja.stores import StoreError

pytest.importorskip("sentence_transformers")

import embedding_models  # noqa: E402

TEXTS = ["상태 관리는 어떻게 하나요", "The warranty lasts two years from the date of purchase.", "", "자기주식 소각 결정 공시"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return embedding_models.build(tmp_path_factory.mktemp("st") / "tiny-embedder",
                                  prompts={"query": "query: ", "passage": "passage: "})


def encoder_for(folder):
    return get_encoder(EncoderConfig(name=f"sentence-transformers:{folder}", batch_size=3))


def test_vectors_are_the_models_own_with_its_prompts(folder):
    from sentence_transformers import SentenceTransformer

    enc = encoder_for(folder)
    ref = SentenceTransformer(str(folder), device="cpu")
    for got, prompt in ((enc.encode_queries(TEXTS), "query"), (enc.encode_passages(TEXTS), "passage")):
        want = ref.encode(TEXTS, prompt_name=prompt, convert_to_numpy=True)
        want = want / np.linalg.norm(want, axis=1, keepdims=True)
        assert got.dtype == np.float32 and got.shape == (len(TEXTS), enc.dim) == (4, 32)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # the prompts matter: a query and the same text as a passage differ
    assert not np.allclose(enc.encode_queries(TEXTS[:1]), enc.encode_passages(TEXTS[:1]))
    assert enc.encode_queries([]).shape == (0, 32)


def test_a_model_without_prompts_encodes_queries_and_passages_alike(tmp_path):
    enc = encoder_for(embedding_models.build(tmp_path / "plain", seed=1))
    np.testing.assert_array_equal(enc.encode_queries(TEXTS), enc.encode_passages(TEXTS))


def test_the_name_follows_the_weights_not_the_path(folder, tmp_path):
    moved = shutil.copytree(folder, tmp_path / "tiny-embedder")
    assert encoder_for(moved).name == encoder_for(folder).name
    assert encoder_for(folder).name.endswith("@sentence-transformers")
    other = embedding_models.build(tmp_path / "retrained" / "tiny-embedder", seed=7,
                                   prompts={"query": "query: ", "passage": "passage: "})
    assert encoder_for(other).name != encoder_for(folder).name


def test_a_store_indexed_with_a_folder_model_searches_with_it_and_refuses_another(folder, corpus, tmp_path):
    cfg = Config().override([f"encoder.name=sentence-transformers:{folder}"])
    path = tmp_path / "st.chaja"
    with chaja.open(path, cfg) as idx:
        report = idx.add([corpus])
        assert report.chunks > 0
        assert idx.store.get_meta("encoder") == encoder_for(folder).name
        assert idx.store.get_meta("dim") == "32"
        res = idx.search("espresso descaling", top_k=5)
        assert "vector" in res.lists and res.documents
    other = embedding_models.build(tmp_path / "other" / "tiny-embedder", seed=3)
    with chaja.open(path, Config().override([f"encoder.name=sentence-transformers:{other}"])) as idx:
        with pytest.raises(StoreError, match="indexed with"):
            idx.search("espresso", top_k=3)


def test_cli_index_and_search_with_a_folder_model(folder, corpus, tmp_path, capsys):
    from chaja.cli import main

    store = str(tmp_path / "cli.chaja")
    setting = f"encoder.name=sentence-transformers:{folder}"
    assert main(["index", str(corpus), "--store", store, "--set", setting, "--quiet"]) == 0
    assert main(["search", "자기주식 소각", "--store", store, "--set", setting, "-k", "3"]) == 0
    out = capsys.readouterr().out
    assert "[filings/share-cancellation]" in out


@pytest.mark.parametrize("spec, error, match", [
    ("sentence-transformers:/no/such/folder", FileNotFoundError, "no such model folder"),
    ("sentence-transformers:", ValueError, "sentence-transformers:<model folder>"),
])
def test_bad_folders_are_named(spec, error, match):
    with pytest.raises(error, match=match):
        get_encoder(EncoderConfig(name=spec))


def test_a_folder_that_holds_no_model_is_refused(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a model")
    with pytest.raises((ValueError, OSError)):
        get_encoder(EncoderConfig(name=f"sentence-transformers:{tmp_path / 'empty'}"))
