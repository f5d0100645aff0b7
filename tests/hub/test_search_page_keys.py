"""The search page at ``/`` typed into as a person would, in headless Chromium
(Playwright over Debian's chromium) against the real hubs: ``/`` finds the query box, a
Korean question and Enter put its page first; the language filter, chosen by the
keyboard, searches again, holds, and the URL carries the query and the filter; the
arrow keys and Enter open the document view with the matching passage marked, Esc
closes it. With keys the page asks for one once, and says so when the hub refuses it.
(axe-core's check of the search page is in ``test_judge_page.py``.)"""
from __future__ import annotations

import json
from urllib.parse import unquote, urlparse

import pytest

pytest.importorskip("playwright.sync_api", reason="the browser tests that type keys need Playwright: "
                                                  "pip install playwright (in the dev extra)")
from playwright.sync_api import expect  # noqa: E402

from chaja.loaders import load_paths  # noqa: E402
from browser import asked_and_refused, driven_chromium, new_page  # noqa: E402
from hubs import CORPUS, READ_KEY  # noqa: E402
from raw import call  # noqa: E402

QUESTION = "라우터 무선 비밀번호 변경"        # the router manual (English) answers it
ANSWER = "manuals/router"


@pytest.fixture(scope="module")
def browser():
    with driven_chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def open_hub(plain_hub):
    """The plain hub (no keys) holding the fixture corpus."""
    plain_hub.writer.add_documents(load_paths([CORPUS]))
    return plain_hub


def ask(page, question: str) -> None:
    """``/`` to the query box (from anywhere but a text box), the question typed, Enter;
    returns once the page has drawn this search's answer."""
    page.keyboard.press("/")
    expect(page.locator("#q")).to_be_focused()
    page.keyboard.type(question)                 # replaces what the box held: "/" selects it
    page.keyboard.press("Enter")
    drawn(page, question)


def drawn(page, question: str) -> None:
    expect(page.locator("#results")).to_have_attribute("aria-busy", "false")
    expect(page.locator("#status")).to_contain_text(f"“{question}”")


def shown(page) -> list[tuple[str, str]]:
    """(document id, language badge) of each result shown, in order."""
    return [tuple(x) for x in page.locator("#results > li").evaluate_all(
        "items => items.map(li => [li.dataset.doc, li.querySelector('.badge').textContent])")]


def address_holds(page, **params: str) -> None:
    """Wait until the address carries exactly ``params`` (the page updates it once the results are drawn)."""
    page.wait_for_function("want => JSON.stringify([...new URLSearchParams(location.search)].sort()) === want",
                           arg=json.dumps(sorted([k, v] for k, v in params.items()), ensure_ascii=False,
                                          separators=(",", ":")))


def test_typed_searches_filters_and_the_document_view(open_hub, browser):
    page = new_page(browser, open_hub.url + "/")
    expect(page.locator("#q")).to_be_focused()            # an empty page starts in the box
    page.evaluate("document.activeElement.blur()")        # as after a click elsewhere
    ask(page, QUESTION)
    found = shown(page)
    assert found[0] == (ANSWER, "en")                     # a Korean question, the English manual first
    assert "ko" in {lang for _, lang in found}            # unfiltered: Korean documents too
    address_holds(page, q=QUESTION)

    # the filter by the keyboard: Tab to the Filters summary, open it, Tab to the language, pick English
    page.locator("#search button[type=submit]").focus()
    page.keyboard.press("Tab")
    expect(page.locator("#filters > summary")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#filters")).to_have_attribute("open", "")
    page.keyboard.press("Tab")
    expect(page.locator("#lang")).to_be_focused()
    page.keyboard.press("ArrowDown")                       # any → 한국어
    page.keyboard.press("ArrowDown")                       # → English: each a search; only the last one drawn
    expect(page.locator("#lang")).to_have_value("en")
    drawn(page, QUESTION)
    filtered = shown(page)
    assert filtered and filtered[0][0] == ANSWER and all(lang == "en" for _, lang in filtered)
    assert len(filtered) < len(found)
    address_holds(page, q=QUESTION, lang="en")                     # the address shares the search

    # the shared address opens the same search in another tab
    other = new_page(browser, page.url)
    drawn(other, QUESTION)
    assert shown(other) == filtered and other.locator("#lang").input_value() == "en"
    other.context.close()

    # the arrow keys to a result, Enter opens it; its passages with the matching one marked
    page.keyboard.press("/")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#r0")).to_be_focused()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowUp")
    expect(page.locator("#r1")).to_be_focused()
    expect(page.locator("#r1")).to_have_class("current")
    page.keyboard.press("ArrowUp")
    expect(page.locator("#r0")).to_have_class("current")
    page.keyboard.press("Enter")
    view = page.locator("#doc")
    expect(view).to_be_visible()
    status, answer, _ = call(open_hub.url, "POST", "/v1/search", {"query": QUESTION, "k": 10, "filters": {"lang": "en"}})
    chunk = answer["results"][0]["chunk_id"]
    status, doc, _ = call(open_hub.url, "GET", "/v1/documents/" + ANSWER.replace("/", "%2F"))
    assert status == 200
    expect(view.locator("h2")).to_have_text(doc["title"])
    expect(view.locator("section")).to_have_count(len(doc["chunk_list"]))
    marked = view.locator("section.matched")
    expect(marked).to_have_count(1)
    expect(marked).to_have_attribute("id", f"c-{chunk}")
    expect(marked).to_have_attribute("aria-current", "true")
    expect(marked).to_be_in_viewport()
    assert unquote(urlparse(page.url).fragment) == f"doc={ANSWER}"

    page.keyboard.press("Escape")                          # closed: back on its result, the address without it
    expect(view).to_be_hidden()
    expect(page.locator("#r0")).to_be_focused()
    assert urlparse(page.url).fragment == ""

    ask(page, "에스프레소 석회 제거")                       # "/" again from the results: a new question
    expect(page.locator("#q")).to_have_value("에스프레소 석회 제거")
    assert shown(page)[0][0] == "manuals/espresso-machine"
    address_holds(page, q="에스프레소 석회 제거", lang="en")
    page.context.close()


def test_with_keys_the_page_asks_once_and_says_when_a_key_is_refused(hub, browser):
    page = new_page(browser, hub.url + "/")
    expect(page.locator("#key-form")).to_be_hidden()       # nothing asked before a search
    page.keyboard.type(QUESTION)
    page.keyboard.press("Enter")
    asked_and_refused(page)
    expect(page.locator("#key-form")).to_be_visible()
    expect(page.locator("#key")).to_have_value("")
    assert page.locator("#results > li").count() == 0
    page.keyboard.type(READ_KEY)
    page.keyboard.press("Enter")
    drawn(page, QUESTION)
    expect(page.locator("#key-form")).to_be_hidden()
    assert shown(page)[0][0] == ANSWER

    page.keyboard.press("ArrowDown")                       # the document view reads with the key too
    page.keyboard.press("Enter")
    expect(page.locator("#doc section.matched")).to_have_count(1)
    ask(page, "wireless password")                         # asked once: the next search just runs
    expect(page.locator("#key-form")).to_be_hidden()
    assert shown(page)[0][0] == ANSWER
    page.context.close()


def test_the_korean_interface_says_a_refused_key_in_korean(hub, browser):
    page = new_page(browser, hub.url + "/?q=" + "x", locale="ko-KR", key="not-a-key")
    expect(page.locator("#key-form")).to_be_visible()
    expect(page.locator("#status")).to_have_text("허브가 이 키를 거부했습니다. 다른 키를 입력하세요.")
    page.context.close()
