"""The search page at ``/``, driven in headless Chromium against real hubs: a Korean
question finds its page first, a language filter holds, a shared link opens the document
view with the matching passage marked, the interface follows the browser's language, and
a hub with keys asks for one before it searches."""
from __future__ import annotations

import re
from html import unescape
from urllib.parse import quote

import pytest

from chaja.loaders import load_paths
from browser import page_dom
from hubs import CORPUS
from raw import call


def results(page: str) -> list[tuple[str, str]]:
    """(document id, language badge) of each result the page shows, in order."""
    items = re.findall(r'<li id="r\d+" data-doc="([^"]*)".*?<span class="badge"[^>]*>([^<]*)</span>', page, re.S)
    return [(unescape(d), lang) for d, lang in items]


@pytest.fixture(scope="module")
def open_hub(plain_hub):
    """The plain hub (no keys) holding the fixture corpus."""
    plain_hub.writer.add_documents(load_paths([CORPUS]))
    return plain_hub


def test_the_page_is_one_file_the_hub_serves(hub):
    status, page, headers = call(hub.url, "GET", "/")
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert "http://" not in page and "https://" not in page           # nothing loaded from elsewhere
    assert "/v1/search" in page and 'role="search"' in page
    status, script, headers = call(hub.url, "GET", "/pages/hub-key.js")    # the key handling both pages share
    assert status == 200 and "javascript" in headers["content-type"] and "sessionStorage" in script
    assert call(hub.url, "GET", "/pages/search.html")[0] == 404           # only what a page loads is served


def test_a_korean_question_finds_its_page_first(open_hub):
    page = page_dom(open_hub.url + "/?q=" + quote("라우터 무선 비밀번호 변경"))
    found = results(page)
    assert found and found[0][0] == "manuals/router"
    assert "<mark>" in page                                         # the question's terms highlighted
    assert "why —" in page and "fused" in page and "vector #" in page


def test_the_language_filter_holds_and_the_url_carries_it(open_hub):
    page = page_dom(open_hub.url + "/?q=" + quote("정비 안내") + "&lang=ko")
    found = results(page)
    assert found and all(lang == "ko" for _, lang in found)
    assert 'value="ko" selected' in page or re.search(r'<details id="filters" open', page)


def test_a_shared_link_opens_the_document_with_its_passage_marked(open_hub):
    page = page_dom(open_hub.url + "/?q=" + quote("wireless password") + "#doc=" + quote("manuals/router", safe=""))
    assert results(page)[0][0] == "manuals/router"
    view = page[page.index('<section id="doc"'):]
    assert 'hidden=""' not in view.split(">", 1)[0]                  # the document view is open
    assert re.search(r'<section id="c-manuals/router#\d+" class="matched" aria-current="true"', view)


def test_the_interface_follows_the_browsers_language(open_hub):
    korean = page_dom(open_hub.url + "/?q=" + quote("wireless password"), "--lang=ko-KR", "--accept-lang=ko-KR")
    assert '<html lang="ko"' in korean and ">검색<" in korean and "근거 —" in korean
    english = page_dom(open_hub.url + "/?q=" + quote("wireless password"), "--lang=en-US", "--accept-lang=en-US")
    assert '<html lang="en"' in english and ">Search<" in english


def test_with_keys_the_page_asks_for_one_before_it_searches(hub):
    page = page_dom(hub.url + "/?q=" + quote("라우터 무선 비밀번호 변경"))
    assert re.search(r'<form id="key-form">', page)                   # shown: no hidden attribute
    assert "This hub needs an API key." in page
    assert results(page) == []
