"""Headless Chromium for the hub's page tests: the DOM of a page once its scripts ran."""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest


def page_dom(url: str, *flags: str, budget_ms: int = 10_000) -> str:
    """The DOM of ``url`` after ``budget_ms`` of virtual time (Debian's ``chromium``, or the
    browser ``$CHAJA_CHROMIUM`` names); skips the test where there is none."""
    exe = next((shutil.which(n) for n in (os.environ.get("CHAJA_CHROMIUM"), "chromium", "chromium-browser",
                                          "google-chrome") if n and shutil.which(n)), None)
    if exe is None:
        pytest.skip("no headless browser: install Debian's chromium package (apt-get install chromium) "
                    "or set CHAJA_CHROMIUM")
    done = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--no-first-run", f"--virtual-time-budget={budget_ms}", *flags, "--dump-dom", url],
                          capture_output=True, text=True, timeout=120)
    return done.stdout
