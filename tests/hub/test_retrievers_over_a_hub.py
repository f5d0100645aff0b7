"""Both framework retrievers pointed at a hub by URL give what they give over the
hub's own store opened here (a hub of their own, so no other test writes meanwhile)."""
from __future__ import annotations

import pytest

import chaja
from chaja.loaders import load_paths

from hubs import CORPUS, READ_KEY, WRITE_KEY, start_hub, stop_hub

QUERY = "보증 기간은 얼마나 되나요?"


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("retriever-hub")
    running = start_hub(root / "hub.chaja", root / "hub.log", [f"hub.api_keys={READ_KEY}",
                                                              f"hub.write_keys={WRITE_KEY}"])
    running.writer.add_documents(load_paths([CORPUS]))
    yield running
    stop_hub(running)


def test_langchain_over_a_hub(hub):
    pytest.importorskip("langchain_core")
    from chaja.integrations.langchain import ChajaRetriever

    remote = ChajaRetriever(hub=hub.url, api_key=READ_KEY, k=3).invoke(QUERY, filters={"lang": "ko"})
    with chaja.open(hub.store) as idx:
        local = ChajaRetriever(index=idx, k=3).invoke(QUERY, filters={"lang": "ko"})
    assert [(d.id, d.page_content) for d in remote] == [(d.id, d.page_content) for d in local]
    assert remote and remote[0].metadata["ranks"] == local[0].metadata["ranks"]


def test_llama_index_over_a_hub(hub):
    pytest.importorskip("llama_index.core")
    from chaja.integrations.llama_index import ChajaRetriever

    remote = ChajaRetriever(hub=hub.url, api_key=READ_KEY, k=3).retrieve(QUERY)
    with chaja.open(hub.store) as idx:
        local = ChajaRetriever(index=idx, k=3).retrieve(QUERY)
    assert [n.node.node_id for n in remote] == [n.node.node_id for n in local]
    assert [n.score for n in remote] == pytest.approx([n.score for n in local])


def test_a_wrong_key_is_the_hubs_error(hub):
    pytest.importorskip("langchain_core")
    from chaja.client import HubError
    from chaja.integrations.langchain import ChajaRetriever

    with pytest.raises(HubError) as err:
        ChajaRetriever(hub=hub.url, api_key="wrong", k=3).invoke(QUERY)
    assert err.value.status == 401
