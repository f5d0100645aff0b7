import io
import json

import numpy as np
import pytest

from chaja.config import Config
from chaja.documents import StoreStats
from chaja.eval.cli import main, parse_variant
from chaja.eval.noise import compare_runs
from chaja.eval.report import question_metrics, read_records, report
from chaja.eval.runner import evaluate
from chaja.eval.sweep import (DEFAULT_SETTINGS, SWEEP_METRICS, Setting, _Watched, applicability,
                              format_table, grid_cells, select_settings, sweep)
from chaja.index import Index

# dates of the fixture documents that have one (tests/fixtures/corpus)
DATES = {"filings/quarterly-report": "2026-11-14", "filings/share-cancellation": "2026-09-01",
         "filings/rights-issue": "2026-03-10", "news-rates": "2026-11-20", "news-launch": "2026-10-02"}


def test_query_memo_gives_the_encoders_vectors(encoder, query_memo):
    text = "espresso machine descaling"
    direct = encoder.encode_queries([text])
    before = query_memo.misses
    first = query_memo.encode_queries([text])
    again = query_memo.encode_queries([text, text])
    assert query_memo.misses == before + 1 and again.shape == (2, encoder.dim)
    assert np.array_equal(first, direct) and np.array_equal(again[1], direct[0])
    first[0, :] = 0                                                # callers get copies
    assert np.array_equal(query_memo.encode_queries([text])[0], direct[0])
    assert query_memo.name == encoder.name and query_memo.dim == encoder.dim


def test_settings_selection():
    keys = [s.key for s in DEFAULT_SETTINGS]
    for k in ("rrf_k", "candidates", "gate", "title_weight", "heading_weight", "reserved_keyword_share",
              "title_path", "title_slot", "chunk_cap", "language_projection", "language_centering",
              "cross_language_keyword", "source_weights", "half_life_days"):
        assert f"search.{k}" in keys
    picked = select_settings(["gate", "search.rrf_k"], ["rrf_k=5,20,5", "gate_share=0.3,0.5"])
    assert [(s.key, s.values) for s in picked] == [("search.gate", (True, False)), ("search.rrf_k", (5.0, 20.0))]
    added = select_settings(["gate_share"], ["gate_share=0.3,0.5"])
    assert added[0].values == (0.3, 0.5)
    weights = select_settings(["source_weights"], ['source_weights=[{"news": 1.2}, {}]'])
    assert weights[0].values == ({"news": 1.2}, {}) and weights[0].needs == "sources"
    with pytest.raises(ValueError, match="--variant"):
        select_settings(["index.analyzer"])
    with pytest.raises(ValueError, match="unknown setting"):
        select_settings(["rrf"])
    with pytest.raises(ValueError, match="--values"):
        select_settings(["gate_share"])


def test_grid_cells():
    base = Config()
    cells = grid_cells(select_settings(["rrf_k", "gate"]), base)
    assert len(cells) == 6
    assert [c.name for c in cells if not c.changes] == ["rrf_k=20,gate=on"]
    off60 = next(c for c in cells if c.name == "rrf_k=60,gate=off")
    assert off60.changes == [("search.rrf_k", 60.0), ("search.gate", False)]
    with pytest.raises(ValueError, match="--only"):
        grid_cells(select_settings(), base)


def test_applicability():
    base = Config()
    watched = _Watched(None)
    by = {s.short: s for s in DEFAULT_SETTINGS}
    one_lang = StoreStats(documents=3, chunks=3, by_lang={"ko": 3}, by_source={"": 3}, by_doc_type={"": 3})
    for key in ("language_projection", "source_weights", "half_life_days"):
        assert applicability(by[key], one_lang, watched, base)
    assert applicability(by["rrf_k"], one_lang, watched, base) is None
    mixed = StoreStats(documents=4, chunks=4, by_lang={"ko": 2, "en": 2}, by_source={"DART": 1, "news": 3},
                       by_doc_type={"news": 3, "filing": 1})
    assert applicability(by["language_centering"], mixed, watched, base) is None
    assert applicability(by["source_weights"], mixed, watched, base) is None
    assert "date" in applicability(by["half_life_days"], mixed, watched, base)   # no dated results seen
    watched.dates["news"] = ["2026-01-02"]
    assert applicability(by["half_life_days"], mixed, watched, base) is None
    only_news = StoreStats(documents=1, chunks=1, by_source={"news": 1})
    assert "same weight" in applicability(by["source_weights"], only_news, watched, base)
    assert "heading vectors" in applicability(by["heading_list"], mixed, watched, base)


