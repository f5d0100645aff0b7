"""Indexing: idempotent re-index, replace, prune, and a crash mid-ingest."""
import shutil

import numpy as np
import pytest

import chaja
from chaja.documents import Document, Section

from ingesting import CountingEncoder, long_document, small_batches


def test_reindex_is_idempotent_and_replaces_changed(tmp_path, encoder, corpus):
    docs = tmp_path / "docs"
    shutil.copytree(corpus, docs)
    enc = CountingEncoder(encoder)
    with chaja.open(tmp_path / "s.chaja", encoder=enc) as idx:
        first = idx.add([docs])
        n = enc.passages
        assert first.added == 9 and n > 0
        again = idx.add([docs])
        assert (again.added, again.changed, again.unchanged) == (0, 0, 9)
        assert enc.passages == n
        (docs / "manuals" / "bicycle.md").write_text("---\ntitle: 자전거\n---\n\n## 브레이크\n\n브레이크 패드를 교체합니다.\n",
                                                    encoding="utf-8")
        (docs / "manuals" / "notes.txt").unlink()
        third = idx.add([docs], prune=True)
        assert (third.changed, third.unchanged, third.removed) == (1, 7, 1)
        assert enc.passages == n + 2  # the changed document's one chunk, and its heading
        assert "manuals/notes" not in idx.store.fingerprints()
        assert idx.search("브레이크 패드").documents[0].doc_id == "manuals/bicycle"
        assert not any(c.chunk.text.startswith("체인") for c in idx.search("체인 청소").chunks)


def test_reopen_keeps_everything(tmp_path, encoder, corpus):
    path = tmp_path / "s.chaja"
    with chaja.open(path, encoder=encoder) as idx:
        idx.add([corpus / "filings"])
        fp = idx.fingerprint()
    with chaja.open(path, encoder=encoder) as idx:
        assert idx.fingerprint() == fp
        assert idx.store.stats().documents == 3
        assert idx.search("유상증자").documents[0].doc_id == "rights-issue"


def test_crash_mid_ingest_leaves_a_consistent_store(tmp_path, encoder):
    docs = [Document(id=f"d{i}", title=f"문서 {i}", sections=[Section((), f"본문 {i} " * 20)], lang="ko")
            for i in range(6)]
    path = tmp_path / "s.chaja"
    idx = chaja.open(path, encoder=CountingEncoder(encoder, fail_after=4))
    idx.config.encoder.batch_size = 1   # passages are encoded 4 at a time: the second batch fails
    with pytest.raises(KeyboardInterrupt):
        idx.add_documents(docs)
    idx.close()
    with chaja.open(path, encoder=encoder) as again:
        assert set(again.store.fingerprints()) == {"d0", "d1", "d2", "d3"}
        s = again.store.stats()
        assert s.chunks == s.documents == 4   # every stored document is whole
        report = again.add_documents(docs)
        assert (report.added, report.unchanged) == (2, 4)
        assert again.store.stats().documents == 6


def test_store_refuses_another_model(tmp_path, encoder, corpus):
    class Other(CountingEncoder):
        pass
    other = Other(encoder)
    other.name = "some-other-model@x"
    path = tmp_path / "s.chaja"
    with chaja.open(path, encoder=encoder) as idx:
        idx.add([corpus / "filings"])
    with chaja.open(path, encoder=other) as idx:
        with pytest.raises(chaja.index.StoreError, match="indexed with"):
            idx.search("유상증자")


def stored_chunks(path):
    with chaja.open(path) as idx:
        rows = idx.store._db.execute("SELECT id, text, vector, aligned_vector FROM chunks ORDER BY id").fetchall()
    return rows


