"""The judging round trip on the fixture store: two runs → a pool → two judges (a person's
CSV and a program's JSON Lines with abstentions) → agreement and the adjudication queue
→ an adjudicated reference → an expanded reference → graded metrics of both runs under
both versions, reproduced by ``chaja eval report``."""
from __future__ import annotations

import csv
import json

import pytest

from chaja.cli import main
from chaja.eval import agreement
from chaja.eval import reference as ref
from chaja.eval.judge_pool import pair_id, read_pool
from chaja.eval.questions import Question
from chaja.eval.runner import evaluate

QUESTIONS = [("q-cancel", "자기주식 소각 결정", "filings/share-cancellation"),
             ("q-rights", "유상증자 발행가액", "filings/rights-issue"),
             ("q-descale", "how do I descale the espresso machine", "manuals/espresso-machine"),
             ("q-chain", "체인 윤활유", "manuals/bicycle"),
             ("q-wifi", "wireless password", "manuals/router"),
             ("q-rates", "base rate inflation", "news-rates")]
GOLD = {qid: gold for qid, _, gold in QUESTIONS}


@pytest.fixture(scope="module")
def runs(corpus_index, tmp_path_factory):
    root = tmp_path_factory.mktemp("judging")
    questions = [Question(id=i, text=t, gold=[g], lang="ko" if any("가" <= c <= "힣" for c in t) else "en", kind="")
                 for i, t, g in QUESTIONS]
    cfg = corpus_index.config.search
    before = cfg.mode
    try:
        for mode in ("hybrid", "keyword"):
            cfg.mode = mode
            evaluate(corpus_index, questions, root / mode, name=mode, stream=None)
    finally:
        cfg.mode = before
    return root, corpus_index


def person(item) -> str:
    """Judge A, by hand: the gold page 3, another page of the same folder 1, the rest 0."""
    gold = GOLD[item["question_id"]]
    if item["doc_id"] == gold:
        return "3"
    return "1" if item["doc_id"].split("/")[0] == gold.split("/")[0] else "0"


def program(item) -> object:
    """Judge B, a program: gold 3, everything else 0, abstains on news pages and notes it
    cannot read, and calls manuals pages useful for any manuals question."""
    gold = GOLD[item["question_id"]]
    if item["doc_id"].startswith(("news", "manuals/notes")) and item["doc_id"] != gold:
        return "abstain"
    if item["doc_id"] == gold:
        return 3
    return 2 if gold.startswith("manuals/") and item["doc_id"].startswith("manuals/") else 0