def test_watched_base_run_notices_the_heading_list(corpus_index):
    watched = _Watched(corpus_index)
    watched.search("tire pressure")
    assert watched.headings   # the fixture corpus has headings, so the base run uses the list
    by = {s.short: s for s in DEFAULT_SETTINGS}
    assert applicability(by["heading_list"], corpus_index.store.stats(), watched, Config()) is None


def test_sweep_on_the_corpus(corpus_index, encoder, query_memo, corpus_questions, tmp_path):
    index = Index(corpus_index.store, Config(), encoder=query_memo)
    settings = select_settings(["rrf_k", "chunk_cap", "half_life_days"], ["rrf_k=10,20", "chunk_cap=0,1"])
    variant = Index(corpus_index.store, Config(), encoder=query_memo)
    err = io.StringIO()
    out = tmp_path / "sweep"
    result = sweep(index, corpus_questions, out, settings=settings, variants=[("store", "same", variant)],
                   resamples=2000, stream=err)

    cells = ["rrf_k=10", "chunk_cap=0", "half_life_days=production", "store=same"]
    for d in ["base", *cells]:
        assert (out / d / "records.jsonl").exists()
    log = err.getvalue()
    assert all(f"{i}/4 {c}:" in log for i, c in enumerate(cells, 1))

    rows = {(r["setting"], r["value"]): r for r in result["rows"]}
    assert set(rows) == {("rrf_k", "10"), ("rrf_k", "20"), ("chunk_cap", "0"), ("chunk_cap", "1"),
                         ("half_life_days", "none"), ("half_life_days", "production"), ("store", "same")}
    assert rows[("rrf_k", "20")]["base"] and rows[("chunk_cap", "1")]["dir"] == "base"

    base_metrics = question_metrics(out / "base")
    for (setting, value), r in rows.items():
        meta, _ = read_records(out / r["dir"])
        search = meta["config"]["search"]
        if setting == "rrf_k" and value == "10":
            assert search["rrf_k"] == 10.0 and search["chunk_cap"] == 1
        if setting == "chunk_cap" and value == "0":
            assert search["chunk_cap"] == 0 and search["rrf_k"] == 20.0
        summary = report(out / r["dir"])
        assert r["metrics"] == {m: summary["metrics"][m] for m in SWEEP_METRICS}
        if not r["base"]:
            again = compare_runs(base_metrics, question_metrics(out / r["dir"]), SWEEP_METRICS, resamples=2000)
            assert r["comparisons"]["nDCG@10"] == again[0].to_dict()
            assert r["verdict"] == again[0].verdict

    same = rows[("store", "same")]                                 # the same store as a variant: no difference
    assert same["metrics"] == rows[("rrf_k", "20")]["metrics"] and same["comparisons"]["nDCG@10"]["diff"] == 0

    # freshness is measured from the newest date the base run retrieved, so the sweep repeats
    _, base_records = read_records(out / "base")
    seen = {d for rec in base_records for d in rec["ranked"]}
    fresh = rows[("half_life_days", "production")]
    assert fresh["changes"]["search.now"] == max(DATES[d] for d in seen if d in DATES)

    # the cache did not change results: chunk_cap=0 run afresh with the plain encoder gives the same rankings
    cfg = Config()
    cfg.search.chunk_cap = 0
    plain = evaluate(Index(corpus_index.store, cfg, encoder=encoder), corpus_questions, tmp_path / "plain",
                     progress_every=0, stream=None)
    _, cached = read_records(out / "chunk_cap=0")
    _, fresh_records = read_records(tmp_path / "plain")
    assert [r["ranked"] for r in cached] == [r["ranked"] for r in fresh_records]
    assert plain["metrics"] == report(out / "chunk_cap=0")["metrics"]

    saved = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert saved["rows"] == json.loads(json.dumps(result["rows"])) and saved["skipped"] == []
    md = (out / "sweep.md").read_text(encoding="utf-8")
    assert "| Setting | Value | nDCG@10 |" in md and "| rrf_k | 10 |" in md and "**20** (base)" in md
    table = format_table(result)
    assert table.splitlines()[0].split()[:3] == ["Setting", "Value", "nDCG@10"]


