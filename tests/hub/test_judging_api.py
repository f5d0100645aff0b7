"""The judging API behind ``/judge`` against the real hub with keys: reading needs the
read key and grading the write key; grades land in the judging folder as files
``chaja judge agreement`` and ``reference`` read; a judge sees only their own grades, the
adjudicator only the disputed pairs, blind; bad names, grades, pairs and pools get
clear refusals, and no name reaches outside the folder."""
from __future__ import annotations

import csv
import json
from urllib.parse import quote

import pytest

from chaja.cli import main
from chaja.config import Config
from chaja.eval import reference as ref
from chaja.eval.judge_dir import COLUMNS
from chaja.hub.judging import marks
from hubs import READ_KEY, WRITE_KEY
from judging_pools import place
from raw import call


@pytest.fixture(scope="module")
def keys_dir(hub, judging_root):
    return judging_root / "keys"


def view(hub, pool: str, judge: str, role: str = "judges", key: str = READ_KEY):
    return call(hub.url, "GET", f"/v1/judging/pools/{quote(pool)}/{role}/{quote(judge, safe='')}", key=key)


def put(hub, pool: str, judge: str, pair: str, grade, role: str = "judges", key: str | None = WRITE_KEY):
    return call(hub.url, "PUT", f"/v1/judging/pools/{quote(pool)}/{role}/{quote(judge, safe='')}/{quote(pair)}",
                {"grade": grade}, key=key)


def test_the_page_is_one_file_the_hub_serves(hub):
    status, page, headers = call(hub.url, "GET", "/judge")          # open: the page holds no data
    assert status == 200 and headers["content-type"].startswith("text/html")
    assert "http://" not in page and "https://" not in page
    assert "/v1/judging" in page and "/pages/hub-key.js" in page and 'aria-live="polite"' in page
    spec = call(hub.url, "GET", "/openapi.json", key=READ_KEY)[1]
    assert not [p for p in spec["paths"] if "judg" in p]              # the page's own API, as the pages


def test_reading_needs_the_read_key_and_grading_the_write_key(hub, keys_dir, judging_pool):
    items = place(judging_pool, keys_dir, "keyed")
    assert call(hub.url, "GET", "/v1/judging")[0] == 401
    status, listing, _ = call(hub.url, "GET", "/v1/judging", key=READ_KEY)
    assert status == 200
    mine = next(p for p in listing["pools"] if p["name"] == "keyed")
    assert mine == {"name": "keyed", "pairs": len(items), "questions": 3, "judges": []}
    assert view(hub, "keyed", "alice", key="")[0] == 401
    pair = items[0]["pair_id"]
    assert put(hub, "keyed", "alice", pair, 2, key=None)[0] == 401
    status, body, _ = put(hub, "keyed", "alice", pair, 2, key=READ_KEY)
    assert status == 403 and "may read but not write" in body["detail"]
    assert not (keys_dir / "keyed.grades").exists()
    status, body, _ = put(hub, "keyed", "alice", pair, 2)
    assert status == 200 and body == {"pair_id": pair, "grade": 2, "graded": 1, "total": len(items)}
    assert ref.read_grades(keys_dir / "keyed.grades" / "alice.csv") == ("alice", {pair: 2})