def fill_csv(src, dst, grade, keep=None):
    with open(src, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    with open(dst, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            if keep is None or r["pair_id"] in keep:
                w.writerow({**r, "grade": grade(r)})


def test_the_round_trip(runs, tmp_path, capsys):
    root, idx = runs
    store = str(idx.store.path)
    hybrid, keyword = str(root / "hybrid"), str(root / "keyword")

    # ---- pool: top 3 of both runs, deduplicated, passages read from the store
    assert main(["judge", "pool", hybrid, keyword, "--store", store, "--k", "3",
                 "--out", str(tmp_path / "pool.jsonl"), "--csv", str(tmp_path / "pool.csv")]) == 0
    pool = read_pool(tmp_path / "pool.jsonl")
    assert len({p["pair_id"] for p in pool}) == len(pool)
    first = next(p for p in pool if p["question_id"] == "q-cancel" and p["doc_id"] == GOLD["q-cancel"])
    assert first["pair_id"] == pair_id("q-cancel", GOLD["q-cancel"])
    assert first["found_by"] == {"hybrid": 1, "keyword": 1}
    assert "소각" in first["passage"] and first["title"] and first["in_store"]
    assert all(p["found_by"] and min(p["found_by"].values()) <= 3 for p in pool)

    # ---- two judges: a person fills the CSV, a program writes JSON Lines with abstentions
    fill_csv(tmp_path / "pool.csv", tmp_path / "alice.csv", person)
    with open(tmp_path / "bot.jsonl", "w", encoding="utf-8") as fh:
        for p in pool:
            fh.write(json.dumps({"pair_id": p["pair_id"], "grade": program(p), "judge": "bot"}) + "\n")
    grades = ["--grades", str(tmp_path / "alice.csv"), str(tmp_path / "bot.jsonl")]
    capsys.readouterr()
    assert main(["judge", "agreement", "--pool", str(tmp_path / "pool.jsonl"), *grades,
                 "--queue", str(tmp_path / "queue.csv"), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["judges"] == ["alice", "bot"]
    a = {p["pair_id"]: int(person(p)) for p in pool}
    b = {p["pair_id"]: program(p) for p in pool}
    both = [pid for pid in a if b[pid] != "abstain"]
    assert got["abstentions"] == sum(1 for v in b.values() if v == "abstain") > 0
    assert got["cohen_kappa"] == pytest.approx(agreement.cohen_kappa([a[p] for p in both], [b[p] for p in both]))
    disputed = sorted(p for p in both if a[p] != b[p])
    assert disputed and got["queue"] == disputed
    with open(tmp_path / "queue.csv", encoding="utf-8", newline="") as fh:
        queue_rows = list(csv.DictReader(fh))
    assert sorted(r["pair_id"] for r in queue_rows) == disputed
    assert all(r["grade"] == "" for r in queue_rows)                      # blind: no judge's grade shown

    # ---- without adjudication the disputed pairs stay out; with it the reference is whole
    assert main(["judge", "reference", "--pool", str(tmp_path / "pool.jsonl"), *grades,
                 "--out", str(tmp_path / "partial.jsonl")]) == 0
    assert len(ref.read_reference(tmp_path / "partial.jsonl")) == len(pool) - len(disputed)
    fill_csv(tmp_path / "queue.csv", tmp_path / "carol.csv", lambda r: "1")
    assert main(["judge", "reference", "--pool", str(tmp_path / "pool.jsonl"), *grades,
                 "--adjudication", str(tmp_path / "carol.csv"), "--out", str(tmp_path / "ref1.jsonl")]) == 0
    v1 = ref.read_reference(tmp_path / "ref1.jsonl")
    assert len(v1) == len(pool) and {e["version"] for e in v1} == {1}
    by = {e["pair_id"]: e for e in v1}
    for pid in disputed:
        assert by[pid]["by"] == "adjudicated" and by[pid]["grade"] == 1 and by[pid]["adjudicator"] == "carol"
        assert by[pid]["judges"] == {"alice": a[pid], "bot": b[pid]}
    single = [pid for pid in a if b[pid] == "abstain"]
    assert all(by[pid]["by"] == "single" and by[pid]["grade"] == a[pid] for pid in single)
    assert all(by[pid]["by"] == "agreed" for pid in both if a[pid] == b[pid])

    # ---- expansion: a deeper pool, only the new pairs graded, at version 2
    assert main(["judge", "pool", hybrid, keyword, "--store", store, "--k", "6",
                 "--out", str(tmp_path / "pool2.jsonl"), "--csv", str(tmp_path / "pool2.csv")]) == 0
    pool2 = read_pool(tmp_path / "pool2.jsonl")
    new = {p["pair_id"] for p in pool2} - set(by)
    assert new
    # the person now finds one more page useful for the cancellation question
    extra = next(p for p in pool2 if p["pair_id"] in new and p["question_id"] == "q-cancel")
    fill_csv(tmp_path / "pool2.csv", tmp_path / "alice2.csv",
             lambda r: "2" if r["pair_id"] == extra["pair_id"] else person(r), keep=new)
    assert main(["judge", "reference", "--pool", str(tmp_path / "pool2.jsonl"), "--grades",
                 str(tmp_path / "alice2.csv"), "--extend", str(tmp_path / "ref1.jsonl"),
                 "--out", str(tmp_path / "ref2.jsonl")]) == 0
    v2 = ref.read_reference(tmp_path / "ref2.jsonl")
    assert [e for e in v2 if e["version"] == 1] == v1                  # the old reference, untouched
    assert {e["pair_id"] for e in v2 if e["version"] == 2} == new

    # ---- both runs under both versions
    for run in (hybrid, keyword):
        s1, s2 = ref.score_run(run, v2, 1), ref.score_run(run, v2, 2)
        assert s1["reference_version"] == 1 and s2["reference_version"] == 2
        assert s1["judged_pairs"] == len(v1) and s2["judged_pairs"] == len(v2)
        # the new useful page raises the cancellation question's R, so recall at 3 cannot rise
        assert s2["answerable"]["Recall@3"] <= s1["answerable"]["Recall@3"] + 1e-12
        capsys.readouterr()
        assert main(["eval", "report", run, "--reference", str(tmp_path / "ref2.jsonl")]) == 0
        out = capsys.readouterr().out
        for version, s in ((1, s1), (2, s2)):
            assert f"version {version} ({s['judged_pairs']} judged pairs)" in out
        block2 = out.split("version 2")[1]
        ndcg_row = next(ln for ln in block2.splitlines() if ln.startswith("answerable") and "nDCG" in ln)
        assert f"{s2['answerable']['nDCG@10']:.3f}" in ndcg_row


def test_grade_files_are_checked(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("pair_id,grade\nabc,7\n")
    with pytest.raises(ValueError, match="grade must be 0-3"):
        ref.read_grades(bad)
    (tmp_path / "no-cols.csv").write_text("id,score\n1,2\n")
    with pytest.raises(ValueError, match="pair_id and grade"):
        ref.read_grades(tmp_path / "no-cols.csv")
    twice = tmp_path / "twice.jsonl"
    twice.write_text('{"pair_id": "p", "grade": 1}\n{"pair_id": "p", "grade": 2}\n')
    with pytest.raises(ValueError, match="graded twice"):
        ref.read_grades(twice)
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"pair_id": "p", "grade": 1, "judge": "a"}\n{"pair_id": "q", "grade": 2, "judge": "b"}\n')
    with pytest.raises(ValueError, match="several judges"):
        ref.read_grades(mixed)
    ok = tmp_path / "dana.csv"
    ok.write_text("pair_id,grade\np,abstain\nq,\nr,2\n")
    assert ref.read_grades(ok) == ("dana", {"p": "abstain", "r": 2})
    with pytest.raises(ValueError, match="does not hold"):
        ref.collect([("dana", {"zz": 1})], {"p"})


def test_every_judge_abstaining_keeps_the_pair_as_an_abstention():
    pool = [{"pair_id": "p", "question_id": "q", "doc_id": "d"}]
    entries, pending = ref.combine(pool, {"p": {"a": "abstain", "b": "abstain"}})
    assert not pending and entries[0]["grade"] == "abstain" and entries[0]["by"] == "abstained"
    assert ref.judgments(entries) == {"q": {"d": "abstain"}}


def test_runs_named_alike_are_refused(runs):
    from chaja.eval.judge_pool import build_pool

    root, _ = runs
    with pytest.raises(ValueError, match="named alike"):
        build_pool([root / "hybrid", root / "hybrid"], 3)
