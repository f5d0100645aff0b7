"""The HTML report opened in a real headless Chromium (the system's ``chromium``): it
renders, its numbers are the summary's, its question filter runs, and it draws."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from chaja.cli import main
from chaja.eval.questions import Question
from chaja.eval.report import read_records
from chaja.eval.runner import evaluate
from chaja.eval.single import METRICS

QUESTIONS = [("q1", "자기주식 소각 결정", "filings/share-cancellation", "ko-ko"),
             ("q2", "유상증자 발행가액", "filings/rights-issue", "ko-ko"),
             ("q3", "how do I descale the espresso machine", "manuals/espresso-machine", "en-en"),
             ("q4", "wireless password", "manuals/router", "en-en"),
             ("q5", "라우터 무선 비밀번호 바꾸기", "manuals/router", "ko-en"),
             ("q6", "bicycle chain lubricant", "manuals/bicycle", "en-ko"),
             # gold is a page the question is not about, so the run misses it: the drill-down's case
             ("q7", "base rate inflation", "manuals/notes", "en-en")]


def chromium() -> str | None:
    for name in (os.environ.get("CHAJA_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def browser(*args: str) -> subprocess.CompletedProcess:
    exe = chromium()
    if exe is None:
        pytest.skip("no headless browser: install Debian's chromium package (apt-get install chromium) "
                    "or set CHAJA_CHROMIUM")
    return subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--no-first-run", "--hide-scrollbars", *args], capture_output=True, text=True, timeout=120)


class Cells(HTMLParser):
    """data-value cells by table id and row, the questions shown, and inline SVGs."""

    def __init__(self):
        super().__init__()
        self.table = self.row = None
        self.values: dict[tuple, str] = {}
        self.texts: dict[tuple, str] = {}
        self.hidden_questions = self.questions = self.svgs = 0
        self.shown = None
        self._cell = self._in_shown = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("id")
        elif tag == "tr":
            self.row = a.get("data-row")
            if "question" in (a.get("class") or ""):
                self.questions += 1
                self.hidden_questions += "display: none" in (a.get("style") or "")
        elif tag == "td" and "data-metric" in a:
            self._cell = (self.table, self.row, a["data-metric"])
            self.values[self._cell] = a["data-value"]
        elif tag == "svg":
            self.svgs += 1
        elif tag == "span" and a.get("id") == "shown":
            self._in_shown = True

    def handle_data(self, data):
        if self._cell:
            self.texts[self._cell] = data.strip()
            self._cell = None
        if self._in_shown:
            self.shown = int(data)
            self._in_shown = False


@pytest.fixture(scope="module")
def report(corpus_index, tmp_path_factory):
    root = tmp_path_factory.mktemp("html")
    questions = [Question(id=i, text=t, gold=[g], kind=k, lang=k[:2]) for i, t, g, k in QUESTIONS]
    evaluate(corpus_index, questions, root / "run", name="fixture run", stream=None)
    out = root / "report.html"
    assert main(["eval", "report", str(root / "run"), "--html", str(out)]) == 0
    return root / "run", out


def dom(url: str) -> Cells:
    done = browser("--virtual-time-budget=3000", "--dump-dom", url)
    assert done.returncode == 0 and "<html" in done.stdout, done.stderr[-2000:]
    cells = Cells()
    cells.feed(done.stdout)
    return cells


def test_the_rendered_numbers_are_the_summarys(report):
    run, out = report
    summary = json.loads((run / "summary.json").read_text())
    text = out.read_text(encoding="utf-8")
    outside = text.replace('xmlns="http://www.w3.org/2000/svg"', "")      # a namespace name, not a fetch
    assert "http://" not in outside and "https://" not in outside and "src=" not in outside   # self-contained
    page = dom(out.as_uri())
    for m in METRICS:
        assert float(page.values[("summary", "fixture run", m)]) == summary["metrics"][m]
        assert page.texts[("summary", "fixture run", m)] == f"{summary['metrics'][m]:.3f}"
    for kind, group in summary["by_kind"].items():
        for m in METRICS:
            assert float(page.values[("by-kind", kind, m)]) == group["metrics"][m]
    assert page.questions == len(QUESTIONS) and page.shown == len(QUESTIONS) and page.hidden_questions == 0
    assert page.svgs == 2                                    # the run's metrics, and nDCG@10 by kind


def test_the_misses_filter_runs_in_the_browser(report):
    run, out = report
    _, records = read_records(run)
    misses = sum(1 for r in records if r["gold"][0] not in r["ranked"][:3])
    assert misses >= 1
    page = dom(out.as_uri() + "#misses")
    assert page.shown == misses and page.hidden_questions == len(QUESTIONS) - misses


def test_it_draws(report, tmp_path):
    _, out = report
    shot = tmp_path / "report.png"
    done = browser("--window-size=1200,1600", f"--screenshot={shot}", out.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    from PIL import Image

    img = Image.open(shot).convert("L")
    assert img.size == (1200, 1600)
    lo, hi = img.getextrema()
    assert hi - lo > 100                                     # text and bars, not a blank page
