"""The shared hubs of these tests: one with a read key and a write key, small limits (so
the limit tests stay quick) and the fixture corpus, sent through the API; one with the
defaults. Each has a judging folder (``chaja serve --judging``), and a judging pool of
the corpus is made once for the tests that grade."""
from __future__ import annotations

import pytest

pytest.importorskip("fastapi", reason="the hub needs the server extra: pip install 'chaja[server]'")
pytest.importorskip("uvicorn", reason="the hub needs the server extra: pip install 'chaja[server]'")

from chaja.loaders import load_paths  # noqa: E402

from hubs import CORPUS, READ_KEY, WRITE_KEY, start_hub, stop_hub  # noqa: E402
from judging_pools import make_pool  # noqa: E402


@pytest.fixture(scope="session")
def judging_root(tmp_path_factory):
    """The hubs' judging folders: ``keys`` (the hub with keys), ``open`` (the plain hub)."""
    root = tmp_path_factory.mktemp("judging")
    for name in ("keys", "open", "source"):
        (root / name).mkdir()
    return root


@pytest.fixture(scope="session")
def hub(tmp_path_factory, judging_root):
    root = tmp_path_factory.mktemp("hub")
    running = start_hub(root / "hub.chaja", root / "hub.log", [
        f"hub.judging={judging_root / 'keys'}",
        f"hub.api_keys={READ_KEY}", f"hub.write_keys={WRITE_KEY}", "hub.max_body_bytes=1000000",
        "hub.body_timeout_s=2", "hub.max_batch=50", "hub.readers=3",
        "search.reranker=e5-windows", "rerank.depth=0"])   # /v1/rerank served; searches not reranked
    running.writer.add_documents(load_paths([CORPUS]))
    yield running
    stop_hub(running)


@pytest.fixture(scope="session")
def plain_hub(tmp_path_factory, judging_root):
    """A hub with the defaults (no keys, no reranker, an empty store) and a judging folder."""
    root = tmp_path_factory.mktemp("plain")
    running = start_hub(root / "plain.chaja", root / "plain.log", [f"hub.judging={judging_root / 'open'}"])
    yield running
    stop_hub(running)


@pytest.fixture(scope="session")
def judging_pool(hub, judging_root):
    """A pool of the corpus (``chaja judge pool`` over two runs of the hub's searches),
    made once; tests copy it into a judging folder under a name of their own."""
    return make_pool(hub, judging_root / "source")
