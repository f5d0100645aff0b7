"""HNSW graphs for the SQLite store's vector fields (usearch, the ``ann`` extra): used
above the threshold, rescored exactly, kept right through writes made after the graph
(by this store object or another), and never used when they do not match the store."""
from __future__ import annotations

import json

import numpy as np
import pytest

from chaja.documents import Chunk, ChunkRecord, Document, Section
from chaja.stores import sqlite_ann
from chaja.stores.sqlite import SqliteStore

from vectors_kept import holds, numbers

# not importorskip: usearch must be imported the way chaja imports it (after onnxruntime)
pytestmark = pytest.mark.skipif(not sqlite_ann.available(), reason="usearch is not installed: pip install 'chaja[ann]'")
DIM = 16


def clustered(n: int, seed: int) -> np.ndarray:
    """Unit vectors in 20 loose clusters (real embeddings are not uniform either)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((20, DIM))
    x = centres[rng.integers(0, 20, n)] + 0.6 * rng.standard_normal((n, DIM))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def docs(vectors: np.ndarray, prefix: str = "d"):
    out = []
    for i, v in enumerate(vectors):
        did = f"{prefix}{i}"
        c = Chunk(id=f"{did}#0", doc_id=did, ordinal=0, title=did, heading_path=(), text="본문", lang="ko")
        out.append((Document(id=did, title=did, sections=[Section((), "본문")], lang="ko"),
                    [ChunkRecord(c, [did], [], ["본문"], v)]))
    return out


def exact(store: SqliteStore, q: np.ndarray, n: int) -> list[str]:
    mat, ids, _ = store._vectors("chunk")
    scores = mat @ q
    return [ids[i] for i in np.lexsort((np.arange(len(ids)), -scores))[:n]]


@pytest.fixture
def store(tmp_path):
    s = SqliteStore(tmp_path / "a.chaja", ann_threshold=500)
    s.put_documents(docs(clustered(3000, 1)))
    assert s.compact(force=True)
    yield s
    s.close()


def test_a_field_above_the_threshold_is_searched_by_its_graph_with_exact_scores(store):
    assert sqlite_ann.graph_path(store.path, "chunk").exists()
    assert store._graph("chunk") is not None and store._graph("heading") is None   # no heading vectors
    queries = clustered(50, 2)
    recall = []
    for q in queries:
        got = store.vector(q, 10)
        want = exact(store, q, 10)
        recall.append(len({h.chunk_id for h in got} & set(want)) / 10)
        mat, ids, _ = store._vectors("chunk")
        row = {c: i for i, c in enumerate(ids)}
        assert [h.score for h in got] == pytest.approx([float(mat[row[h.chunk_id]] @ q) for h in got])
    assert round(np.mean(recall), 9) >= 0.98


def test_a_searched_graph_keeps_no_table_from_key_to_node(store):
    graph = store._graph("chunk")
    key = int(graph.search(clustered(1, 3)[0], 1)[0])
    assert key > 0 and not graph.index.contains(key)     # a walk finds it; nothing looks it up


def test_a_search_rescores_every_candidate_its_walk_holds(store):
    graph = store._graph("chunk")
    assert graph.candidates(1) == graph.expansion == sqlite_ann.EXPANSION_SEARCH
    assert graph.candidates(200) == sqlite_ann.OVERSAMPLE * 200
    # the graph ranks by its int8 copy: asking it for two rows leaves near ties to its
    # rounding (the best row missed for 4–5 of 300 queries); the search rescores its whole
    # walk, so it returns the walk's best row by exact score, or a better member of a group
    mat, _, _ = store._vectors("chunk")
    rowids = store._matrix_rowids["chunk"]
    queries = clustered(300, 5)
    for q in queries:
        walk = np.searchsorted(rowids, graph.search(q, graph.candidates(1)))
        assert store.vector(q, 1)[0].score >= float(np.max(mat[walk] @ q)) - 1e-6
    # (a walk that misses the best row outright: about one query in 500, more on some
    # builds, varying with the threads that built the graph)
    hits = [store.vector(q, 1)[0].chunk_id == exact(store, q, 1)[0] for q in queries]
    assert np.mean(hits) >= 0.95


def test_writes_after_the_graph_are_searched_exactly_until_the_next_compaction(store, tmp_path):
    reader = SqliteStore(store.path, ann_threshold=500)
    try:
        q = clustered(1, 3)[0]
        reader.vector(q, 5)                                         # graph and matrix loaded
        top = exact(store, q, 1)[0]
        store.delete_document(top.split("#")[0])                    # gone: never returned again
        near = q + 0.01 * np.ones(DIM, np.float32)
        store.put_documents(docs(np.stack([near / np.linalg.norm(near)]), prefix="new"))
        for s in (store, reader):                                   # the writer, and another store object
            ids = [h.chunk_id for h in s.vector(q, 5)]
            assert ids[0] == "new0#0" and top not in ids
            assert s._graph("chunk") is not None                    # still the graph, plus the log
        assert store.compact(force=True)
        assert [h.chunk_id for h in reader.vector(q, 1)] == ["new0#0"]
    finally:
        reader.close()


def test_a_graph_that_does_not_cover_the_postings_file_is_not_used(store):
    store.set_meta("ann.chunk", sqlite_ann.meta_value(-5, 3000))
    store._graphs_seq = -1
    assert store._graph("chunk") is None
    q = clustered(1, 4)[0]
    assert [h.chunk_id for h in store.vector(q, 10)] == exact(store, q, 10)


def test_below_the_threshold_there_is_no_graph(tmp_path):
    with SqliteStore(tmp_path / "small.chaja", ann_threshold=500) as s:
        s.put_documents(docs(clustered(100, 5)))
        s.compact(force=True)
        assert not sqlite_ann.graph_path(s.path, "chunk").exists() and s._graph("chunk") is None


def test_the_encoders_load_after_a_graph_search(store):
    """A graph searched before the encoder is loaded (the order a long-lived reader may
    take) must not crash the process, and the search must not load the encoders' runtime
    to avoid it (a process served with query vectors never needs it): run in a fresh
    interpreter."""
    import subprocess
    import sys

    code = ("import numpy as np; from chaja.stores.sqlite import SqliteStore; "
            f"s = SqliteStore({str(store.path)!r}, ann_threshold=500); "
            "s.vector(np.ones(16, np.float32) / 4, 3); assert s._graph('chunk') is not None; "
            "import sys; assert 'onnxruntime' not in sys.modules, 'a graph search loaded onnxruntime'; "
            "import onnxruntime; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-2000:]


def test_the_e5_graphs_hold_vectors_without_their_language_direction(tmp_path):
    """The searcher projects the language direction out of e5 queries; the chunk graph is
    built over vectors projected the same way, so query and points share one space."""
    from chaja.language_means import META_KEY, decode_means, encode_means, language_basis, project_out

    rng = np.random.default_rng(5)
    direction = rng.standard_normal(DIM)
    direction /= np.linalg.norm(direction)
    base = clustered(2000, 6)
    langs = ["ko" if i % 2 else "en" for i in range(2000)]
    vectors = base + 0.8 * np.outer([1.0 if lang == "ko" else -1.0 for lang in langs], direction)
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    items = docs(vectors)
    for (doc, recs), lang in zip(items, langs):
        doc.lang = recs[0].chunk.lang = lang
    s = SqliteStore(tmp_path / "b.chaja", ann_threshold=500)
    try:
        s.put_documents(items)
        s.set_meta(META_KEY, encode_means(s.language_means()))
        assert s.compact(force=True)
        basis = language_basis(decode_means(s.get_meta(META_KEY)))
        assert basis.shape == (1, DIM) and abs(float(basis[0] @ direction)) > 0.9
        assert s._graph("chunk") is not None
        mat, ids, _ = s._vectors("chunk")
        rowids = s._matrix_rowids["chunk"]
        kept = sqlite_ann.usearch_module().Index.restore(str(sqlite_ann.graph_path(s.path, "chunk")), view=True)
        stored = np.asarray(kept.get(rowids[:50].astype(np.uint64)), np.float32)    # looked up by key
        projected = mat[:50] - (mat[:50] @ basis.T) @ basis
        # int8 in the graph: usearch keeps round(127 * v / |v|) of the lifted row [Pv, sqrt(1 - |Pv|^2)]
        stored /= np.linalg.norm(stored, axis=1, keepdims=True)
        assert np.allclose(stored, sqlite_ann.lifted(projected), atol=2e-2)
        assert not np.allclose(stored[:, :DIM], mat[:50], atol=5e-2)
        recall = []
        for q in clustered(40, 7):
            qp = project_out(q, basis)
            got = {h.chunk_id for h in s.vector(qp, 10)}
            want = [ids[i] for i in np.argsort(-(mat @ qp))[:10]]
            recall.append(len(got & set(want)) / 10)
        assert round(np.mean(recall), 9) >= 0.97
        assert json.loads(s.get_meta("ann.chunk"))["projected"] is True
        # a query that keeps its language component is searched in the graph's space, wider
        recall = []
        for q in clustered(40, 8):
            got = {h.chunk_id for h in s.vector(q, 10)}
            want = [ids[i] for i in np.argsort(-(mat @ q))[:10]]
            recall.append(len(got & set(want)) / 10)
        assert round(np.mean(recall), 9) >= 0.9       # 0.58 when it asks for n rows only
        graph = s._graph("chunk")
        assert graph.index.expansion_search == int(sqlite_ann.RAW_QUERY_WIDTH * sqlite_ann.EXPANSION_SEARCH)
        s.vector(project_out(q, basis), 10)              # a projected query walks the graph's own width
        assert graph.index.expansion_search == sqlite_ann.EXPANSION_SEARCH
    finally:
        s.close()


def test_vector_many_returns_what_one_call_each_returns(store):
    """Several fields searched side by side: the graph's field, an exact one, after a write."""
    store.put_documents(docs(clustered(5, 9), prefix="late"))           # rows the graph does not hold
    queries = clustered(8, 10)
    asked = [(q, n, "chunk") for q, n in zip(queries, (1, 5, 10, 60, 3, 7, 10, 20))]
    asked += [(queries[0], 10, "heading")]                              # no heading vectors: nothing
    many = store.vector_many(asked)
    assert many == [store.vector(q, n, field=f) for q, n, f in asked]
    assert many[-1] == [] and [len(h) for h in many[:4]] == [1, 5, 10, 60]


