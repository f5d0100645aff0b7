"""``chaja tune`` end to end: real stores (KorQuAD paragraphs, React pages), the real
models, the user's questions split by hash, and the chosen settings written to a file."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

import chaja
from chaja.cli import main
from chaja.eval.canonical import react_store_paths
from chaja.eval.questions import Question, read_questions
from chaja.eval.squad import load_squad
from chaja.eval.tune import split

REPO = Path(__file__).resolve().parents[2]


def write_questions(path: Path, questions) -> Path:
    path.write_text("".join(json.dumps({"id": q.id, "text": q.text, "lang": q.lang, "kind": q.kind, "gold": q.gold},
                                       ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    return path


def test_the_split_halves_each_kind_by_hash_and_keeps_a_question_where_it_was():
    qs = [Question(id=f"{k}-{i}", text="q", kind=k, gold=["d"]) for k in ("en-en", "ko-ko") for i in range(9)]
    dev, test = split(qs)
    assert len(dev) == 10 and len(test) == 8                  # 5 + 5 dev, rounded up per kind
    assert {q.id for q in dev}.isdisjoint({q.id for q in test})
    assert sum(q.kind == "en-en" for q in dev) == 5
    assert split(list(reversed(qs))) == (dev, test)          # the order of the file does not matter
    more = qs + [Question(id=f"en-ko-{i}", text="q", kind="en-ko", gold=["d"]) for i in range(7)]
    dev2, test2 = split(more)                                 # another kind added: these stay where they were
    assert [q for q in dev2 if q.kind != "en-ko"] == dev and [q for q in test2 if q.kind != "en-ko"] == test


@pytest.fixture(scope="module")
def korquad(tmp_path_factory, korquad_file):
    """Thirty KorQuAD paragraphs and the questions about them."""
    kq = load_squad(korquad_file)
    docs = kq.documents[:30]
    kept = {d.id for d in docs}
    questions = [Question(id=q.id, text=q.text, lang="ko", kind="ko-ko", gold=list(q.gold))
                 for q in kq.questions if q.gold[0] in kept]
    root = tmp_path_factory.mktemp("tune-korquad")
    with chaja.open(root / "kq.chaja") as idx:
        idx.add_documents(docs)
    return root / "kq.chaja", write_questions(root / "questions.jsonl", questions)


def test_tune_finds_a_setting_that_wins_and_writes_it(korquad, tmp_path, capsys):
    """A gate that asks for every term drops the strong keyword list of KorQuAD's questions:
    turning the gate off wins beyond noise on dev, holds on test, and is written."""
    store, questions = korquad
    config = tmp_path / "chaja.toml"
    config.write_text('[search]\ntop_k = 10\n', encoding="utf-8")
    assert main(["tune", "--store", str(store), "--questions", str(questions), "--out", str(tmp_path / "t"),
                 "--only", "gate,chunk_cap", "--set", "search.gate_share=1.0", "--write", str(config)]) == 0
    out = capsys.readouterr().out
    result = json.loads((tmp_path / "t" / "tune.json").read_text())
    gate = [r for r in result["candidates"] if r["setting"] == "gate"]
    assert gate and gate[0]["dev"]["verdict"] == "better" and gate[0]["kept"]
    assert result["chosen"]["search.gate"] is False
    for r in result["candidates"]:
        assert r["dev"]["verdict"] == "better"
        assert r["kept"] == (r["test"]["verdict"] != "worse" and r["test"]["diff"] >= 0)
    assert set(result["chosen"]) <= {k for r in result["candidates"] if r["kept"] for k in r["changes"]}
    assert "chosen: search.gate=False" in out
    written = tomllib.loads(config.read_text(encoding="utf-8"))
    assert written["search"]["gate"] is False and written["search"]["top_k"] == 10   # the file's own kept
    assert (tmp_path / "t" / "dev-sweep" / "sweep.json").is_file() and (tmp_path / "t" / "test" / "base").is_dir()


def test_tune_with_few_questions_changes_nothing(korquad, tmp_path, capsys):
    store, questions = korquad
    few = write_questions(tmp_path / "few.jsonl", read_questions(questions)[:6])
    config = tmp_path / "chaja.toml"
    assert main(["tune", "--store", str(store), "--questions", str(few), "--out", str(tmp_path / "t"),
                 "--only", "gate", "--write", str(config)]) == 0
    captured = capsys.readouterr()
    assert "nothing to change" in captured.out and "left as it was" in captured.err
    assert not config.exists()
    assert main(["tune", "--store", str(store), "--questions", str(few), "--out", str(tmp_path / "t2"),
                 "--only", "no_such_setting"]) == 2
    assert "cannot sweep search.no_such_setting" in capsys.readouterr().err


def test_tune_on_react_pages_in_two_languages(tmp_path, react_dir, capsys):
    """Eight React pages (English and Korean) and the natural questions about them."""
    paths = react_store_paths(react_dir.parent)
    english = [p for p in paths if p.parent.name == "en"][:4]
    korean = [p for p in paths if p.parent.name == "ko"][:4]
    pages = {p.stem for p in english + korean}
    natural = REPO / "benchmarks" / "questions" / "natural"
    questions = [q for f in ("react-natural-dev.jsonl", "react-natural-test.jsonl")
                 for q in read_questions(natural / f) if set(q.gold) & pages]
    assert len({q.kind for q in questions}) >= 3
    store = tmp_path / "react.chaja"
    with chaja.open(store) as idx:
        idx.add(english + korean)
    qfile = write_questions(tmp_path / "q.jsonl", questions)
    assert main(["tune", "--store", str(store), "--questions", str(qfile), "--out", str(tmp_path / "t"),
                 "--only", "heading_list,keyword_hold", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["dev_questions"] + result["test_questions"] == len(questions)
    assert set(result["swept"]) <= {"heading_list", "keyword_hold"} and result["swept"]
    for r in result["candidates"]:
        assert r["dev"]["verdict"] == "better"
    assert set(result["chosen"]) <= {"search.heading_list", "search.keyword_hold"}