def test_a_long_document_is_staged_in_batches_and_shown_only_whole(tmp_path, encoder):
    path = tmp_path / "s.chaja"
    seen = []
    with chaja.open(path, encoder=encoder) as idx, chaja.open(path, encoder=encoder) as reader:
        small_batches(idx)

        def watch(p):   # a reader beside the writer, at every step of the long document
            seen.append((p.chunks_done, reader.store.stats().documents, sum(reader.store.staged().values())))

        report = idx.add_documents([long_document()], progress=watch)
        assert (report.added, report.chunks) == (1, 24)
        staged_steps = [s for s in seen if s[2]]
        assert len(staged_steps) >= 2 and all(docs == 0 for _, docs, _ in staged_steps)
        assert [s for _, _, s in staged_steps] == sorted(s for _, _, s in staged_steps)   # batch after batch
        assert seen[-1][1:] == (1, 0)              # published whole, nothing left staged
        assert idx.check() == []
        assert idx.search("배수 펌프 필터 청소").documents[0].doc_id == "long"
    # the same document written in one transaction stores the same chunks and vectors
    whole = tmp_path / "whole.chaja"
    with chaja.open(whole, encoder=encoder) as idx:
        idx.config.index.chunk_chars = 100      # batches of 128: no staging
        idx.add_documents([long_document()])
    a, b = stored_chunks(path), stored_chunks(whole)
    assert [r[:2] for r in a] == [r[:2] for r in b]
    for x, y in zip(a, b):
        assert np.allclose(np.frombuffer(x[2], np.float32), np.frombuffer(y[2], np.float32), atol=1e-5)
        assert x[3] is None and y[3] is None        # a store of one language: no aligned vectors


def crash_while_staging(path, encoder, doc: Document) -> int:
    """Index ``doc`` with an encoder that fails in its third batch; the chunks left staged."""
    idx = chaja.open(path, encoder=CountingEncoder(encoder, fail_after=20))
    small_batches(idx)
    with pytest.raises(KeyboardInterrupt):
        idx.add_documents([doc])
    staged = idx.store.staged()
    assert idx.store.stats().documents == 0                      # not shown in part
    idx.close()
    return staged[doc.id]


def test_an_interrupted_long_document_resumes_after_its_staged_batches(tmp_path, encoder):
    path = tmp_path / "s.chaja"
    staged = crash_while_staging(path, encoder, long_document())
    assert staged == 16                                          # two batches of 8 committed
    counting = CountingEncoder(encoder)
    with chaja.open(path, encoder=counting) as idx:
        small_batches(idx)
        report = idx.add_documents([long_document()])
        assert (report.added, report.chunks) == (1, 24)
        assert counting.passages == 24 - staged                  # only what was not staged is encoded
        assert idx.store.staged() == {} and idx.check() == []
    clean = tmp_path / "clean.chaja"
    with chaja.open(clean, encoder=encoder) as idx:
        small_batches(idx)
        idx.add_documents([long_document()])
    a, b = stored_chunks(path), stored_chunks(clean)
    assert [r[:2] for r in a] == [r[:2] for r in b]
    assert all(np.allclose(np.frombuffer(x[2], np.float32), np.frombuffer(y[2], np.float32), atol=1e-5)
               for x, y in zip(a, b))


def test_a_changed_long_document_does_not_resume_from_the_old_versions_batches(tmp_path, encoder):
    path = tmp_path / "s.chaja"
    crash_while_staging(path, encoder, long_document(24))
    changed = long_document(20)
    changed.sections[0] = Section((), changed.sections[0].text.replace("청소한", "교체한"))
    counting = CountingEncoder(encoder)
    with chaja.open(path, encoder=counting) as idx:
        small_batches(idx)
        assert idx.add_documents([changed]).added == 1
        assert counting.passages == 20                           # encoded afresh
        assert idx.store.staged() == {} and idx.store.stats().chunks == 20
        assert all("교체한" in c.text for c in idx.store.chunks([f"long#{i}" for i in range(20)]).values())


def test_a_long_document_replaces_its_stored_version_in_one_step(tmp_path, encoder):
    path = tmp_path / "s.chaja"
    with chaja.open(path, encoder=encoder) as idx:
        small_batches(idx)
        idx.add_documents([long_document(12)])
        idx.add_documents([long_document(30)])
        assert idx.store.stats().chunks == 30 and idx.store.stats().documents == 1
        assert idx.check() == []


def test_prune_discards_what_an_interrupted_run_staged_for_a_document_no_longer_given(tmp_path, encoder):
    path = tmp_path / "s.chaja"
    crash_while_staging(path, encoder, long_document())
    short = Document(id="short", title="짧은 문서", sections=[Section((), "필터 청소 기록")], lang="ko")
    with chaja.open(path, encoder=encoder) as idx:
        small_batches(idx)
        kept = idx.add_documents([short])                      # without prune the staged rows stay
        assert kept.discarded_staged == 0 and idx.store.staged() == {"long": 16}
        report = idx.add_documents([short], prune=True)
        assert report.discarded_staged == 16 and idx.store.staged() == {}
        assert set(idx.store.fingerprints()) == {"short"}