def test_vector_many_raises_for_a_query_of_the_wrong_dimension(store):
    from chaja.stores.base import StoreError
    with pytest.raises(StoreError, match="dimension"):
        store.vector_many([(clustered(1, 1)[0], 5, "chunk"), (np.ones(DIM + 1, np.float32), 5, "chunk")])


def test_vector_many_runs_the_callers_work_in_its_thread_while_the_graphs_are_walked(store):
    import threading
    seen = []
    queries = clustered(3, 11)
    asked = [(q, 10, "chunk") for q in queries]
    many = store.vector_many(asked, meanwhile=lambda: seen.append(threading.current_thread().name))
    assert seen == [threading.current_thread().name]
    assert many == [store.vector(q, n, field=f) for q, n, f in asked]

    def fails():
        raise RuntimeError("keyword list failed")
    with pytest.raises(RuntimeError, match="keyword list failed"):
        store.vector_many(asked, meanwhile=fails)


def test_a_graph_is_walked_with_the_candidates_its_build_calls_for(store):
    """A graph records the build candidates it was written with; one written before they were
    recorded (128, an older store) is walked with more search candidates, and a search for
    more rows than the candidates widens that walk alone."""
    info = json.loads(store.get_meta("ann.chunk"))
    assert info["expansion_add"] == sqlite_ann.EXPANSION_ADD
    graph = store._graph("chunk")
    assert graph.expansion == sqlite_ann.EXPANSION_SEARCH
    q = clustered(1, 3)[0]
    assert len(graph.search(q, sqlite_ann.EXPANSION_SEARCH + 40)) == sqlite_ann.EXPANSION_SEARCH + 40
    assert graph.index.expansion_search == sqlite_ann.EXPANSION_SEARCH + 40
    graph.search(q, 10)
    assert graph.index.expansion_search == sqlite_ann.EXPANSION_SEARCH
    del info["expansion_add"]
    older = sqlite_ann.load(store.path, "chunk", json.dumps(info), info["seq"])
    assert older is not None and older.expansion == sqlite_ann.LEGACY_EXPANSION_SEARCH
    assert sqlite_ann.LEGACY_EXPANSION_SEARCH > sqlite_ann.EXPANSION_SEARCH


