"""Headless Chromium for the hub's page tests: the DOM of a page once its scripts ran
(:func:`page_dom`), or a browser to drive, keys and all (:func:`driven_chromium`,
Playwright over the same Chromium), a page of its own in it (:func:`new_page`) and
axe-core's verdict on a page (:func:`serious`)."""
from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator

import pytest

NO_BROWSER = ("no headless browser: install Debian's chromium package (apt-get install chromium) "
              "or set CHAJA_CHROMIUM")


def chromium() -> str:
    """Debian's ``chromium``, or the browser ``$CHAJA_CHROMIUM`` names; skips the test where there is none."""
    exe = next((shutil.which(n) for n in (os.environ.get("CHAJA_CHROMIUM"), "chromium", "chromium-browser",
                                          "google-chrome") if n and shutil.which(n)), None)
    if exe is None:
        pytest.skip(NO_BROWSER)
    return exe


def page_dom(url: str, *flags: str, budget_ms: int = 10_000) -> str:
    """The DOM of ``url`` after ``budget_ms`` of virtual time."""
    done = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--no-first-run", f"--virtual-time-budget={budget_ms}", *flags, "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    return done.stdout


@contextlib.contextmanager
def driven_chromium() -> Iterator[object]:
    """A Playwright browser over the Chromium :func:`chromium` finds (Playwright's own
    browser download is not needed); skips where Playwright or Chromium is missing."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="the browser tests that type keys need Playwright: "
                                                                 "pip install playwright (in the dev extra)")
    exe = chromium()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu",
                                                               "--disable-dev-shm-usage"])
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser, url: str, locale: str = "en-US", width: int = 1000, height: int = 900, key: str | None = None):
    """A page in a fresh browser context (a tab session of its own), opened at ``url``."""
    context = browser.new_context(locale=locale, viewport={"width": width, "height": height})
    if key:
        context.add_init_script(f"sessionStorage.setItem('chaja-hub-key', {json.dumps(key)})")
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(url)
    return page


def serious(page) -> list[str]:
    """axe-core's serious and critical violations on the page (axe from the axe-playwright-python package)."""
    axe = pytest.importorskip("axe_playwright_python.sync_playwright",
                              reason="the accessibility check needs axe-playwright-python (in the dev extra)")
    found = axe.Axe().run(page).response["violations"]
    return [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
            for v in found if v["impact"] in ("serious", "critical")]


def asked_and_refused(page) -> None:
    """The page asks for the hub's key (the form shown, its box focused); a wrong key typed
    there is refused, said, and asked for again."""
    from playwright.sync_api import expect

    expect(page.locator("#key-form")).to_be_visible()
    expect(page.locator("#status")).to_have_text("This hub needs an API key.")
    expect(page.locator("#key")).to_be_focused()
    page.keyboard.type("not-a-key")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text("The hub refused that key. Enter another.")
    expect(page.locator("#key")).to_be_focused()
