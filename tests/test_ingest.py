"""Indexing: idempotent re-index, replace, prune, and a crash mid-ingest."""
import shutil

import pytest

import chaja
from chaja.documents import Document, Section


class CountingEncoder:
    """The real encoder, counting passages (to prove unchanged documents are not re-encoded)."""

    def __init__(self, inner, fail_after=None):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.passages = 0
        self.fail_after = fail_after

    def encode_queries(self, texts):
        return self.inner.encode_queries(texts)

    def encode_passages(self, texts):
        if self.fail_after is not None and self.passages + len(texts) > self.fail_after:
            raise KeyboardInterrupt("simulated crash")
        self.passages += len(texts)
        return self.inner.encode_passages(texts)


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