def test_compaction_tells_each_step_as_it_begins(tmp_path):
    s = SqliteStore(tmp_path / "b.chaja", ann_threshold=500)
    s.put_documents(docs(clustered(800, 3)))
    steps: list[str] = []
    assert s.compact(force=True, progress=steps.append)
    s.close()
    assert steps[0] == "keyword postings"
    assert "vectors chunk" in steps and "graph chunk (800 vectors)" in steps
    assert not any(step.startswith("graph heading") for step in steps)        # no heading vectors, no graph


def test_a_bulk_load_defers_the_graphs_and_searches_exactly_until_they_are_built(tmp_path):
    with SqliteStore(tmp_path / "bulk.chaja", ann_threshold=500) as s:
        s.put_documents(docs(clustered(3000, 11)))
        steps: list[str] = []
        assert s.compact(force=True, graphs=False, progress=steps.append)
        assert not any(step.startswith("graph") for step in steps) and "vectors chunk" in steps
        assert s.deferred_graphs() == ["chunk"] and s._graph("chunk") is None
        assert s.get_meta("ann.chunk") is None
        queries = clustered(20, 12)
        for q in queries:                                           # exact meanwhile: the exact order
            assert [h.chunk_id for h in s.vector(q, 10)] == exact(s, q, 10)
        assert s.compact(force=True)
        assert s.deferred_graphs() == [] and s._graph("chunk") is not None
        assert _recall(s, queries) >= 0.97        # (0.98–1.0 over 20 builds: the threads vary them)


