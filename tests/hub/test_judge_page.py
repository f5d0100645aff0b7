"""The judging page at ``/judge``, driven by the keyboard in headless Chromium
(Playwright over Debian's chromium) against the real hubs: two judges grade the same
pairs with single keys, one disagreement; a reload resumes where the judge was; the
adjudicator sees the disputed pair; ``chaja judge agreement`` and ``reference`` read the
files the page saved. With keys the page asks for a read key, then for a write key when
a grade is refused. axe-core finds no serious or critical problem on this page or on the
search page.

With ``CHAJA_SCREENSHOTS=DIR`` the last test also saves the screenshots docs/web.md
shows (``CHAJA_SCREENSHOTS=docs/images``)."""
from __future__ import annotations

import json
import re
import os
from pathlib import Path
from urllib.parse import quote

import pytest

pytest.importorskip("playwright.sync_api", reason="the browser tests that type keys need Playwright: "
                                                  "pip install playwright (in the dev extra)")
from playwright.sync_api import expect  # noqa: E402

from chaja.cli import main  # noqa: E402
from chaja.eval import agreement  # noqa: E402
from chaja.eval import reference as ref  # noqa: E402
from browser import asked_and_refused, driven_chromium, new_page, serious  # noqa: E402
from hubs import READ_KEY, WRITE_KEY  # noqa: E402
from judging_pools import place  # noqa: E402
from raw import call  # noqa: E402

A = ["3", "2", "0", "1", "2"]          # judge A's keys for the first five pairs (then "a": abstain on the sixth)
B = ["3", "2", "0", "1", "3"]          # judge B's: the fifth differs


@pytest.fixture(scope="module")
def browser():
    with driven_chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def folder(plain_hub, judging_root):
    return judging_root / "open"


def settled(page) -> None:
    """Wait until every grade typed has been answered by the hub."""
    page.wait_for_function("document.body.dataset.pending === '0'")


def start(page, pool: str, name: str, adjudicate: bool = False) -> None:
    """Pick ``pool``, type ``name`` and open the view, by the keyboard."""
    page.wait_for_selector(f'#pool option[value="{pool}"]', state="attached")
    page.select_option("#pool", pool)
    page.focus("#name")
    page.keyboard.type(name)
    if adjudicate:
        page.keyboard.press("Tab")                      # to "Grade as a judge"
        page.keyboard.press("Tab")                      # to "Adjudicate"
        expect(page.locator("#as-adjudicator")).to_be_focused()
    page.keyboard.press("Enter")


