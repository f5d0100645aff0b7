"""The shared hub of these tests: a read key and a write key, small limits (so the limit
tests stay quick) and the fixture corpus, sent through the API."""
from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the hub needs the server extra: pip install 'chaja[server]'")
pytest.importorskip("uvicorn", reason="the hub needs the server extra: pip install 'chaja[server]'")

from chaja.loaders import load_paths  # noqa: E402

from hubs import CORPUS, READ_KEY, WRITE_KEY, start_hub, stop_hub  # noqa: E402


@pytest.fixture(scope="session")
def hub(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub")
    running = start_hub(root / "hub.chaja", root / "hub.log", [
        f"hub.api_keys={READ_KEY}", f"hub.write_keys={WRITE_KEY}", "hub.max_body_bytes=1000000",
        "hub.body_timeout_s=2", "hub.max_batch=50", "hub.readers=3",
        "search.reranker=e5-windows", "rerank.depth=0"])   # /v1/rerank served; searches not reranked
    running.writer.add_documents(load_paths([CORPUS]))
    yield running
    stop_hub(running)


@pytest.fixture(scope="session")
def plain_hub(tmp_path_factory):
    """A hub with the defaults: no keys, no reranker, an empty store."""
    root = tmp_path_factory.mktemp("plain")
    running = start_hub(root / "plain.chaja", root / "plain.log", [])
    yield running
    stop_hub(running)