def test_a_graph_another_process_builds_is_used_by_a_store_already_open(tmp_path):
    """``chaja optimize`` beside a running hub: the hub's store object, open since before
    the graphs were built, searches by them from its next search on."""
    import subprocess
    import sys

    path = tmp_path / "bulk.chaja"
    with SqliteStore(path, ann_threshold=500) as s:
        s.put_documents(docs(clustered(3000, 21)))
        s.compact(force=True, graphs=False)
    with SqliteStore(path, ann_threshold=500) as reader:
        queries = clustered(20, 22)
        assert reader.deferred_graphs() == ["chunk"] and reader.vector(queries[0], 10)
        built = subprocess.run([sys.executable, "-c", "import sys; from chaja.stores.sqlite import SqliteStore; "
                                "s = SqliteStore(sys.argv[1], ann_threshold=500); s.compact(force=True); s.close()",
                                str(path)], capture_output=True, text=True, timeout=300)
        assert built.returncode == 0, built.stderr
        assert reader.deferred_graphs() == [] and reader._graph("chunk") is not None
        assert _recall(reader, queries) >= 0.98


def test_a_deferred_load_on_a_store_with_graphs_stops_using_them(store):
    store.put_documents(docs(clustered(100, 13), prefix="bulk"))
    assert store.compact(force=True, graphs=False)
    assert store.deferred_graphs() == ["chunk"]
    q = clustered(1, 14)[0]
    assert [h.chunk_id for h in store.vector(q, 10)] == exact(store, q, 10)
    steps: list[str] = []
    assert store.compact(force=True, progress=steps.append)
    assert "graph chunk (3,100 vectors)" in steps                  # anew: no graph covers the last file
    assert store.deferred_graphs() == []


