"""The embeddings route of the real hub (:mod:`chaja.hub.embeddings`): the encoder's
vectors, and bad requests refused."""
from __future__ import annotations

import numpy as np
import pytest

import chaja

from hubs import READ_KEY
from raw import call


def test_embeddings_match_the_encoder(hub):
    got = hub.client().embed(["자전거 타이어", "router password"], kind="passage")
    with chaja.open(hub.store) as idx:
        want = idx.encoder.encode_passages(["자전거 타이어", "router password"])
    assert np.allclose(np.array(got), want, atol=1e-5)
    assert np.allclose(np.linalg.norm(np.array(got), axis=1), 1.0, atol=1e-4)


@pytest.mark.parametrize("body, status", [
    ({"model": "gpt-4", "input": "x"}, 404), ({"model": "chaja", "input": []}, 422),
    ({"model": "chaja", "input": [1, 2, 3]}, 422), ({"model": "chaja", "input": "x", "dimensions": 3}, 400),
    ({"model": "chaja", "input": "x", "encoding_format": "hex"}, 422), ({"input": "x"}, 422),
])
def test_bad_embedding_requests(hub, body, status):
    assert call(hub.url, "POST", "/v1/embeddings", body, key=READ_KEY)[0] == status
