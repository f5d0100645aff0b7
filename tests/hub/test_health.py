"""The health routes (:mod:`chaja.hub.health`) of the real hub: /healthz and /readyz
need no key, and /readyz tells the encoder and a start-up error only to a caller with one."""
from __future__ import annotations

from hubs import READ_KEY
from raw import call


def test_health_routes_need_no_key(hub):
    assert call(hub.url, "GET", "/healthz")[:2] == (200, {"status": "ok"})
    assert call(hub.url, "GET", "/readyz")[:2] == (200, {"status": "ready"})      # no model names without a key
    assert call(hub.url, "GET", "/readyz", key="not-a-key")[:2] == (200, {"status": "ready"})
    status, body, _ = call(hub.url, "GET", "/readyz", key=READ_KEY)
    assert status == 200 and body["status"] == "ready" and "e5" in body["encoder"]


def test_readiness_says_little_without_a_key(tmp_path):
    """A hub that is loading, then failed: the reason only to a caller with a key."""
    from fastapi.testclient import TestClient

    from chaja.config import Config
    from chaja.hub.app import create_app
    from chaja.hub.state import Hub

    cfg = Config()
    cfg.hub.api_keys = [READ_KEY]
    hub = Hub(tmp_path / "loading.chaja", cfg)
    with TestClient(create_app(hub, own=False)) as web:
        got = web.get("/readyz")
        assert got.status_code == 503 and got.headers["retry-after"] == "1"
        assert got.json() == {"status": "loading", "detail": "not ready: the hub is loading its encoders"}
        hub.error = "OSError: no model multilingual-e5-small-q4 in /srv/models"
        for key in (None, "not-a-key"):
            got = web.get("/readyz", headers={"Authorization": f"Bearer {key}"} if key else {})
            assert got.status_code == 503 and got.json() == {"status": "failed", "detail": "not ready: start-up failed"}
        got = web.get("/readyz", headers={"Authorization": f"Bearer {READ_KEY}"})
        assert got.status_code == 503 and got.json()["error"] == hub.error and "e5" in got.json()["detail"]