def _graph_meta(store: SqliteStore, field: str = "chunk") -> dict:
    return json.loads(store.get_meta(f"ann.{field}"))


def _recall(store: SqliteStore, queries: np.ndarray) -> float:
    """Mean recall@10 against exact search, rounded (a mean of 49 tenths is 0.97999...)."""
    return round(float(np.mean([len({h.chunk_id for h in store.vector(q, 10)} & set(exact(store, q, 10))) / 10
                                for q in queries])), 9)


def test_a_compaction_adds_the_rows_written_since_to_the_graph(store):
    inode = sqlite_ann.graph_path(store.path, "chunk").stat().st_ino
    store.put_documents(docs(clustered(400, 6), prefix="new"))     # 400 added
    steps: list[str] = []
    assert store.compact(force=True, progress=steps.append)
    assert "graph chunk: 400 rows changed" in steps and "graph chunk (3,400 vectors)" not in steps
    meta = _graph_meta(store)
    assert (meta["count"], meta["full_count"], meta["changed"]) == (3400, 3000, 400)
    assert sqlite_ann.graph_path(store.path, "chunk").stat().st_ino != inode      # a new file, renamed over
    graph = store._graph("chunk")                                  # every row a node or in a group
    assert len(graph.index) + len(graph.groups) == 3400 and meta["nodes"] == len(graph.index)
    assert _recall(store, clustered(50, 6)) >= 0.98                # near the new rows' clusters


def test_a_batch_that_removed_rows_builds_the_graph_anew(store):
    store.delete_document("d5")
    store.put_documents(docs(clustered(20, 10), prefix="new"))
    steps: list[str] = []
    assert store.compact(force=True, progress=steps.append)
    assert "graph chunk (3,019 vectors)" in steps
    assert _graph_meta(store)["changed"] == 0
    assert not any(h.chunk_id == "d5#0" for q in clustered(30, 1) for h in store.vector(q, 10))


def test_the_graph_is_built_anew_once_half_its_rows_have_changed(store):
    store.put_documents(docs(clustered(1000, 7), prefix="a"))
    assert store.compact(force=True)
    assert _graph_meta(store)["changed"] == 1000
    store.put_documents(docs(clustered(600, 8), prefix="b"))       # 1,600 of the 3,000 built: anew
    steps: list[str] = []
    assert store.compact(force=True, progress=steps.append)
    assert "graph chunk (4,600 vectors)" in steps
    meta = _graph_meta(store)
    assert (meta["count"], meta["full_count"], meta["changed"]) == (4600, 4600, 0)
    assert _recall(store, clustered(50, 8)) >= 0.98


def test_full_graphs_builds_every_graph_anew(store):
    store.put_documents(docs(clustered(10, 9), prefix="c"))
    steps: list[str] = []
    assert store.compact(force=True, full_graphs=True, progress=steps.append)
    assert "graph chunk (3,010 vectors)" in steps
    assert not any("rows changed" in step for step in steps)
    assert _graph_meta(store)["full_count"] == 3010


