"""A compaction killed (SIGKILL) or interrupted (SIGINT) in each of its steps: the keyword
postings, a field's vector file, a graph updated in place and a graph built anew. A
real process compacts a real store, printing each step as it starts and waiting for a
word from the test before it goes on; the signal comes while it waits or a few
milliseconds into the step (a step that finished first is tried again), so it lands
inside the compaction however loaded the machine is. After it, the store is whole, keeps every
document committed before the compaction, answers vector searches as exact search
does, and the next compaction finishes with no graph left deferred."""
from __future__ import annotations

import json

import random
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from chaja.stores import sqlite_ann, sqlite_vectors
from chaja.stores.sqlite import SqliteStore

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sqlite_ann.available(), reason="usearch is not installed: pip install 'chaja[ann]'")]

THRESHOLD = 500
DIM = 16

#: a child that writes ``n`` documents under ``prefix``, commits them, then compacts,
#: printing each step and waiting for a line on stdin (argv: store, prefix, n, seed, full_graphs)
COMPACTING = textwrap.dedent("""
    import signal
    import sys
    signal.signal(signal.SIGINT, signal.default_int_handler)   # as a terminal gives it, however started
    import numpy as np
    from chaja.documents import Chunk, ChunkRecord, Document, Section
    from chaja.stores.sqlite import SqliteStore

    path, prefix, n, seed, full = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, %(dim)d)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    items = []
    for i, v in enumerate(x):
        did = f"{prefix}{i}"
        c = Chunk(id=f"{did}#0", doc_id=did, ordinal=0, title=did, heading_path=(), text="본문 내용", lang="ko")
        items.append((Document(id=did, title=did, sections=[Section((), "본문 내용")], lang="ko"),
                      [ChunkRecord(c, [did], [], ["본문", "내용"], v)]))
    store = SqliteStore(path, ann_threshold=%(threshold)d)
    store.put_documents(items)
    print("committed", flush=True)
    store.compact(force=True, full_graphs=full,
                  progress=lambda step: (print(step, flush=True), sys.stdin.readline()))
    store.close()
    print("done", flush=True)
""") % {"dim": DIM, "threshold": THRESHOLD}


def compacting(path, prefix: str, n: int, seed: int, full: bool) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", COMPACTING, str(path), prefix, str(n), str(seed), "1" if full else "0"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def exact_top(store: SqliteStore, q: np.ndarray, n: int) -> list[str]:
    mat, ids, _ = store._vectors("chunk")
    scores = mat @ q
    return [ids[i] for i in np.argsort(-scores, kind="stable")[:n]]


def searches_as_exact_search_does(store: SqliteStore) -> float:
    rng = np.random.default_rng(9)
    recall = []
    for _ in range(30):
        q = rng.standard_normal(DIM).astype(np.float32)
        q /= np.linalg.norm(q)
        got = {h.chunk_id for h in store.vector(q, 10)}
        recall.append(len(got & set(exact_top(store, q, 10))) / 10)
    return float(np.mean(recall))


@pytest.fixture
def base(tmp_path):
    """A store of 2,000 documents, compacted, its chunk field searched by a graph."""
    path = tmp_path / "c.chaja"
    proc = compacting(path, "base-", 2000, 1, True)
    out = proc.communicate(timeout=300)[0]
    assert proc.returncode == 0 and "done" in out, out
    with SqliteStore(path, ann_threshold=THRESHOLD) as s:
        assert s.deferred_graphs() == [] and sqlite_ann.graph_path(path, "chunk").exists()
    return path


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
@pytest.mark.parametrize("step, full", [("keyword postings", False), ("vectors chunk", False),
                                        ("graph chunk:", False), ("graph chunk (", True)],
                         ids=["keyword-postings", "vector-file", "graph-update", "graph-build"])
def test_a_compaction_stopped_in_a_step_leaves_the_store_whole(base, step, full, sig):
    rng = random.Random(f"{step}{sig}")
    landed = False
    with SqliteStore(base, ann_threshold=THRESHOLD) as s:
        before = set(s.fingerprints())
    for attempt in range(4):                     # a step that finished first is tried again with more
        proc = compacting(base, f"new{attempt}-", 400, 10 + attempt, full)
        lines = []
        for line in proc.stdout:
            lines.append(line.strip())
            if line.startswith(step):
                if attempt < 3 and rng.random() < 0.5:     # a few milliseconds into the step
                    proc.stdin.write("\n")
                    proc.stdin.flush()
                    time.sleep(rng.uniform(0.0, 0.005))
                proc.send_signal(sig)                      # else: as the step begins
                break
            if line.strip() not in ("committed", "done"):
                proc.stdin.write("\n")                    # an earlier step: go on
                proc.stdin.flush()
        for line in proc.stdout:
            # a later step began: the Ctrl-C was lost (one landing inside a C extension's
            # import, as onnxruntime's, can be), so it is pressed again, as a person would
            lines.append(line.strip())
            if line.strip() != "done":
                proc.send_signal(sig)
        proc.wait(60)
        proc.stdin.close()
        assert "committed" in lines, lines
        before |= {f"new{attempt}-{i}" for i in range(400)}
        if proc.returncode != 0:
            landed = True
            break
    assert landed, f"the signal never landed in {step!r}: {lines}"
    with SqliteStore(base, ann_threshold=THRESHOLD) as s:
        assert s.check() == []
        assert set(s.fingerprints()) == before       # all committed, nothing lost
        assert searches_as_exact_search_does(s) >= 0.97
        assert s.compact(force=True)
        assert s.deferred_graphs() == []
        assert searches_as_exact_search_does(s) >= 0.97
        # every vector once: in the one file its field's record names, none left in rows or strays
        records = [s.get_meta(sqlite_vectors.record_key(f)) for f in ("chunk", "heading", "aligned", "aligned_heading")]
        recorded = {json.loads(r)["file"] for r in records if r}
        assert recorded
        assert {p.name for p in sqlite_vectors.files_of(base)} == recorded
        assert s._db.execute("SELECT count(*) FROM chunks WHERE length(vector) > 0").fetchone() == (0,)
    with SqliteStore(base, ann_threshold=THRESHOLD) as s:  # and another process sees it so
        assert s.check() == [] and s.deferred_graphs() == [] and searches_as_exact_search_does(s) >= 0.97