def test_sweep_command(corpus_index, query_memo, corpus_questions, tmp_path, capsys):
    from chaja.eval.questions import write_questions

    write_questions(tmp_path / "q.jsonl", corpus_questions)

    def open_index(store, config):
        return Index.open(store, config, encoder=query_memo)

    store = str(corpus_index.store.path)
    argv = ["eval", "sweep", "--store", store, "--questions", str(tmp_path / "q.jsonl"), "--out",
            str(tmp_path / "s"), "--only", "gate", "--set", "search.rrf_k=60", "--resamples", "500",
            "--variant", f"again={store}"]
    assert main(argv, open_index=open_index) == 0
    out = capsys.readouterr().out
    assert "gate" in out and "on (base)" in out and "again" in out
    saved = json.loads((tmp_path / "s" / "sweep.json").read_text(encoding="utf-8"))
    assert saved["base"]["config"]["search"]["rrf_k"] == 60.0
    assert [r["dir"] for r in saved["rows"]] == ["base", "gate=off", "store=again"]
    assert main(["eval", "sweep", "--store", store, "--questions", str(tmp_path / "q.jsonl"), "--out",
                 str(tmp_path / "t"), "--only", "index.analyzer"], open_index=open_index) == 2


def test_parse_variant():
    assert parse_variant("analyzer=kiwi=kiwi.chaja") == ("analyzer", "kiwi", "kiwi.chaja")
    assert parse_variant("analyzer=kiwi=postgresql://h/db?sslmode=require") == \
        ("analyzer", "kiwi", "postgresql://h/db?sslmode=require")
    assert parse_variant("kiwi=kiwi.chaja") == ("store", "kiwi", "kiwi.chaja")
    with pytest.raises(ValueError):
        parse_variant("kiwi.chaja")


def test_setting_labels():
    s = Setting("search.gate", (True, False))
    assert (s.label(True), s.label(False)) == ("on", "off")
    assert Setting("search.rrf_k", (20.0,)).label(20.0) == "20"
    assert Setting("search.heading_weight", (1.5,)).label(1.5) == "1.5"


def test_grid_sweep_keeps_a_base_row(corpus_index, query_memo, corpus_questions, tmp_path):
    index = Index(corpus_index.store, Config(), encoder=query_memo)
    settings = select_settings(["rrf_k", "gate"], ["rrf_k=10,60"])     # the base k = 20 is not listed
    result = sweep(index, corpus_questions[:6], tmp_path / "g", settings=settings, grid=True,
                   resamples=500, stream=None)
    assert result["mode"] == "grid"
    assert [(r["setting"], r["value"], r["dir"]) for r in result["rows"]] == [
        ("base", "", "base"),
        ("rrf_k,gate", "10,on", "rrf_k=10,gate=on"), ("rrf_k,gate", "10,off", "rrf_k=10,gate=off"),
        ("rrf_k,gate", "60,on", "rrf_k=60,gate=on"), ("rrf_k,gate", "60,off", "rrf_k=60,gate=off")]
    meta, _ = read_records(tmp_path / "g" / "rrf_k=60,gate=off")
    assert meta["config"]["search"]["rrf_k"] == 60.0 and meta["config"]["search"]["gate"] is False