def test_a_graph_holds_int8_vectors_and_an_older_f16_graph_is_built_anew(tmp_path):
    """Today's graphs keep int8 copies of the vectors (half the bytes a walk reads); a graph
    of an older store, f16 and recorded without a scalar type, is still searched, and the
    next compaction builds it anew rather than adding int8 rows to it."""
    s = SqliteStore(tmp_path / "old.chaja", ann_threshold=500)
    s.put_documents(docs(clustered(1200, 11)))
    assert s.compact(force=True)
    older = sqlite_ann.usearch_module().Index(ndim=DIM, metric="ip", dtype="f16", connectivity=16)   # rows as they are
    mat = s._vectors("chunk")[0]
    older.add(s._matrix_rowids["chunk"].astype(np.uint64), np.asarray(mat))
    sqlite_ann._save(older, s.path, "chunk")
    info = _graph_meta(s)
    for key in ("dtype", "radius", "nodes", "members"):     # as an older store recorded it
        del info[key]
    s.set_meta("ann.chunk", json.dumps(info))
    s._graphs_seq = -1
    graph = s._graph("chunk")
    assert graph is not None and "F16" in str(graph.index.dtype) and graph.index.ndim == DIM
    assert _recall(s, clustered(30, 11)) >= 0.95
    s.put_documents(docs(clustered(10, 12), prefix="new"))
    steps: list[str] = []
    assert s.compact(force=True, progress=steps.append)
    assert "graph chunk (1,210 vectors)" in steps
    assert _graph_meta(s)["dtype"] == sqlite_ann.DTYPE == "i8"
    assert _graph_meta(s)["radius"] == 0.0 and s._graph("chunk").groups is not None
    assert "I8" in str(s._graph("chunk").index.dtype)
    assert _recall(s, clustered(30, 12)) >= 0.95
    s.close()


def test_lifted_rows_rank_by_cosine_as_the_rows_do_by_inner_product():
    rng = np.random.default_rng(13)
    rows = clustered(500, 13) * rng.uniform(0.3, 1.0, (500, 1)).astype(np.float32)   # projected: |v| < 1
    lifted = sqlite_ann.lifted(rows)
    assert lifted.shape == (500, DIM + 1) and np.allclose(np.linalg.norm(lifted, axis=1), 1.0, atol=1e-5)
    q = clustered(1, 14)[0] * 0.7
    by_cosine = np.append(q, 0.0) @ lifted.T / np.linalg.norm(q)
    assert np.array_equal(np.argsort(-by_cosine, kind="stable"), np.argsort(-(rows @ q), kind="stable"))


def test_a_graph_built_from_the_mapped_matrix_leaves_the_vector_file_as_it_was_given(tmp_path, monkeypatch):
    """A compaction that finds a field's matrix in memory (mapped read-only from its file)
    projects a copy for the graph, never the matrix itself."""
    from chaja.language_means import META_KEY, encode_means
    from chaja.stores import sqlite_vectors

    monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 100)
    items = docs(clustered(1200, 9))
    for i, (doc, recs) in enumerate(items):
        doc.lang = recs[0].chunk.lang = ("ko", "en")[i % 2]
    with SqliteStore(tmp_path / "m.chaja", ann_threshold=500) as s:
        s.put_documents(items)
        s.set_meta(META_KEY, encode_means(s.language_means()))
        assert s.compact(force=True)
        mapped = s._vectors("chunk")[0]
        assert not numbers(mapped).flags.writeable                          # the file's pages
        assert s.compact(force=True, full_graphs=True)
        given = np.array([recs[0].vector for _, recs in items])     # rowid order: the order put
        assert holds(s._vectors("chunk")[0], given)
        assert json.loads(s.get_meta("ann.chunk"))["projected"] is True


def near_copies(sources: int, copies: int, seed: int) -> np.ndarray:
    """``sources`` clustered rows, then ``copies`` noisy copies of each (about 0.1 away)."""
    base = clustered(sources, seed)
    rng = np.random.default_rng(seed + 1)
    moved = np.repeat(base, copies, axis=0) + 0.1 / np.sqrt(DIM) * rng.standard_normal((sources * copies, DIM))
    return np.concatenate([base, moved / np.linalg.norm(moved, axis=1, keepdims=True)]).astype(np.float32)


@pytest.fixture
def groups_from_any_size(monkeypatch):
    monkeypatch.setattr(sqlite_ann.ann_groups, "GROUPS_FROM", 0)


