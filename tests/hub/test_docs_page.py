"""The interactive API docs: served whole by the hub (no CDN), opened in headless Chromium.
A hub with keys serves the page and its assets to anyone (they hold no data) and asks for
a key in the page; its OpenAPI document still needs one."""
from __future__ import annotations

from browser import page_dom
from hubs import READ_KEY
from raw import call


def test_the_page_and_its_assets_come_from_the_hub(hub):
    status, page, _ = call(hub.url, "GET", "/docs")
    assert status == 200 and "/docs/assets/swagger-ui-bundle.js" in page
    assert "http://" not in page and "https://" not in page          # nothing fetched from elsewhere
    assert '"/v1/search"' not in page                                  # the page itself holds no API
    for name, kind in (("swagger-ui-bundle.js", "javascript"), ("swagger-ui.css", "css")):
        status, _, headers = call(hub.url, "GET", f"/docs/assets/{name}")
        assert status == 200 and kind in headers["content-type"]
    assert call(hub.url, "GET", "/docs/assets/../../etc/passwd")[0] == 404
    assert call(hub.url, "GET", "/docs/assets/index.html")[0] == 404
    assert call(hub.url, "GET", "/openapi.json")[0] == 401                # the document still needs a key
    assert call(hub.url, "GET", "/openapi.json", key=READ_KEY)[0] == 200


def test_with_keys_the_page_asks_for_one_before_it_reads_the_api(hub):
    dom = page_dom(hub.url + "/docs")
    assert 'id="key-form"' in dom and 'id="key-form" hidden' not in dom   # the key form is shown
    assert "/v1/search" not in dom                                           # nothing read without a key


def test_without_keys_the_page_shows_every_route_offline(plain_hub):
    dom = page_dom(plain_hub.url + "/docs")
    assert 'id="key-form" hidden' in dom
    for path in ("/v1/search", "/v1/documents", "/v1/embeddings", "/v1/models"):
        assert path in dom, path
