"""The Index: statistics kept in step with the stored vectors, per-search settings and
filters, read-only opening."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

import chaja
from chaja.language_means import META_KEY, decode_means


def _means_match_vectors(idx) -> bool:
    recorded = decode_means(idx.store.get_meta(META_KEY), min_chunks=1)
    actual = {lang: mean for lang, (_, mean) in idx.store.language_means().items()}
    return set(recorded) == set(actual) and all(
        abs(recorded[k] - actual[k]).max() < 1e-5 for k in actual)


def test_statistics_left_behind_by_a_crash_are_recomputed(tmp_path, corpus, encoder):
    """A run that dies after its last document commits, before the statistics: the next
    run finds every document unchanged and still brings the statistics up to date."""
    src = tmp_path / "docs"
    shutil.copytree(corpus, src)
    late = src / "late.md"
    late.write_text("# 늦은 문서\n\n충돌 직전에 저장된 문서입니다. It was stored just before the crash.\n",
                    encoding="utf-8")
    with chaja.open(tmp_path / "s.chaja", encoder=encoder) as idx:
        moved = late.rename(tmp_path / "late.md")
        idx.add([src])
        assert _means_match_vectors(idx)
        # the crashed run: the document is stored, the statistics are not updated
        from chaja.loaders import load_paths
        from chaja.ingest import index_documents
        index_documents(idx.store, idx.encoder, list(load_paths([moved])), idx.analyzer,
                        aligned_encoder=idx.aligned_encoder)
        assert not _means_match_vectors(idx)
        moved.rename(late)
        report = idx.add([src])
        assert report.added == report.changed == 0
        assert _means_match_vectors(idx)


def test_settings_for_one_search_leave_the_config_alone(corpus_index):
    before = corpus_index.config.search.mode
    res = corpus_index.search("타이어 공기압", settings={"mode": "keyword"})
    assert res.lists == ["keyword"] and corpus_index.config.search.mode == before
    with pytest.raises(ValueError, match="only search settings"):
        corpus_index.search("타이어", settings={"index.analyzer": "kiwi"})


def test_filters_in_the_library(corpus_index):
    res = corpus_index.search("dividend 배당", filters={"lang": "en"})
    assert res.documents and {d.best.chunk.lang for d in res.documents} == {"en"}


def test_refresh_catches_up_with_another_index_writing_the_same_store(corpus_index, tmp_path, encoder):
    path = tmp_path / "copy.chaja"
    shutil.copy(corpus_index.store.path, path)
    with chaja.open(path, encoder=encoder) as reader, chaja.open(path, encoder=encoder) as writer:
        question = "how do I remove limescale from my kettle"
        assert "kettle" not in [d.doc_id for d in reader.search(question, 5).documents]
        assert reader.refresh() is False                      # nothing written since it looked
        page = tmp_path / "kettle.md"
        page.write_text("# Kettle descaling\n\nFill the kettle with equal parts white vinegar and water, "
                        "boil, leave it for an hour, then rinse twice.\n", encoding="utf-8")
        writer.add([page])
        assert reader.refresh() is True
        assert reader.refresh() is False
        found = [d for d in reader.search(question, 5).documents if d.doc_id == "kettle"]
        assert found and found[0].best.vector_rank is not None


def test_the_translation_lexicon_is_recorded_for_a_store_of_two_languages_only(tmp_path, corpus, encoder):
    """A bilingual store records its lexicon with the statistics, and a store indexed before
    it had one gets it on the next run, with nothing to index; a store of one language records none."""
    from chaja.search import lexicon

    with chaja.open(tmp_path / "two.chaja", encoder=encoder) as idx:
        idx.add([corpus])
        lex = lexicon.decode(idx.store.get_meta(lexicon.META_KEY))
        assert lex is not None and {"en", "ko"} <= set(lex.languages)
        assert {("en", "ko"), ("ko", "en")} <= set(lex.nearest)        # each word's translation, looked up
        idx.store._db.execute("DELETE FROM meta WHERE key = ?", (lexicon.META_KEY,))
        idx.store._db.commit()
        report = idx.add([corpus])
        assert report.added == report.changed == 0
        again = lexicon.decode(idx.store.get_meta(lexicon.META_KEY))
        assert again is not None and again.words == lex.words
        for pair, (rows, _) in lex.nearest.items():
            np.testing.assert_array_equal(again.nearest[pair][0], rows)
        assert isinstance(idx.store.get_meta(lexicon.META_KEY), bytes)     # packed (chaja.meta_arrays)
        raw = json.loads(lexicon.encode(again))          # its text form, as recorded before the tables
        for entry in raw.values():
            del entry["nearest"]                   # as recorded before the nearest-word tables
        idx.store.set_meta(lexicon.META_KEY, json.dumps(raw, ensure_ascii=False))
        assert not lexicon.is_current(idx.store.get_meta(lexicon.META_KEY))
        idx.add([corpus])                          # nothing to index: the tables are added
        assert set(lexicon.decode(idx.store.get_meta(lexicon.META_KEY)).nearest) == set(lex.nearest)
        idx.store.set_meta(lexicon.META_KEY, lexicon.encode(lex))   # current, as text (base64 JSON)
        idx.add([corpus])                          # nothing to index: packed, from its own vectors
        assert isinstance(idx.store.get_meta(lexicon.META_KEY), bytes)
        assert lexicon.decode(idx.store.get_meta(lexicon.META_KEY)).words == lex.words
    one = tmp_path / "ko"
    one.mkdir()
    (one / "a.md").write_text("# 보증\n\n보증 기간은 구입일로부터 2년입니다. 보증 기간 안에는 무상 수리를 받습니다.\n",
                              encoding="utf-8")
    with chaja.open(tmp_path / "one.chaja", encoder=encoder) as idx:
        idx.add([one])
        assert idx.store.get_meta(lexicon.META_KEY) == ""
        assert idx.searcher().lexicon is None
        assert "translated" not in " ".join(idx.search("보증 기간", top_k=3).lists)


def test_progress_names_the_finishing_steps_after_the_last_document(tmp_path, corpus, encoder):
    seen = []
    with chaja.open(tmp_path / "p.chaja", encoder=encoder) as idx:
        idx.add([corpus], progress=seen.append)
        total = idx.store.stats().documents
    stages = [p.stage for p in seen]
    finishing = stages[stages.index("vector statistics"):]
    # (the chunks written before the run met its second language get their aligned vectors first)
    assert set(stages[:stages.index("vector statistics")]) <= {"encoding", "aligned vectors"}
    assert finishing[:2] == ["vector statistics", "translation lexicon"]     # Korean and English
    assert "keyword postings" in finishing and "vectors chunk" in finishing
    assert all(p.documents_done == p.documents_total == total for p in seen if p.stage != "encoding")


def test_the_reports_seconds_cover_the_statistics_and_compaction_after_the_documents(tmp_path, corpus, encoder,
                                                                                     monkeypatch):
    """`chaja index` printed the documents' time alone ("time: 0.5 s" for a 2.2 s run on a
    large store): the report's seconds are the whole run's. On a clock that moves only
    while the statistics are recorded (5 s), the report says 5 s."""
    import types

    import chaja.index
    from chaja import store_statistics
    now = [100.0]
    monkeypatch.setattr(chaja.index, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    real = store_statistics.record

    def slower(*args, **kwargs):
        real(*args, **kwargs)
        now[0] += 5.0
    monkeypatch.setattr(store_statistics, "record", slower)
    with chaja.open(tmp_path / "p.chaja", encoder=encoder) as idx:
        report = idx.add([corpus])
    assert report.seconds == 5.0                        # the documents' own time is not this clock's


def test_the_report_names_every_file_not_read_and_a_prune_that_would_lose_documents_removes_none(
        tmp_path, corpus, encoder):
    src = tmp_path / "docs"
    shutil.copytree(corpus, src)
    (src / "tool.md").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(120))
    (src / "notes.xyz").write_text("not a type chaja reads", encoding="utf-8")
    with chaja.open(tmp_path / "s.chaja", encoder=encoder) as idx:
        report = idx.add([src])
        reasons = {Path(s.path).name: s.reason for s in report.skipped}
        assert reasons == {"tool.md": "looks like an executable (ELF), not a document",
                           "notes.xyz": "a type chaja does not read (.xyz)"}
        assert report.files == 8 and report.added == 9      # news.jsonl holds two
        stored = idx.store.stats().documents
        # a typo'd path: nothing is read, so nothing is pruned
        report = idx.add([tmp_path / "no-such-folder"], prune=True)
        assert report.removed == 0 and "does not exist" in report.prune_refused
        # a file that could not be read: its documents are not taken for gone
        (src / "news.jsonl").write_text('{"id": "x", "text": "half a line', encoding="utf-8")
        report = idx.add([src], prune=True)
        assert report.removed == 0 and "could not be read" in report.prune_refused
        assert idx.store.stats().documents == stored
        # once every file reads again, a prune removes what is truly gone
        (src / "manuals" / "bicycle.md").unlink()
        shutil.copy(corpus / "news.jsonl", src / "news.jsonl")
        report = idx.add([src], prune=True)
        assert report.removed == 1 and not report.prune_refused