def test_near_copies_join_groups_and_the_graph_holds_one_node_for_each(tmp_path, groups_from_any_size):
    """A store of near-copies (every row five times, moved a little) gets a graph of about
    one node a source; a search still finds the exact top rows among the groups' members."""
    with SqliteStore(tmp_path / "copies.chaja", ann_threshold=500) as s:
        s.put_documents(docs(near_copies(400, 5, 21)))
        assert s.compact(force=True)
        meta = _graph_meta(s)
        graph = s._graph("chunk")
        assert meta["nodes"] == len(graph.index) <= 400 and meta["members"] == len(graph.groups) >= 2000
        assert meta["nodes"] + meta["members"] == 2400
        assert _recall(s, clustered(50, 22)) >= 0.95
        q = clustered(1, 23)[0]
        mat, ids, _ = s._vectors("chunk")
        row = {c: i for i, c in enumerate(ids)}
        assert [h.score for h in s.vector(q, 10)] == pytest.approx([float(mat[row[h.chunk_id]] @ q)
                                                                     for h in s.vector(q, 10)])


def test_a_graph_whose_groups_file_does_not_match_its_record_is_not_used(tmp_path, groups_from_any_size):
    store = SqliteStore(tmp_path / "g.chaja", ann_threshold=500)
    store.put_documents(docs(near_copies(1000, 2, 27)))
    assert store.compact(force=True)
    q = clustered(1, 24)[0]
    assert store._graph("chunk") is not None
    path = sqlite_ann.groups_path(store.path, "chunk")
    groups = sqlite_ann.ann_groups.Groups.load(path)
    member, node = groups.pairs()
    sqlite_ann.ann_groups.Groups.of_pairs(member[1:], node[1:]).save(path)     # a member short
    store._graphs_seq = -1
    assert store._graph("chunk") is None
    assert [h.chunk_id for h in store.vector(q, 10)] == exact(store, q, 10)
    path.unlink()
    store._graphs_seq = -1
    assert store._graph("chunk") is None
    store.put_documents(docs(clustered(5, 25), prefix="new"))
    steps: list[str] = []
    assert store.compact(force=True, progress=steps.append)          # built anew, with its groups
    assert "graph chunk (3,005 vectors)" in steps and store._graph("chunk") is not None
    store.close()


def test_removing_a_group_member_builds_the_graph_anew(tmp_path, groups_from_any_size):
    with SqliteStore(tmp_path / "copies.chaja", ann_threshold=500) as s:
        s.put_documents(docs(near_copies(200, 3, 26)))
        assert s.compact(force=True)
        graph = s._graph("chunk")
        member = int(graph.groups.members[0])
        doc = s._db.execute("SELECT doc_id FROM chunks WHERE rowid = ?", (member,)).fetchone()[0]
        s.delete_document(doc)
        steps: list[str] = []
        assert s.compact(force=True, progress=steps.append)
        assert "graph chunk (799 vectors)" in steps
        gone = f"{doc}#0"
        assert not any(h.chunk_id == gone for q in near_copies(200, 3, 26)[:50] for h in s.vector(q, 10))


def _filtered_exact(store: SqliteStore, q: np.ndarray, n: int, passes) -> list[str]:
    mat, ids, _ = store._vectors("chunk")
    keep = np.array([passes(c) for c in ids])
    scores = np.where(keep, np.asarray(mat) @ q, -np.inf)
    return [ids[i] for i in np.lexsort((np.arange(len(ids)), -scores))[:n] if keep[i]]


def test_a_filter_passing_many_rows_walks_the_graph_and_keeps_its_passing_candidates(store, monkeypatch):
    """doc_id_prefix "d1" passes 1,111 of 3,000 rows; with a walk candidate priced as one
    scored row the search walks the graph (no row is scored outside the walk) and finds
    what scoring the passing rows finds, each with its exact score."""
    from chaja.filters import Filters
    from chaja.stores import sqlite_search

    monkeypatch.setattr(sqlite_search, "ROWS_PER_WALK_CANDIDATE", 1)
    scored_rows = []
    exact_scan = sqlite_search._exact
    monkeypatch.setattr(sqlite_search, "_exact", lambda *a: scored_rows.append(a) or exact_scan(*a))
    where = Filters(doc_id_prefix="d1")
    recall = []
    for q in clustered(30, 7):
        got = store.vector(q, 10, where=where)
        want = _filtered_exact(store, q, 10, lambda c: c.startswith("d1"))
        assert all(h.chunk_id.startswith("d1") for h in got) and len(got) == 10
        recall.append(len({h.chunk_id for h in got} & set(want)) / 10)
        assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)
    assert scored_rows == []                     # every search was answered by its walk
    assert np.mean(recall) >= 0.95


