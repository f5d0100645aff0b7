"""Writing documents to the SQLite store (:mod:`chaja.stores.sqlite_writes`)."""
import numpy as np

from chaja.analysis import bigram_terms
from chaja.documents import Chunk, ChunkRecord, Document, Section
from chaja.stores.sqlite import SqliteStore


def test_a_batch_replaces_stored_documents_and_its_own_repeats(tmp_path):
    def doc(doc_id, body):
        d = Document(id=doc_id, title=doc_id, sections=[Section((), body)], lang="ko")
        c = Chunk(id=f"{doc_id}#0", doc_id=doc_id, ordinal=0, title=doc_id, heading_path=(), text=body, lang="ko")
        return d, [ChunkRecord(c, [doc_id], [], bigram_terms(body), np.ones(4, np.float32) / 2)]

    with SqliteStore(tmp_path / "s.chaja") as s:
        s.put_documents([doc("a", "처음"), doc("b", "처음")])
        s.put_documents([doc("a", "두번째"), doc("c", "새것"), doc("c", "새것 다시")])
        assert s.stats().documents == 3 and s.stats().chunks == 3
        assert s.chunks(["a#0", "c#0"])["a#0"].text == "두번째" and s.chunks(["c#0"])["c#0"].text == "새것 다시"
        assert [h.chunk_id for h in s.keyword(["처음"], 5)] == ["b#0"]