def test_two_judges_grade_by_keyboard_and_the_adjudicator_settles_their_dispute(
        plain_hub, folder, judging_pool, browser, tmp_path, capsys):
    items = place(judging_pool, folder, "scenario")
    ids, n = [it["pair_id"] for it in items], len(items)
    url = plain_hub.url + "/judge"

    alice = new_page(browser, url)
    start(alice, "scenario", "alice")
    expect(alice.locator("#progress")).to_have_text(f"0 of {n} graded")
    expect(alice.locator("#where")).to_have_text(f"Pair 1 of {n} · question {items[0]['question_id']}")
    expect(alice.locator("#question")).to_have_text(items[0]["question"])
    marks = [m.lower() for m in alice.locator("#passage mark").all_inner_texts()]
    assert marks and all(m in items[0]["question"].lower() for m in marks)   # the question's terms, marked
    for key in A + ["a"]:
        alice.keyboard.press(key)
    settled(alice)
    expect(alice.locator("#progress")).to_have_text(f"6 of {n} graded")
    expect(alice.locator("#where")).to_contain_text(f"Pair 7 of {n}")
    for key, pair, said in (("k", 6, "Your grade: abstain"), ("ArrowLeft", 5, "Your grade: 2 useful"),
                            ("j", 6, "Your grade: abstain"), ("ArrowRight", 7, "Not graded yet")):
        alice.keyboard.press(key)
        expect(alice.locator("#where")).to_contain_text(f"Pair {pair} of {n}")
        expect(alice.locator("#current")).to_have_text(said)
    expect(alice.locator('#grades button[aria-pressed="true"]')).to_have_count(0)
    saved = {pid: int(g) for pid, g in zip(ids, A)} | {ids[5]: "abstain"}
    assert ref.read_grades(folder / "scenario.grades" / "alice.csv") == ("alice", saved)

    bob = new_page(browser, url)
    start(bob, "scenario", "bob")
    expect(bob.locator("#progress")).to_have_text(f"0 of {n} graded")       # alice's grades are not his
    expect(bob.locator("#current")).to_have_text("Not graded yet")
    for key in B:
        bob.keyboard.press(key)
    settled(bob)
    expect(bob.locator("#progress")).to_have_text(f"5 of {n} graded")

    alice.reload()                                        # the grades and the place come back from the hub
    expect(alice.locator("#progress")).to_have_text(f"6 of {n} graded")
    expect(alice.locator("#where")).to_contain_text(f"Pair 7 of {n}")
    expect(alice.locator("#name")).to_have_value("alice")
    alice.keyboard.press("k")
    expect(alice.locator("#current")).to_have_text("Your grade: abstain")
    expect(alice.locator('#grades button[data-grade="abstain"]')).to_have_attribute("aria-pressed", "true")

    carol = new_page(browser, url)
    start(carol, "scenario", "carol", adjudicate=True)
    expect(carol.locator("#work-title")).to_contain_text("carol adjudicating scenario")
    expect(carol.locator("#progress")).to_have_text("0 of 1 graded")
    expect(carol.locator("#pair")).to_have_attribute("data-pair", ids[4])
    expect(carol.locator("#question")).to_have_text(items[4]["question"])
    expect(carol.locator("#summary")).to_contain_text("Judges: alice, bob")
    expect(carol.locator("#summary")).to_contain_text("disputed: 1")
    assert "Your grade" not in carol.locator("#work").inner_text()        # blind: no judge's grade shown
    carol.keyboard.press("2")
    settled(carol)
    expect(carol.locator("#progress")).to_have_text("1 of 1 graded")
    expect(carol.locator("#status")).to_have_text("All 1 pairs graded.")

    grades = [str(folder / "scenario.grades" / f"{j}.csv") for j in ("alice", "bob")]
    capsys.readouterr()
    assert main(["judge", "agreement", "--pool", str(folder / "scenario.jsonl"), "--grades", *grades, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["judges"] == ["alice", "bob"] and got["pairs"] == 6 and got["abstentions"] == 1
    assert got["pairs_graded_by_two_or_more"] == 5 and got["exact_agreement"] == pytest.approx(0.8)
    assert got["cohen_kappa"] == pytest.approx(agreement.cohen_kappa([int(g) for g in A], [int(g) for g in B]))
    assert got["queue"] == [ids[4]]
    assert main(["judge", "reference", "--pool", str(folder / "scenario.jsonl"), "--grades", *grades,
                 "--adjudication", str(folder / "scenario.adjudication" / "carol.csv"),
                 "--out", str(tmp_path / "ref.jsonl")]) == 0
    entries = {e["pair_id"]: e for e in ref.read_reference(tmp_path / "ref.jsonl")}
    decided = entries[ids[4]]
    assert (decided["grade"], decided["by"], decided["adjudicator"]) == (2, "adjudicated", "carol")
    assert decided["judges"] == {"alice": 2, "bob": 3}
    assert (entries[ids[5]]["grade"], entries[ids[5]]["by"]) == ("abstain", "abstained")
    for page in (alice, bob, carol):
        page.context.close()


def test_with_keys_the_page_asks_for_a_read_key_then_a_write_key(hub, judging_root, judging_pool, browser):
    items = place(judging_pool, judging_root / "keys", "keyed-page")
    page = new_page(browser, hub.url + "/judge")
    asked_and_refused(page)
    page.keyboard.type(READ_KEY)
    page.keyboard.press("Enter")
    start(page, "keyed-page", "dana")
    expect(page.locator("#progress")).to_have_text(f"0 of {len(items)} graded")
    page.keyboard.press("2")                                    # the read key may not write: asked for another
    expect(page.locator("#status")).to_have_text("Saving grades needs a key that may write.")
    expect(page.locator("#key")).to_be_focused()
    page.keyboard.type(WRITE_KEY)
    page.keyboard.press("Enter")
    settled(page)
    page.keyboard.press("3")
    settled(page)
    expect(page.locator("#progress")).to_have_text(f"2 of {len(items)} graded")
    assert ref.read_grades(judging_root / "keys" / "keyed-page.grades" / "dana.csv") == \
        ("dana", {items[0]["pair_id"]: 2, items[1]["pair_id"]: 3})
    page.context.close()


def test_the_interface_follows_the_browsers_language(plain_hub, folder, judging_pool, browser):
    items = place(judging_pool, folder, "korean")
    call(plain_hub.url, "PUT", f"/v1/judging/pools/korean/judges/{quote('민지')}/{items[0]['pair_id']}", {"grade": 1})
    page = new_page(browser, plain_hub.url + "/judge?pool=korean&judge=" + quote("민지"), locale="ko-KR")
    expect(page.locator("html")).to_have_attribute("lang", "ko")
    expect(page.locator("#progress")).to_have_text(f"{len(items)}개 중 1개 채점")
    expect(page.locator("#as-judge")).to_have_text("평가자로 채점")
    page.keyboard.press("k")
    expect(page.locator("#current")).to_have_text("내 점수: 1 관련 있으나 쓸모 적음")
    page.context.close()


def test_no_serious_accessibility_problems(hub, plain_hub, folder, judging_pool, browser):
    items = place(judging_pool, folder, "axe")
    for judge, grades in (("gil", [3, 2]), ("hana", [3, 0])):
        for it, g in zip(items, grades):
            call(plain_hub.url, "PUT", f"/v1/judging/pools/axe/judges/{judge}/{it['pair_id']}", {"grade": g})
    for width in (1000, 390):
        page = new_page(browser, plain_hub.url + "/judge?pool=axe&judge=gil", width=width)
        expect(page.locator("#progress")).to_have_text(f"2 of {len(items)} graded")
        assert serious(page) == [], f"judging page at {width}px"
        page.goto(plain_hub.url + "/judge?pool=axe&adjudicator=ines")
        expect(page.locator("#progress")).to_have_text("0 of 1 graded")
        assert serious(page) == [], f"adjudication view at {width}px"
        page.context.close()
    for width in (1000, 390):
        page = new_page(browser, hub.url + "/?q=" + quote("라우터 무선 비밀번호 변경"), key=READ_KEY, width=width)
        expect(page.locator("#results > li").first).to_be_visible()
        page.keyboard.press("ArrowDown")                          # a result current (marked), as the keys leave it
        expect(page.locator("#r0")).to_be_focused()
        assert serious(page) == [], f"search page with results at {width}px"
        page.keyboard.press("Enter")                              # the document view open too
        expect(page.locator("#doc section.matched")).to_be_visible()
        assert serious(page) == [], f"search page with the document open at {width}px"
        page.context.close()
    for path in ("/judge", "/"):                                    # the key forms, before any key
        page = new_page(browser, hub.url + path + ("" if path == "/judge" else "?q=x"))
        expect(page.locator("#key-form")).to_be_visible()
        assert serious(page) == [], f"key form of {path}"
        page.context.close()


def test_a_grade_the_hub_refuses_is_undone_and_said(plain_hub, folder, judging_pool, browser):
    items = place(judging_pool, folder, "gone")
    page = new_page(browser, plain_hub.url + "/judge?pool=gone&judge=ivan")
    expect(page.locator("#progress")).to_have_text(f"0 of {len(items)} graded")
    (folder / "gone.jsonl").unlink()                          # the pool is taken away while the judge works
    page.keyboard.press("2")
    settled(page)
    expect(page.locator("#status")).to_have_text(re.compile(r"^Failed: no pool 'gone' in the judging folder"))
    expect(page.locator("#progress")).to_have_text(f"0 of {len(items)} graded")
    page.keyboard.press("k")
    expect(page.locator("#current")).to_have_text("Not graded yet")
    page.context.close()


def test_reports_open_in_a_frame_that_cannot_reach_the_page(plain_hub, folder, browser):
    (folder / "runs").mkdir(exist_ok=True)
    (folder / "runs" / "hybrid.html").write_text(
        "<!doctype html><title>hybrid</title><p id=said>report</p><script>var said = 'isolated';"
        "try { said = parent.document.title + ' ' + parent.sessionStorage.length; } catch (e) {}"
        "document.getElementById('said').textContent = said;</script>", encoding="utf-8")
    page = new_page(browser, plain_hub.url + "/judge")
    page.get_by_role("link", name="runs/hybrid.html").click()
    expect(page.frame_locator("#report").locator("#said")).to_have_text("isolated")   # its script ran, sandboxed
    page.context.close()


@pytest.mark.skipif(not os.environ.get("CHAJA_SCREENSHOTS"), reason="screenshots only on request: "
                                                                      "CHAJA_SCREENSHOTS=docs/images")
def test_screenshots_for_the_docs(plain_hub, folder, judging_pool, browser):
    out = Path(os.environ["CHAJA_SCREENSHOTS"])
    items = place(judging_pool, folder, "fixture-pool")
    for judge, grades in (("alice", [3, 1, 0, 3, 0, 1]), ("bob", [3, 1, 0, 2, 0, 0])):
        for it, g in zip(items, grades):
            call(plain_hub.url, "PUT", f"/v1/judging/pools/fixture-pool/judges/{judge}/{it['pair_id']}", {"grade": g})
    shots = [("judge-page", "judge=alice", "en-US", 1000, None), ("judge-page-phone", "judge=bob", "ko-KR", 390, "k"),
             ("judge-adjudicate", "adjudicator=carol", "en-US", 1000, None),
             ("judge-adjudicate-phone", "adjudicator=carol", "ko-KR", 390, None)]
    for name, who, locale, width, key in shots:
        page = new_page(browser, plain_hub.url + f"/judge?pool=fixture-pool&{who}", locale=locale, width=width,
                        height=900 if width > 500 else 844)
        expect(page.locator("#pair")).to_be_visible()
        if key:
            page.keyboard.press(key)                     # back to a graded pair: its grade shown pressed
        page.evaluate("document.activeElement.blur()")
        page.screenshot(path=str(out / f"{name}.png"), full_page=True)
        page.context.close()
