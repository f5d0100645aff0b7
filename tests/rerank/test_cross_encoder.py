"""The cross-encoder backends load a real (tiny, random) model from a folder and give
the scores the model's own transformers forward pass gives."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch", reason="the cross-encoder tests need the dev extra (PyTorch, transformers)")
pytest.importorskip("transformers", reason="the cross-encoder tests need the dev extra (transformers)")

from cross_encoders import build, reference_logits  # noqa: E402

from chaja.rerank import get_reranker  # noqa: E402
from chaja.rerank.cross_encoder import OnnxCrossEncoder, SentenceTransformersCrossEncoder  # noqa: E402
from chaja.config import RerankConfig  # noqa: E402

QUERY = "보증 기간은 얼마나 되나요?"
PASSAGES = ["The warranty lasts two years from the date of purchase.", "보증 기간은 구입일로부터 2년입니다.",
            "Descale the espresso machine every month. " * 12,      # longer than the model takes: truncated
            "식기세척기", "useEffect 훅은 언제 실행되나요"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build(tmp_path_factory.mktemp("tiny-cross-encoder"))


@pytest.fixture(scope="module")
def tiny_two_labels(tmp_path_factory):
    return build(tmp_path_factory.mktemp("tiny-cross-encoder-2"), labels=2, seed=1)


def test_onnx_backend_gives_the_models_own_scores(tiny):
    ce = OnnxCrossEncoder(tiny, max_length=512, batch_size=2)     # batches of two: padding inside a batch
    assert ce.max_length == 64                                     # the model's own limit wins
    got = ce.score(QUERY, PASSAGES)
    want = reference_logits(tiny, [(QUERY, p) for p in PASSAGES], max_length=64)[:, 0]
    assert got.shape == (len(PASSAGES),)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert len(set(got.tolist())) == len(PASSAGES)                # a random model still tells pairs apart
    # (its logits can lie within 1e-6 of each other: no rounding here)


def test_sentence_transformers_backend_gives_the_models_own_scores(tiny):
    pytest.importorskip("sentence_transformers", reason="needs the rerank-st extra")
    ce = SentenceTransformersCrossEncoder(tiny, max_length=64, batch_size=3)
    want = reference_logits(tiny, [(QUERY, p) for p in PASSAGES], max_length=64)[:, 0]
    np.testing.assert_allclose(ce.score(QUERY, PASSAGES), want, rtol=1e-4, atol=1e-5)


def test_a_two_output_head_scores_the_relevant_logit_over_the_other(tiny_two_labels):
    want = reference_logits(tiny_two_labels, [(QUERY, p) for p in PASSAGES], max_length=64)
    got = OnnxCrossEncoder(tiny_two_labels).score(QUERY, PASSAGES)
    np.testing.assert_allclose(got, want[:, 1] - want[:, 0], rtol=1e-4, atol=1e-5)


def test_truncation_to_a_shorter_max_length_is_the_tokenizers(tiny):
    want = reference_logits(tiny, [(QUERY, PASSAGES[2])], max_length=16)[:, 0]
    np.testing.assert_allclose(OnnxCrossEncoder(tiny, max_length=16).score(QUERY, [PASSAGES[2]]), want,
                               rtol=1e-4, atol=1e-5)


def test_no_passages_no_scores(tiny):
    assert OnnxCrossEncoder(tiny).score(QUERY, []).shape == (0,)


def test_the_spec_names_the_backend(tiny):
    r = get_reranker(f"onnx:{tiny}", RerankConfig(batch_size=4))
    assert isinstance(r, OnnxCrossEncoder) and r.batch_size == 4
    assert get_reranker("none") is None


@pytest.mark.parametrize("remove, message", [("model.onnx", "no model.onnx"), ("tokenizer.json", "no tokenizer.json")])
def test_a_folder_missing_a_file_is_named(tmp_path, tiny, remove, message):
    import shutil
    copy = shutil.copytree(tiny, tmp_path / "copy")
    (copy / remove).unlink()
    with pytest.raises(FileNotFoundError, match=message):
        OnnxCrossEncoder(copy)


def test_a_missing_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        get_reranker(f"onnx:{tmp_path / 'nowhere'}")