def test_grade_files_are_what_the_command_line_reads(hub, keys_dir, judging_pool, capsys):
    items = place(judging_pool, keys_dir, "files")
    ids = [it["pair_id"] for it in items]
    for pid, g in zip(ids, [3, 2, 0, 1, "abstain"]):
        assert put(hub, "files", "alice", pid, g)[0] == 200
    for pid, g in zip(ids, [3, 2, 0, 2]):
        assert put(hub, "files", "bob", pid, g)[0] == 200
    assert put(hub, "files", "bob", ids[0], "ABSTAIN")[0] == 200     # a changed grade replaces the old one
    folder = keys_dir / "files.grades"
    assert sorted(p.name for p in folder.iterdir()) == ["alice.csv", "bob.csv"]    # no temporary file left
    with open(folder / "bob.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert tuple(rows[0]) == COLUMNS and [r["pair_id"] for r in rows] == [ids[1], ids[2], ids[3], ids[0]]
    assert rows[-1]["grade"] == "abstain" and rows[-1]["judge"] == "bob" and rows[-1]["doc_id"] == items[0]["doc_id"]
    capsys.readouterr()
    assert main(["judge", "agreement", "--pool", str(keys_dir / "files.jsonl"), "--grades",
                 str(folder / "alice.csv"), str(folder / "bob.csv"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["judges"] == ["alice", "bob"] and got["abstentions"] == 2
    assert got["pairs_graded_by_two_or_more"] == 3 and got["exact_agreement"] == pytest.approx(2 / 3)
    assert got["queue"] == [ids[3]]


def test_a_judge_sees_only_their_own_grades(hub, keys_dir, judging_pool):
    items = place(judging_pool, keys_dir, "blind")
    ids = [it["pair_id"] for it in items]
    put(hub, "blind", "alice", ids[0], 3)
    put(hub, "blind", "bob", ids[0], 0)
    put(hub, "blind", "bob", ids[1], 1)
    status, seen, _ = view(hub, "blind", "alice")
    assert status == 200 and seen["grades"] == {ids[0]: 3} and seen["graded"] == 1
    assert seen["name"] == "alice" and seen["role"] == "judge" and seen["total"] == len(items)
    assert "bob" not in json.dumps(seen) and all("found_by" not in it for it in seen["items"])   # blind to runs too
    first = seen["items"][0]
    assert {k: first[k] for k in ("pair_id", "question", "doc_id", "passage")} == \
        {k: items[0][k] for k in ("pair_id", "question", "doc_id", "passage")}
    status, fresh, _ = view(hub, "blind", "carol")
    assert status == 200 and fresh["grades"] == {} and fresh["at"] == 0
    listing = call(hub.url, "GET", "/v1/judging", key=READ_KEY)[1]
    assert next(p for p in listing["pools"] if p["name"] == "blind")["judges"] == ["alice", "bob"]
    assert '"grade' not in json.dumps(listing)


def test_the_view_resumes_after_the_pair_graded_last(hub, keys_dir, judging_pool):
    items = place(judging_pool, keys_dir, "resume")
    ids = [it["pair_id"] for it in items]
    assert len(ids) >= 7
    for i in (0, 1, 2):
        put(hub, "resume", "alice", ids[i], 1)
    assert view(hub, "resume", "alice")[1]["at"] == 3
    put(hub, "resume", "alice", ids[5], 2)
    assert view(hub, "resume", "alice")[1]["at"] == 6
    put(hub, "resume", "alice", ids[1], 0)                  # back to an earlier pair: on from there
    assert view(hub, "resume", "alice")[1]["at"] == 3
    for pid in ids:
        put(hub, "resume", "alice", pid, 1)
    seen = view(hub, "resume", "alice")[1]
    assert seen["at"] == len(ids) - 1 and seen["graded"] == len(ids)


def test_adjudication_shows_the_disputed_pairs_blind(hub, keys_dir, judging_pool, tmp_path, capsys):
    items = place(judging_pool, keys_dir, "adj")
    ids = [it["pair_id"] for it in items]
    for pid, a, b in zip(ids, [3, 2, 0], [3, 1, 0]):
        put(hub, "adj", "alice", pid, a)
        put(hub, "adj", "bob", pid, b)
    status, seen, _ = view(hub, "adj", "carol", "adjudication")
    assert status == 200 and [it["pair_id"] for it in seen["items"]] == [ids[1]]
    assert seen["role"] == "adjudicator" and seen["total"] == 1 and seen["grades"] == {}
    assert seen["summary"]["judges"] == ["alice", "bob"] and "per_pair" not in seen["summary"]
    assert "alice" not in json.dumps(seen["items"]) and seen["summary"]["exact_agreement"] == pytest.approx(2 / 3)
    status, body, _ = view(hub, "adj", "alice", "adjudication")
    assert status == 400 and "graded pool 'adj' as a judge" in body["detail"]
    status, body, _ = put(hub, "adj", "carol", ids[0], 3, "adjudication")
    assert status == 400 and "not in dispute" in body["detail"]
    status, body, _ = put(hub, "adj", "carol", ids[1], 2, "adjudication")
    assert status == 200 and body == {"pair_id": ids[1], "grade": 2, "graded": 1, "total": 1}
    grades = keys_dir / "adj.grades"
    assert main(["judge", "reference", "--pool", str(keys_dir / "adj.jsonl"), "--grades", str(grades / "alice.csv"),
                 str(grades / "bob.csv"), "--adjudication", str(keys_dir / "adj.adjudication" / "carol.csv"),
                 "--out", str(tmp_path / "ref.jsonl")]) == 0
    entries = {e["pair_id"]: e for e in ref.read_reference(tmp_path / "ref.jsonl")}
    assert entries[ids[1]]["grade"] == 2 and entries[ids[1]]["by"] == "adjudicated"
    assert entries[ids[1]]["adjudicator"] == "carol" and entries[ids[0]]["by"] == "agreed"


@pytest.mark.parametrize("grade,status,said", [(5, 400, "grade must be 0-3 or 'abstain'"),
                                               ("maybe", 400, "grade must be 0-3 or 'abstain'"),
                                               ("", 400, "not empty"), (2.5, 422, None), (None, 422, None)])
def test_a_grade_outside_0_to_3_or_abstain_is_refused(hub, keys_dir, judging_pool, grade, status, said):
    items = place(judging_pool, keys_dir, "bad")
    got, body, _ = put(hub, "bad", "alice", items[0]["pair_id"], grade)
    assert got == status and (said is None or said in body["detail"])
    assert not (keys_dir / "bad.grades" / "alice.csv").exists()


def test_unknown_pools_pairs_and_reports_are_named(hub, keys_dir, judging_pool):
    place(judging_pool, keys_dir, "known")
    status, body, _ = view(hub, "nosuch", "alice")
    assert status == 404 and "no pool 'nosuch'" in body["detail"] and "known" in body["detail"]
    status, body, _ = put(hub, "known", "alice", "0123456789ab", 1)
    assert status == 400 and body["detail"] == "pool 'known' holds no pair '0123456789ab'"
    status, body, _ = call(hub.url, "GET", "/v1/judging/reports/nosuch.html", key=READ_KEY)
    assert status == 404 and "no report" in body["detail"]


@pytest.mark.parametrize("name", ["../evil", "..", ".hidden", "a b", "a\\b", "-x", "a" * 65, "x:y", "evil\x00"])
def test_a_judge_name_never_leaves_the_folder(hub, keys_dir, judging_pool, name):
    items = place(judging_pool, keys_dir, "names")
    before = sorted(p.name for p in keys_dir.parent.rglob("*"))
    status, body, _ = put(hub, "names", name, items[0]["pair_id"], 1)
    assert status in (400, 404)
    if status == 400:
        assert "a judge's name is 1-64 letters" in body["detail"]
    assert view(hub, "names", name)[0] in (400, 404, 405)        # 405: "../evil" reads as the PUT route
    assert sorted(p.name for p in keys_dir.parent.rglob("*")) == before


def test_a_pool_name_never_leaves_the_folder(hub, keys_dir, judging_root, judging_pool):
    status, _, _ = view(hub, "../source/pool", "alice")
    assert status == 404
    status, _, _ = call(hub.url, "GET", "/v1/judging/pools/..%2Fsource%2Fpool/judges/alice", key=READ_KEY)
    assert status == 404
    assert not (judging_root / "source" / "pool.grades").exists()


def test_reports_are_listed_and_served_sandboxed(hub, keys_dir, judging_root):
    (keys_dir / "reports").mkdir(exist_ok=True)
    (keys_dir / "reports" / "run.html").write_text("<!doctype html><title>run</title><p>nDCG</p>", encoding="utf-8")
    (judging_root / "outside.html").write_text("<p>not served</p>", encoding="utf-8")
    listing = call(hub.url, "GET", "/v1/judging", key=READ_KEY)[1]
    assert "reports/run.html" in listing["reports"] and not any("outside" in r for r in listing["reports"])
    status, page, headers = call(hub.url, "GET", "/v1/judging/reports/reports/run.html", key=READ_KEY)
    assert status == 200 and "<p>nDCG</p>" in page and headers["content-type"].startswith("text/html")
    assert headers["content-security-policy"] == "sandbox allow-scripts"
    assert call(hub.url, "GET", "/v1/judging/reports/reports/run.html")[0] == 401
    assert call(hub.url, "GET", "/v1/judging/reports/../outside.html", key=READ_KEY)[0] == 404
    assert call(hub.url, "GET", "/v1/judging/reports/%2E%2E/outside.html", key=READ_KEY)[0] == 404


def test_the_questions_terms_are_marked_in_utf16_offsets():
    passage = "공유기의 무선 비밀번호를 바꾸려면 설정 화면에서 wireless password 항목을 고르세요."
    spans = marks("라우터 무선 비밀번호 변경 the password", passage)
    marked = [passage[s:e] for s, e in spans]
    assert "무선" in marked and "비밀번호" in marked and "password" in marked
    assert not any(m.lower() == "the" for m in marked)
    assert marks("커피 the", "😀 커피") == [[3, 5]]                     # the emoji is two UTF-16 units


def test_serve_refuses_a_judging_folder_that_is_not_there(tmp_path, capsys):
    assert main(["serve", "--store", str(tmp_path / "s.chaja"), "--judging", str(tmp_path / "nope")]) == 2
    assert "no judging folder at" in capsys.readouterr().err


def test_a_hub_without_a_judging_folder_says_how_to_get_one(hub):
    from fastapi import HTTPException

    from chaja.hub.judging import _folder
    from chaja.hub.state import Hub

    bare = Hub(str(hub.store), Config())         # opens the store, loads nothing
    try:
        with pytest.raises(HTTPException) as caught:
            _folder(bare)
    finally:
        bare.close()
    assert caught.value.status_code == 404 and "chaja serve --judging DIR" in caught.value.detail
