"""What the search page adds to a search: the same questions through a plain HTTP
client and typed into the page in headless Chromium, interleaved.

A real hub (``chaja serve``, in its own process) over the React docs store; for each of
``--n`` questions of the React natural test split (evenly spaced, so all four language
pairs are in), six ways, in an order that rotates question by question, each after a
pause (``--settle``, 0.1 s: a person reads before asking again; without it one way's
leftover work, the browser painting the last results, lands on the next):

- **client**: ``POST /v1/search`` with the body the page sends (``{"query": q, "k": 10}``,
  compact JSON, ``Content-Type: application/json``) over one keep-alive connection,
  timed in Python from the request to the parsed JSON;
- **page**: the search page at ``/`` in headless Chromium (Playwright over Debian's
  ``chromium``): ``/`` to the query box, the question typed, then Enter, timed in the
  page from the Enter key's event time (``event.timeStamp``: when the browser took the
  key) to the moment this search's results are in the DOM (the page sets
  ``aria-busy="false"`` on ``#results`` once it has drawn them; a MutationObserver
  notes the time; for a page without that, when the list is redrawn). Also noted: the next animation frame after that (when the browser
  would paint), and the time the driver sees, from before ``keyboard.press`` to its
  wait for the page's answer returning (Playwright's round trips included; no polling);
- **browser fetch**: the same request by ``fetch()`` in the page's tab, none of the
  page's code (``page.evaluate``), timed in the page to the parsed JSON: what any page
  pays for the browser's own networking;
- **bare page**: a page of a form, ``fetch()`` and a plain list (no styles, no
  highlighting, no why line), typed into and timed as the search page is: the floor for
  any page a person types a question into (served in place of ``/`` by Playwright, so
  it is on the hub's origin);
- **floors**: ``GET /readyz`` (the hub's smallest answer) from the plain client and by
  ``fetch()`` in the tab: what this browser adds to any request, however small.

One untimed pass over every question (every way) first. Reported: median and p95 of
each way, the median over questions of page ÷ client, the overhead (page p50 ÷ client
p50 − 1), and where the difference goes (browser fetch − client: the browser's
networking; bare page − browser fetch: a key press and a page drawn; page − bare page:
this page's own code). The page's requests are counted too (one ``POST /v1/search`` per
search, with the client's body, is what it should send).

    python benchmarks/bench_search_page.py                    # --n 40 --settle 0.1 --store STORE
    python benchmarks/bench_search_page.py --page old.html --out search-page-before   # another version of the page
    python benchmarks/bench_search_page.py --pin --out search-page-pinned   # the hub on a CPU of its own

Needs the ``server`` extra, Playwright and a Chromium (``chromium``; ``CHAJA_CHROMIUM``
names another). Results: ``benchmarks/results/search-page.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from machine import describe, write_results  # noqa: E402
import hub_process  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
QUESTIONS = HERE / "questions" / "natural" / "react-natural-test.jsonl"
STORES = [ROOT / "runs" / "quality" / "encoding" / "int8" / "react.chaja", ROOT / "runs" / "quality" / "react.chaja"]

# set up in a tab before its page's script: the Enter key's time, and when the results are drawn;
# __bench.wait settles then (the driver awaits it: no polling, which would make the page draw frames)
PROBE = """
window.__bench = {t0: 0, dom: 0, wait: null, done: null};
addEventListener("keydown", function (e) {
  if (e.key === "Enter" && e.target && e.target.id === "q") {
    __bench.t0 = e.timeStamp; __bench.dom = 0;
    __bench.wait = new Promise(function (resolve) { __bench.done = resolve; });
  }
}, true);
document.addEventListener("DOMContentLoaded", function () {
  var list = document.getElementById("results");
  new MutationObserver(function () {       // the list marked done or (a page without aria-busy) redrawn
    if (list.getAttribute("aria-busy") === "true" || !__bench.t0 || __bench.dom) return;
    var done = __bench.done;
    __bench.dom = performance.now();
    requestAnimationFrame(function () { done([__bench.t0, __bench.dom, performance.now()]); });
  }).observe(list, {childList: true, attributes: true, attributeFilter: ["aria-busy"]});
});
"""

# the same request by fetch(), none of a page's code
FETCH = """async (q) => {
  const t = performance.now();
  const res = await fetch("/v1/search", {method: "POST", headers: {"Content-Type": "application/json"},
                                         body: JSON.stringify({query: q, k: 10})});
  const data = await res.json();
  return [performance.now() - t, data.results.length];
}"""

# any request's floor: the smallest answer the hub gives, by fetch() in the tab
FLOOR = """async () => {
  const t = performance.now();
  const res = await fetch("/readyz");
  await res.json();
  return performance.now() - t;
}"""

# the least a page a question is typed into can do: a form, fetch() and a plain list
BARE = """<!doctype html><html lang="en"><meta charset="utf-8"><title>bare</title>
<form id="search"><input id="q" aria-label="question"></form><ol id="results" aria-busy="false"></ol>
<script>
document.getElementById("search").addEventListener("submit", function (e) {
  e.preventDefault();
  fetch("/v1/search", {method: "POST", headers: {"Content-Type": "application/json"},
                       body: JSON.stringify({query: document.getElementById("q").value.trim(), k: 10})})
    .then(function (res) { return res.json(); })
    .then(function (data) {
      var list = document.getElementById("results");
      list.textContent = "";
      data.results.forEach(function (r) {
        var li = document.createElement("li");
        li.dataset.doc = r.doc_id; li.textContent = (r.title || r.doc_id) + ": " + r.snippet;
        list.append(li);
      });
      list.setAttribute("aria-busy", "false");
    });
});
</script></html>"""


def pct(values: list[float], p: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))] if s else float("nan")


def summary(ms: list[float]) -> dict:
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 2), "p95_ms": round(pct(ms, 95), 2),
            "mean_ms": round(statistics.fmean(ms), 2)}


def questions(n: int) -> tuple[list[str], int]:
    """``n`` question texts evenly spaced through the file (field ``text``, or ``question``), and the step."""
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    texts = [(r.get("text") or r.get("question") or "").strip() for r in rows]
    texts = [t for t in texts if t]
    step = max(1, len(texts) // n)
    return texts[::step][:n], step


def chromium() -> str:
    for name in (os.environ.get("CHAJA_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise SystemExit("no Chromium: install Debian's chromium package or set CHAJA_CHROMIUM")


def start_hub(store: Path, log: Path, cpus: set[int] | None = None) -> tuple[subprocess.Popen, str, int]:
    env = {k: v for k, v in os.environ.items() if k not in ("CHAJA_API_KEYS", "CHAJA_WRITE_KEYS")}
    return hub_process.start_hub(store, log, env=env, cpus=cpus)


def pinning(pin: bool) -> tuple[set[int] | None, set[int] | None]:
    """With ``pin``: (the hub's CPUs, this script's and the browser's CPUs), the first CPU
    for the hub and the rest for the rest, as when a person's browser runs on their own
    machine; without, (None, None): everything shares every CPU."""
    if not pin:
        return None, None
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise SystemExit("--pin needs at least two CPUs")
    return {cpus[0]}, set(cpus[1:])


class Client:
    """The plain client: one keep-alive connection, the page's body."""

    def __init__(self, host: str, port: int):
        self.conn = http.client.HTTPConnection(host, port, timeout=120)

    @staticmethod
    def body(q: str) -> bytes:
        return json.dumps({"query": q, "k": 10}, ensure_ascii=False, separators=(",", ":")).encode()

    def search(self, q: str) -> tuple[float, dict]:
        body = self.body(q)
        t = time.perf_counter()
        self.conn.request("POST", "/v1/search", body, {"Content-Type": "application/json"})
        resp = self.conn.getresponse()
        data = json.loads(resp.read())
        ms = (time.perf_counter() - t) * 1000
        if resp.status != 200:
            raise SystemExit(f"the hub answered {resp.status}: {data}")
        return ms, data

    def floor(self, q: str = "") -> float:
        """``GET /readyz`` (the smallest answer the hub gives): ms to the parsed JSON."""
        t = time.perf_counter()
        self.conn.request("GET", "/readyz")
        json.loads(self.conn.getresponse().read())
        return (time.perf_counter() - t) * 1000

    def get(self, path: str) -> dict:
        self.conn.request("GET", path)
        resp = self.conn.getresponse()
        data = json.loads(resp.read())
        return data if resp.status == 200 else {}


class Tab:
    """A page in a browser tab of its own, typed into: the search page, or ``html`` served in its place."""

    def __init__(self, browser, url: str, html: str | None = None, bare: bool = False):
        self.context = browser.new_context(locale="en-US", viewport={"width": 1000, "height": 900})
        self.context.add_init_script(PROBE)
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.bare = bare
        if html is not None:
            self.page.route(url + "/", lambda route: route.fulfill(status=200, content_type="text/html", body=html))
        self.requests: list[tuple[str, str, str | None]] = []
        self.page.on("request", lambda r: self.requests.append((r.method, r.url, r.post_data)))
        self.page.goto(url + "/")
        self.page.wait_for_selector("#q")

    def search(self, q: str) -> dict:
        page = self.page
        page.evaluate("document.activeElement.blur()")   # as after reading the last results
        if self.bare:
            page.focus("#q")
            page.keyboard.press("Control+A")
        else:
            page.keyboard.press("/")                     # the query box, its text selected
        page.keyboard.type(q)
        if page.input_value("#q") != q:
            raise SystemExit(f"the box holds {page.input_value('#q')!r}, not {q!r}")
        self.requests.clear()
        t = time.perf_counter()
        page.keyboard.press("Enter")
        t0, dom, frame = page.evaluate("__bench.wait")
        driver = (time.perf_counter() - t) * 1000
        docs = page.locator("#results > li").evaluate_all("items => items.map(li => li.dataset.doc)")
        return {"dom_ms": dom - t0, "frame_ms": frame - t0, "driver_ms": driver, "docs": docs,
                "requests": list(self.requests)}

    def floor(self, q: str = "") -> float:
        """``GET /readyz`` by ``fetch()`` in this tab: ms to the parsed JSON."""
        return self.page.evaluate(FLOOR)

    def fetch(self, q: str) -> float:
        """The same request by ``fetch()`` in this tab, none of the page's code: ms to the parsed JSON."""
        ms, _ = self.page.evaluate(FETCH, q)
        return ms


def sharing(pinned: dict | None) -> str:
    """How the processes shared the machine's CPUs."""
    if not pinned:
        return "The hub, Chromium and the benchmark share the cores."
    return (f"Pinned: the hub on CPU {', '.join(map(str, pinned['hub']))}; the benchmark's client, the Playwright "
            f"driver and Chromium on CPU {', '.join(map(str, pinned['script_and_browser']))} (the browser does not "
            "take the hub's CPU, as on a person's own machine; the hub has one core, not two).")


def markdown(report: dict) -> str:
    m, r = report["machine"], report["results"]
    rows = [("plain client: `POST /v1/search` → parsed JSON", r["client"]),
            ("**search page**: Enter → results in the DOM", r["page_dom"]),
            ("search page: Enter → the next frame after that", r["page_frame"]),
            ("search page, as the driver sees it (Playwright's round trips included)", r["page_driver"]),
            ("browser fetch: the same request by `fetch()` in the tab, no page code", r["browser_fetch"]),
            ("bare page (a form, `fetch()`, a plain list): Enter → results in the DOM", r["bare_dom"]),
            ("any request's floor, plain client: `GET /readyz` → parsed JSON", r["client_floor"]),
            ("any request's floor, browser: `GET /readyz` by `fetch()` in the tab", r["browser_floor"])]
    d = r["where_ms"]
    lines = [
        "# What the search page costs a search",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}; load average before the run "
        f"{', '.join(f'{x:.2f}' for x in m['load_average'] or [])}, after "
        f"{', '.join(f'{x:.2f}' for x in report['load_average_after'] or [])}. " + sharing(m.get("pinned")),
        f"Store: `{report['store']}` ({report['documents']} documents); {report['n']} questions of "
        f"`{report['questions']}` (every {report['step']}th: all four language pairs), one untimed pass first, then "
        f"each question once each way, the order rotating question by question, {report['settle_s']} s of pause "
        "before each timed search.",
        *([f"The search page: `{report['page']}`, served at `/` in place of the hub's."]
          if report["page"] != "the hub's" else []),
        "",
        "| | p50 ms | p95 ms | mean ms |",
        "|---|---|---|---|",
    ]
    lines += [f"| {name} | {s['p50_ms']} | {s['p95_ms']} | {s['mean_ms']} |" for name, s in rows]
    lines += [
        "",
        f"- overhead, search page p50 ÷ client p50 − 1: **{r['overhead_pct']:+.1f}%** (target: at most +10%); "
        f"median over questions of page ÷ client: ×{r['ratio_median']}; to the next frame: "
        f"{r['overhead_frame_pct']:+.1f}%",
        f"- where the {d['page_over_client']} ms go (differences of p50s): the browser's networking (browser fetch "
        f"− client) {d['browser_networking']} ms; a key press and a page drawn (bare page − browser fetch) "
        f"{d['key_and_drawing']} ms; this page's own code (search page − bare page) **{d['page_code']} ms** "
        f"(search page p50 ÷ bare page p50 − 1: {r['page_over_bare_pct']:+.1f}%)",
        f"- what this browser adds to any request, however small (browser floor − client floor): "
        f"{d['browser_floor']} ms; the search page against the same search by `fetch()` from the same tab: "
        f"{r['page_over_browser_fetch_pct']:+.1f}%",
        f"- requests the page sent per search: {report['page_requests_per_search']} "
        f"(the same body as the client's: {report['same_body']}); the same documents in the same order as the "
        f"client for {report['same_results']} of {report['n']} questions",
        "",
        "The pages' times are taken in the page: from the Enter key's event time to the moment the page has put "
        "this search's results into the DOM (before layout and paint); \"the next frame\" waits for the "
        "`requestAnimationFrame` after that (headless Chromium draws up to 60 frames a second). The client's are "
        "taken in Python, from sending the request to the parsed JSON.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", type=Path, help="default: " + ", else ".join(str(s.relative_to(ROOT)) for s in STORES))
    ap.add_argument("--n", type=int, default=40, help="questions (default 40)")
    ap.add_argument("--settle", type=float, default=0.1, help="seconds of pause before each timed search (0.1)")
    ap.add_argument("--page", type=Path, help="serve this file at / in place of the hub's search page "
                                              "(another version of pages/search.html, to compare)")
    ap.add_argument("--pin", action="store_true",
                    help="the hub on the first CPU, this script and Chromium on the others (the browser "
                         "does not take the hub's CPU, as on a person's own machine)")
    ap.add_argument("--out", default="search-page", help="results stem under benchmarks/results/")
    args = ap.parse_args(argv)
    store = args.store or next((s for s in STORES if s.exists()), None)
    if store is None or not Path(store).exists():
        print(f"skipped: no store ({args.store or ' or '.join(str(s) for s in STORES)}); "
              "benchmarks/bench_quality.py --sets react builds runs/quality/react.chaja", file=sys.stderr)
        return 0
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("skipped: Playwright is not installed (pip install playwright; the dev extra)", file=sys.stderr)
        return 0
    exe = chromium()
    qs, step = questions(args.n)
    print(f"{len(qs)} questions; store {store}", file=sys.stderr)
    machine = describe()

    hub_cpus, own_cpus = pinning(args.pin)
    with tempfile.TemporaryDirectory() as tmp:
        proc, host, port = start_hub(Path(store), Path(tmp) / "hub.log", hub_cpus)
        if own_cpus:
            os.sched_setaffinity(0, own_cpus)        # this script, and the browser it starts
        machine["pinned"] = {"hub": sorted(hub_cpus), "script_and_browser": sorted(own_cpus)} if own_cpus else None
        url = f"http://{host}:{port}"
        try:
            client = Client(host, port)
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox", "--disable-gpu",
                                                                       "--disable-dev-shm-usage"])
                versions = {"chromium": browser.version, "playwright": metadata.version("playwright")}
                try:
                    page = Tab(browser, url, args.page.read_text(encoding="utf-8") if args.page else None)
                    bare = Tab(browser, url, BARE, bare=True)
                    ways = {"client": client.search, "page": page.search, "fetch": page.fetch, "bare": bare.search,
                            "client_floor": client.floor, "browser_floor": page.floor}
                    for q in qs:                                      # warm-up, untimed
                        for way in ways.values():
                            way(q)
                    print("warmed up", file=sys.stderr)
                    rows = []
                    for i, q in enumerate(qs):
                        order = list(ways)[i % len(ways):] + list(ways)[:i % len(ways)]
                        timed: dict = {}
                        for way in order:
                            time.sleep(args.settle)
                            timed[way] = ways[way](q)
                        (c_ms, data), got, f_ms, b = timed["client"], timed["page"], timed["fetch"], timed["bare"]
                        searches = [r for r in got["requests"] if r[1].endswith("/v1/search")]
                        rows.append({"question": q, "order": order, "client_ms": round(c_ms, 3),
                                     "page_dom_ms": round(got["dom_ms"], 3), "page_frame_ms": round(got["frame_ms"], 3),
                                     "page_driver_ms": round(got["driver_ms"], 3), "browser_fetch_ms": round(f_ms, 3),
                                     "bare_dom_ms": round(b["dom_ms"], 3), "page_requests": len(got["requests"]),
                                     "client_floor_ms": round(timed["client_floor"], 3),
                                     "browser_floor_ms": round(timed["browser_floor"], 3),
                                     "same_body": len(searches) == 1 and searches[0][0] == "POST"
                                     and (searches[0][2] or "").encode() == Client.body(q),
                                     "same_results": got["docs"] == [d["doc_id"] for d in data["results"]]})
                        print(f"  {i + 1}/{len(qs)} client {c_ms:.1f} ms, page {got['dom_ms']:.1f} ms, "
                              f"browser fetch {f_ms:.1f} ms, bare page {b['dom_ms']:.1f} ms", file=sys.stderr)
                finally:
                    browser.close()
            stats = client.get("/v1/stats")
        finally:
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()

    col = {k: [r[k] for r in rows] for k in ("client_ms", "page_dom_ms", "page_frame_ms", "page_driver_ms",
                                              "browser_fetch_ms", "bare_dom_ms", "client_floor_ms",
                                              "browser_floor_ms")}
    results = {
        "client": summary(col["client_ms"]), "page_dom": summary(col["page_dom_ms"]),
        "page_frame": summary(col["page_frame_ms"]), "page_driver": summary(col["page_driver_ms"]),
        "browser_fetch": summary(col["browser_fetch_ms"]), "bare_dom": summary(col["bare_dom_ms"]),
        "client_floor": summary(col["client_floor_ms"]), "browser_floor": summary(col["browser_floor_ms"]),
        "ratio_median": round(statistics.median(p / c for p, c in zip(col["page_dom_ms"], col["client_ms"])), 3),
    }
    p50 = {k: v["p50_ms"] for k, v in results.items() if isinstance(v, dict)}
    results["overhead_pct"] = round((p50["page_dom"] / p50["client"] - 1) * 100, 1)
    results["overhead_frame_pct"] = round((p50["page_frame"] / p50["client"] - 1) * 100, 1)
    results["page_over_bare_pct"] = round((p50["page_dom"] / p50["bare_dom"] - 1) * 100, 1)
    results["where_ms"] = {"page_over_client": round(p50["page_dom"] - p50["client"], 2),
                           "browser_networking": round(p50["browser_fetch"] - p50["client"], 2),
                           "key_and_drawing": round(p50["bare_dom"] - p50["browser_fetch"], 2),
                           "page_code": round(p50["page_dom"] - p50["bare_dom"], 2),
                           "browser_floor": round(p50["browser_floor"] - p50["client_floor"], 2)}
    # the page against the same search asked from the same browser with no page code at all
    results["page_over_browser_fetch_pct"] = round((p50["page_dom"] / p50["browser_fetch"] - 1) * 100, 1)
    per_search = sorted({r["page_requests"] for r in rows})
    resolved = Path(store).resolve()
    report = {
        "benchmark": "bench_search_page", "machine": machine,
        "load_average_after": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "store": str(resolved.relative_to(ROOT)) if resolved.is_relative_to(ROOT) else str(store),
        "documents": stats.get("documents"), "questions": str(QUESTIONS.relative_to(ROOT)), "n": len(rows),
        "step": step, "settle_s": args.settle, "chromium": exe, "versions": versions, "page": str(args.page) if args.page else "the hub's",
        "page_requests_per_search": per_search[0] if len(per_search) == 1 else per_search,
        "same_body": all(r["same_body"] for r in rows), "same_results": sum(r["same_results"] for r in rows),
        "results": results, "questions_timed": rows,
    }
    write_results(args.out, report, markdown(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
