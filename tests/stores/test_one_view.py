"""One view for several reads: inside ``reading()`` a SQLite store reads the change log's
mark once, not before every read."""
from __future__ import annotations

import numpy as np

from chaja.analysis import bigram_terms
from chaja.stores.sqlite import SqliteStore


def _mark_reads(store: SqliteStore, reads) -> int:
    seen = []
    store._db.set_trace_callback(lambda sql: seen.append(sql) if "sqlite_sequence" in sql else None)
    try:
        reads()
    finally:
        store._db.set_trace_callback(None)
    return len(seen)


def test_a_block_of_reads_reads_the_mark_once(tmp_path, build):
    store = SqliteStore(tmp_path / "s.chaja")
    for i in range(3):
        store.put_document(*build.make_doc(f"d{i}", "문서", ["배당금 지급 일정", "이사회 결의"]))
    q = np.asarray(build.unit("d0#0"), np.float32)

    def reads():
        store.keyword(bigram_terms("배당금"), 5)
        store.vector(q, 5)
        store.chunk_terms(["d0#0", "d1#1"])
        store.vector_scores(q, ["d2#0"])
        store.chunks(["d0#0"])

    assert _mark_reads(store, reads) >= 5                  # each read asks on its own

    def in_one_view():
        with store.reading():
            reads()

    assert _mark_reads(store, in_one_view) == 1
    store.close()