def test_an_id_no_store_can_keep_is_refused_alike(tmp_path):
    """PostgreSQL strips NUL, so "ab" and "a\\x00b" would become one document there:
    every store refuses such an id, and a blank one, and keeps the rest."""
    import chaja
    from chaja.documents import Document, Section

    docs = [Document(id=i, title="t", sections=[Section((), f"본문 {n}")], lang="ko")
            for n, i in enumerate(["ab", "a\x00b", "  "])]
    with chaja.open(tmp_path / "s.chaja") as idx:
        report = idx.add_documents(docs)
        assert report.added == 1 and set(idx.store.fingerprints()) == {"ab"}
        assert len(report.refused) == 2 and "NUL" in report.refused[0]


class ThreadNoting:
    """The real aligned encoder, noting the thread each batch of passages is encoded in."""

    def __init__(self, inner):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.calls: list[tuple[str, list[str]]] = []

    def encode_queries(self, texts):
        return self.inner.encode_queries(texts)

    def encode_passages(self, texts):
        import threading
        self.calls.append((threading.current_thread().name, list(texts)))
        return self.inner.encode_passages(texts)


def test_a_batch_of_two_languages_is_encoded_by_both_encoders_side_by_side(tmp_path, encoder):
    docs = [Document(id=f"d{i}", title=title, sections=[Section((head,), text)], lang=lang)
            for i, (title, head, text, lang) in enumerate([
                ("점검", "배수 펌프", "배수 펌프 필터를 매주 청소합니다.", "ko"),
                ("Maintenance", "Drain pump", "Clean the drain pump filter every week.", "en"),
                ("보증", "기간", "보증 기간은 구입일로부터 2년입니다.", "ko"),
                ("Warranty", "Period", "The warranty lasts two years from the date of purchase.", "en")])]
    ids = [f"d{i}#0" for i in range(4)]
    stored, threads = {}, {}
    for together in (True, False):          # side by side (the default), and in turn (the hub's writer)
        with chaja.open(tmp_path / f"{together}.chaja", encoder=encoder) as idx:
            idx.encoders_side_by_side = together
            noted = idx._aligned = ThreadNoting(idx.aligned_encoder)
            idx.add_documents(docs)
            passages = [c.passage_text() for c in idx.store.chunks(ids).values()]
            threads[together] = {name for name, texts in noted.calls if set(texts) & set(passages)}
            stored[together] = {f: idx.store.stored_vectors(ids, f) for f in ("chunk", "aligned")}
    assert threads[True] and "MainThread" not in threads[True]       # the aligned passages beside e5's
    assert threads[False] == {"MainThread"}
    for field in ("chunk", "aligned"):      # the same vectors either way
        assert sorted(stored[True][field]) == sorted(stored[False][field]) == sorted(ids)
        for cid in ids:
            assert np.allclose(stored[True][field][cid], stored[False][field][cid], atol=1e-6), (field, cid)


@pytest.mark.parametrize("analyzer", ["bigram", "whitespace"])
def test_an_indexed_store_keeps_no_terms_its_analyser_makes_again(tmp_path, encoder, corpus, analyzer):
    import sqlite3
    from pathlib import Path

    from chaja.analysis import get_analyzer
    from chaja.config import Config

    cfg = Config()
    cfg.set("index.analyzer", analyzer)
    path = tmp_path / "s.chaja"
    queries = ["유상증자 신주", "warranty period", "필터 세척", "router password reset", "배당 기준일"]
    with chaja.open(path, cfg, encoder=encoder) as idx:
        idx.add([corpus])
        assert idx.store.get_meta("terms.derived") == analyzer
        fed = {q: idx.store.keyword(get_analyzer(analyzer)(q), 10) for q in queries}
        assert any(fed.values())
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM chunk_terms").fetchone()[0] == 0
    Path(f"{path}-keywords").unlink(missing_ok=True)       # rebuilt from the chunks' text
    with chaja.open(path, cfg, encoder=encoder) as idx:
        assert {q: idx.store.keyword(get_analyzer(analyzer)(q), 10) for q in queries} == fed