def test_a_walk_that_holds_too_few_passing_rows_scores_the_passing_rows_instead(store):
    """The 40 rows farthest from the query pass: the walk's candidates hold none of them,
    so the passing rows are scored, and the answer is exact."""
    from chaja.stores import sqlite_search

    q = clustered(1, 9)[0]
    mat, ids, langs = store._vectors("chunk")
    rowids = store._matrix_rowids["chunk"]
    far = np.argsort(np.asarray(mat) @ q)[:40]
    allow = np.sort(rowids[far])
    got = sqlite_search._filtered_walk(store._graph("chunk"), q, 10, mat, ids, langs, rowids,
                                       np.zeros(0, np.int64), allow, 256)
    want = _filtered_exact(store, q, 10, lambda c: c in {ids[i] for i in far})
    assert [h.chunk_id for h in got] == want


def test_a_filtered_search_walks_only_where_the_walk_costs_less_than_the_passing_rows(store):
    from chaja.stores.sqlite_search import ROWS_PER_WALK_CANDIDATE, WALK_MARGIN, walk_width

    graph = store._graph("chunk")
    base = graph.candidates(60)
    rows = 1_000_000
    assert walk_width(graph, 60, 240, rows) is None                        # no more than 4n pass
    assert walk_width(graph, 60, 10_000, rows) is None                     # scoring 10,000 rows is cheaper
    wide = walk_width(graph, 60, 194_600, rows)                            # lang=ko at a million
    assert wide == max(base, int(np.ceil(WALK_MARGIN * 60 * rows / 194_600)))
    assert wide * ROWS_PER_WALK_CANDIDATE < 194_600
    assert walk_width(graph, 60, 300_000, rows) < wide                     # a larger share asks for fewer
    assert walk_width(graph, 60, 111_100, rows) is None                    # 11%: scoring the rows is cheaper


def test_a_filtered_walk_reads_the_groups_of_nodes_that_do_not_pass(tmp_path, groups_from_any_size, monkeypatch):
    """Near-copies: most rows are group members. A filter that passes the copies and not the
    source rows (the graph's nodes, mostly) still finds the best passing copies."""
    from chaja.filters import Filters
    from chaja.stores import sqlite_search

    monkeypatch.setattr(sqlite_search, "ROWS_PER_WALK_CANDIDATE", 1)
    scored_rows = []
    exact_scan = sqlite_search._exact
    monkeypatch.setattr(sqlite_search, "_exact", lambda *a: scored_rows.append(a) or exact_scan(*a))
    with SqliteStore(tmp_path / "copies.chaja", ann_threshold=500) as s:
        s.put_documents(docs(near_copies(400, 5, 21), prefix="d"))
        assert s.compact(force=True)
        # d0 … d399 are the sources (the nodes, mostly); the copies are d400 … d2399: "d1" passes
        # 1,000 copies (d1000 … d1999) and 111 sources, so 289 of the 400 nodes do not pass
        where = Filters(doc_id_prefix="d1")
        passes = lambda c: c.startswith("d1")
        recall = []
        for q in clustered(30, 24):
            got = s.vector(q, 10, where=where)
            assert len(got) == 10 and all(passes(h.chunk_id) for h in got)
            want = _filtered_exact(s, q, 10, passes)
            recall.append(len({h.chunk_id for h in got} & set(want)) / 10)
        assert len(scored_rows) < 30                 # most searches were answered by their walks
        assert np.mean(recall) >= 0.9
