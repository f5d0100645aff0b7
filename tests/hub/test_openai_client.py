"""The OpenAI Python client, unchanged, against the hub's /v1/embeddings."""
from __future__ import annotations

import numpy as np
import pytest

import chaja

from hubs import READ_KEY

openai = pytest.importorskip("openai", reason="the openai package is in the dev extra")


@pytest.fixture
def client(hub):
    return openai.OpenAI(base_url=hub.url + "/v1", api_key=READ_KEY, max_retries=0)


@pytest.mark.parametrize("encoding_format", [None, "float", "base64"])
def test_embeddings_through_the_openai_client(hub, client, encoding_format):
    texts = ["보증 기간은 얼마나 되나요?", "How long is the warranty?"]
    extra = {} if encoding_format is None else {"encoding_format": encoding_format}
    got = client.embeddings.create(model="chaja", input=texts, **extra)
    if encoding_format == "base64":     # the client hands base64 back as it came
        import base64
        vecs = np.array([np.frombuffer(base64.b64decode(d.embedding), dtype="<f4") for d in got.data])
    else:
        vecs = np.array([d.embedding for d in got.data])
    with chaja.open(hub.store) as idx:
        want = idx.encoder.encode_queries(texts)
        assert got.model in idx.encoder.name
    assert vecs.shape == want.shape and np.allclose(vecs, want, atol=1e-5)
    assert [d.index for d in got.data] == [0, 1]
    assert got.usage.prompt_tokens == got.usage.total_tokens > 4


def test_a_single_string_and_an_unknown_model(client):
    assert len(client.embeddings.create(model="chaja", input="하나").data) == 1
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="text-embedding-3-small", input="x")


def test_a_wrong_key_is_an_authentication_error(hub):
    bad = openai.OpenAI(base_url=hub.url + "/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        bad.embeddings.create(model="chaja", input="x")


def test_the_client_discovers_the_served_model(hub, client):
    listed = client.models.list().data
    assert len(listed) == 1 and listed[0].object == "model"
    with chaja.open(hub.store) as idx:
        assert listed[0].id in idx.encoder.name
    assert client.models.retrieve(listed[0].id).id == listed[0].id
    got = client.embeddings.create(model=listed[0].id, input="보증 기간")      # the listed id is accepted
    assert got.model == listed[0].id
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.retrieve("text-embedding-3-small")
    assert caught.value.code == "model_not_found"


def test_errors_come_in_openais_shape(hub, client):
    with pytest.raises(openai.NotFoundError) as caught:
        client.embeddings.create(model="text-embedding-3-small", input="x")
    body = caught.value.body
    assert body["type"] == "not_found_error" and body["code"] == "model_not_found"
    assert "is not served here" in caught.value.message and "text-embedding-3-small" in body["message"]
    with pytest.raises(openai.BadRequestError) as caught:
        client.embeddings.create(model="chaja", input=["x"], dimensions=7)
    assert caught.value.body["type"] == "invalid_request_error" and "dimensions" in caught.value.body["message"]
    bad = openai.OpenAI(base_url=hub.url + "/v1", api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as caught:
        bad.models.list()
    assert caught.value.body["type"] == "authentication_error" and caught.value.code == "invalid_api_key"
