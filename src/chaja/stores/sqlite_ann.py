"""Approximate nearest neighbours for the SQLite store's larger vector fields.

Above :data:`ANN_THRESHOLD` vectors in a field, the store keeps an HNSW graph (Malkov &
Yashunin 2018, through usearch; the ``ann`` extra) of that field beside the store, in
``<store>-<field>.hnsw``, keyed by chunk rowid and inner product (cosine: the vectors are
normalised). The graph's nodes are not every row: a row identical to a node, or in a
field of :data:`~chaja.stores.ann_groups.GROUPS_FROM` rows or more within
:data:`~chaja.stores.ann_groups.RADIUS` of it, joins its group (``<store>-<field>.groups``;
:mod:`chaja.stores.ann_groups`), and a search reads the groups of the nodes it finds
(:meth:`Graph.members`), so near-copies cost the graph nothing and cannot fill a walk. It is written by the same step that folds the keyword log into the postings
file (:meth:`SqliteStore.compact`, under the write lock) and covers the same log
entry, recorded in the store's meta (``ann.<field>``). The graph keeps int8 copies of
the rows, lifted to unit length (:func:`lifted`). A search asks the graph for every
candidate its walk holds (:meth:`Graph.candidates`: the walk's width, or ``2n + m`` rows
where that is more, :data:`OVERSAMPLE`), drops rows the log has touched since (deleted or
replaced; ``m`` of them), scores rows added since exactly, and rescores every candidate exactly from the
in-memory matrix, so the scores are the exact search's and only recall can differ. A
graph that is missing, damaged or older than the postings file is not used: search is
exact until the next compaction writes one. Below the threshold, search is always exact.

A compaction after rows were only added does not build a current graph again: it loads
it, inserts the new rows, and writes it under a new name renamed over the old
(:func:`update`), so a batch of new documents costs the graph work of its own rows, not
of the whole field. A batch that removed or replaced rows, rows added since the graph's
last full build reaching :data:`REBUILD_SHARE` of it, or settings that are not today's
build it anew (removed nodes would stay in the walk and cost recall). Rows added to a
projected graph are projected with the store's basis of the day; a basis that has moved
since costs recall only.

The e5 fields (``chunk``, ``heading``) are searched with query vectors whose language
direction is projected out (:mod:`chaja.language_means`), which sit off the stored
vectors' distribution: greedy graph search then misses whole neighbourhoods (at 100k
chunks, recall@60 0.87 and 14 of 200 queries below 0.3). Their graphs are therefore
built over the projected vectors ``Pv``: since ``q'·Pv = q'·v`` the graph ranks by the
same inner product, with query and points in one space (recall@60 0.986, one query
below 0.3). Candidates are rescored exactly from the stored vectors, so a basis that
has moved since the graph was built costs recall only. A query that still holds a
language component (projection turned off, or a caller's own vector) is searched in
the graph's space as ``Pq``, for :data:`RAW_QUERY_FACTOR` times the rows in a walk
:data:`RAW_QUERY_WIDTH` times as wide, since its exact order adds a per-language offset
``(Bq)·(Bv)`` (recall@10 0.93 at 100k with the factor alone, 0.75 when the raw query walks
the projected graph).
"""
from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np

from chaja.stores import ann_groups
from chaja.stores.sorted_keys import positions

#: a field with at least this many vectors gets an HNSW graph: an exact scan reads the whole
#: matrix per query (25,662 384-d vectors: 39 MB, 2.5–6 ms on two cores, memory-bound), the
#: graph 1.75 ms at 512 candidates with recall@60 0.994 (the benchmark's section-name field)
ANN_THRESHOLD = 20_000
#: fields whose queries are projected off the language subspace, and whose graphs are too
PROJECTED_FIELDS = ("chunk", "heading")
#: a query with its language component, on a projected graph, asks for this many times the rows
RAW_QUERY_FACTOR = 4
#: and walks this many times the graph's search width: the walk ranks by ``Pq · Pv``, the
#: answer by ``q · v``, which adds each row's language offset, so rows the walk ranks lower
#: still reach the top. On the peers corpus, raw query vectors, recall@10 against float32
#: exact search (the vector list alone, p50): at 1,000,000 chunks 0.940 (2.6 ms) with the
#: width of a projected query, 0.953 (3.3 ms) at 1.25 times it, 0.956 (3.5 ms) at 1.5; at
#: 100,000 chunks 0.960, 0.966 and 0.981 (0.9, 1.0 and 1.3 ms)
RAW_QUERY_WIDTH = 1.5
#: HNSW settings: edges per node, candidate list while building and while searching. At
#: 100,000 benchmark chunks, 256 build candidates let a walk of 256 find what one of 512
#: found on a graph built with 128 (chunk graph recall@10 0.984 against 0.985, 1.9 against
#: 5.0 ms; docs/scale.md), for about 1.3–2× the build time
CONNECTIVITY, EXPANSION_ADD, EXPANSION_SEARCH = 32, 256, 256
#: the scalar type of the graph's own copy of the vectors: a walk is memory-bound, and at
#: 100,000 benchmark chunks int8 halves the bytes it reads against f16 (chunk graph walk 0.56
#: against 1.63 ms, build 17.7 against 35.7 s, recall@10 after the exact rescoring 0.998
#: against 0.999; docs/scale.md). usearch keeps ``round(127·v/|v|)``, so an int8 graph ranks
#: by cosine; its rows are lifted (:func:`lifted`) so that cosine ranks as the inner
#: product does. A graph recorded without a type is f16 (``LEGACY_DTYPE``), searched as it
#: is and built anew by the next compaction that writes graphs.
DTYPE, LEGACY_DTYPE = "i8", "f16"
#: a search asks the graph for at least this many times the rows it returns, and for no fewer
#: than the walk holds: the graph ranks by its rounded copy, near ties among close neighbours
#: come out in the wrong order, and the exact rescoring can only put right the rows it is
#: given (3,000 clustered 16-d vectors, top 10: recall 0.956 asking for 10, 1.0 asking for 20).
#: Asking for the walk's whole candidate list costs no longer walk: at 100,000 benchmark
#: chunks, the searcher's 60 from the chunk graph went from recall 0.976 (120 asked) to 0.983
#: (256), its section-name graph's from 0.959 to 0.986, top 10 from 0.973 and 0.889 to 0.991
#: and 0.973 (docs/scale.md)
OVERSAMPLE = 2
#: the search candidates of a graph written before its build candidates were recorded (128)
LEGACY_EXPANSION_SEARCH = 512
#: a compaction adds the rows written since to a graph in place until the rows added since
#: its last full build reach this share of that build's rows
REBUILD_SHARE = 0.5


def usearch_module():
    """usearch.index, loaded after the shared C++ runtime is made global.

    usearch's extension carries a static copy of libstdc++, and the unique symbols of that
    copy (the locale facets' ids) are the ones a shared libstdc++ loaded later binds to:
    ``import onnxruntime`` after usearch then crashes the process (usearch 2.26, onnxruntime
    1.32), and the encoders import onnxruntime lazily, often after the first vector search.
    With the shared libstdc++ loaded ``RTLD_GLOBAL`` first, both bind to its symbols. The
    fix used before, importing onnxruntime first, cost a process that never encodes (one
    served with query vectors) 19 MB. Where no shared libstdc++ loads, it is still that."""
    _promote_cxx_runtime()
    import usearch.index

    return usearch.index


@functools.cache
def _promote_cxx_runtime() -> None:
    import ctypes

    try:
        ctypes.CDLL("libstdc++.so.6", mode=os.RTLD_GLOBAL)
    except (OSError, AttributeError):
        try:
            import onnxruntime  # noqa: F401
        except ImportError:
            pass


def available() -> bool:
    try:
        usearch_module()
    except ImportError:
        return False
    return True


def graph_path(store_path: Path, field: str) -> Path:
    return Path(f"{store_path}-{field}.hnsw")


def lifted(matrix: np.ndarray) -> np.ndarray:
    """Rows ``v`` as ``[v, sqrt(1 − |v|²)]``: unit vectors whose cosine with a query ``[q, 0]``
    is ``q·v / |q|``, so a graph that ranks by cosine ranks by the inner product (the
    reduction of maximum inner product search to cosine: Bachrach et al. 2014). Stored rows
    are unit vectors or their projections, so ``|v| ≤ 1``; a longer row gets 0."""
    matrix = np.asarray(matrix, dtype=np.float32)
    extra = np.sqrt(np.maximum(0.0, 1.0 - np.einsum("ij,ij->i", matrix, matrix)))
    return np.ascontiguousarray(np.hstack([matrix, extra[:, None].astype(np.float32)]))


def groups_path(store_path: Path, field: str) -> Path:
    return Path(f"{store_path}-{field}.groups")


def build(store_path: Path, field: str, rowids: np.ndarray, matrix: np.ndarray) -> dict:
    """Write the graph of ``matrix`` (rows keyed by ``rowids``, ascending; :func:`lifted`)
    over its group nodes, and the groups (:mod:`chaja.stores.ann_groups`), atomically.
    Returns the counts for :func:`meta_value`."""
    graph, radius = _new_graph(matrix.shape[1]), ann_groups.radius_for(rowids.size)
    member, node = _grow(graph, rowids, matrix, radius)
    return _save_all(graph, ann_groups.Groups.of_pairs(member, node), store_path, field, radius, full=rowids.size)


def _new_graph(dim: int):
    return usearch_module().Index(ndim=dim + 1, metric="ip", dtype=DTYPE, connectivity=CONNECTIVITY,
                                  expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)


def _grow(graph, rowids: np.ndarray, matrix: np.ndarray, radius: float,
          at: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Group the rows at positions ``at`` (every row: None) around the graph's nodes within
    ``radius``, adding new nodes to it."""
    threads = os.cpu_count() or 1

    def add(keys: np.ndarray, vectors: np.ndarray) -> None:
        graph.add(keys.astype(np.uint64), lifted(vectors), threads=threads)

    def node_vectors(keys: np.ndarray) -> np.ndarray:
        return np.asarray(matrix[positions(rowids, keys)[0]], np.float32)

    keys, vectors = (rowids, matrix) if at is None else (rowids[at], matrix[at])
    return ann_groups.grow(graph, add, keys, vectors, node_vectors=node_vectors, radius=radius, threads=threads)


def update(store_path: Path, field: str, meta: str | None, base_seq: int | None, touched: np.ndarray,
           rowids: np.ndarray, matrix: np.ndarray, projected: bool) -> dict | None:
    """Bring the field's graph from the log entry ``base_seq`` up to date by grouping the
    ``touched`` rows the field holds now (``matrix``, keyed by ``rowids``, ascending: the
    whole field) around its nodes, instead of building it anew: the work of the new rows,
    not of the whole field.
    Returns the counts for :func:`meta_value`, or None when the graph must be built anew:
    there is none that covers ``base_seq`` with today's settings, a touched row is one it
    holds as a node or a group member (removed or replaced since: usearch keeps a removed
    node in the walk, and on the 100,000-chunk benchmark corpus removing 50 rows took the
    chunk graph's recall@10 from 0.979 to 0.962), or the rows added since its last full
    build would reach :data:`REBUILD_SHARE` of the rows it was built with (rows added a
    batch at a time are linked less well than in one build)."""
    if meta is None or base_seq is None or not graph_path(store_path, field).exists():
        return None
    try:
        info = json.loads(meta)
        if (int(info["seq"]) != base_seq or bool(info.get("projected", False)) != projected
                or int(info.get("expansion_add", 128)) != EXPANSION_ADD
                or info.get("dtype", LEGACY_DTYPE) != DTYPE or "radius" not in info):
            return None
        full = int(info.get("full_count", info["count"]))
        changed = int(info.get("changed", 0)) + int(touched.size)
        if changed >= REBUILD_SHARE * max(full, 1):
            return None
        groups = _read_groups(store_path, field, info)
        graph = usearch_module().Index.restore(str(graph_path(store_path, field)), view=False)
    except (ValueError, KeyError, TypeError, RuntimeError, OSError):
        return None
    if graph is None or groups is None or graph.ndim != matrix.shape[1] + 1 or len(graph) != info.get("nodes"):
        return None
    graph.expansion_add = EXPANSION_ADD         # (a restored graph forgets it)
    touched = touched.astype(np.int64)
    if touched.size and (np.asarray(graph.contains(touched.astype(np.uint64)), bool).any()
                         or groups.holds(touched).any()):
        return None
    pos, held = positions(rowids, touched) if rowids.size else (touched[:0], touched[:0].astype(bool))
    added = pos[held]
    radius = float(info["radius"])
    member, node = _grow(graph, rowids, matrix, radius, added)
    return _save_all(graph, groups.joined(member, node), store_path, field, radius, full=full, changed=changed)


def _read_groups(store_path: Path, field: str, info: dict) -> ann_groups.Groups | None:
    """The field's groups when their file holds the members its record counts, else None."""
    path = groups_path(store_path, field)
    if not path.exists():
        return None
    groups = ann_groups.Groups.load(path)
    return groups if len(groups) == info.get("members") else None


def _save_all(graph, groups: ann_groups.Groups, store_path: Path, field: str, radius: float, *, full: int,
              changed: int = 0) -> dict:
    """Write the groups and then the graph; the counts their record keeps (a reader uses
    them only when both files hold what it says)."""
    groups.save(groups_path(store_path, field))
    _save(graph, store_path, field)
    return {"full_count": full, "changed": changed, "radius": radius, "nodes": len(graph), "members": len(groups)}


def _save(graph, store_path: Path, field: str) -> None:
    """Write ``graph`` as the field's graph file, atomically (readers keep the one they mapped)."""
    final = graph_path(store_path, field)
    tmp = final.with_name(f".{final.name}.{os.getpid()}.tmp")
    try:
        graph.save(str(tmp))
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, final)
    finally:
        if tmp.exists():
            tmp.unlink()


def meta_value(seq: int, count: int, projected: bool = False, *, full_count: int | None = None,
               changed: int = 0, radius: float = 0.0, nodes: int | None = None, members: int = 0) -> str:
    """The graph's meta: the log entry it covers, its rows, whether its vectors are projected,
    its build candidates, its scalar type, the rows of its last full build and added since,
    and its group radius, nodes and group members (:mod:`chaja.stores.ann_groups`)."""
    return json.dumps({"seq": seq, "count": count, "projected": bool(projected), "expansion_add": EXPANSION_ADD,
                       "dtype": DTYPE, "full_count": count if full_count is None else full_count, "changed": changed,
                       "radius": radius, "nodes": count if nodes is None else nodes, "members": members})


class Graph:
    """A mapped graph and the log entry it covers."""

    def __init__(self, store_path: Path, field: str, seq: int, projected: bool = False,
                 expansion_search: int = EXPANSION_SEARCH, groups: ann_groups.Groups | None = None,
                 radius: float = 0.0):
        Index = usearch_module().Index
        self.seq, self.projected = seq, projected
        #: the language basis a projected graph's vectors were projected by (set by the store)
        self.basis = np.zeros((0, 0), np.float32)
        # a search needs the keys the walk finds, not a table from key to node (32 MB of
        # private memory for the four graphs of the 1,000,000-chunk peer corpus)
        self.index = Index.restore(str(graph_path(store_path, field)), view=True, enable_key_lookups=False)
        if self.index is None:
            raise ValueError("not a graph")
        self.index.expansion_search = self.expansion = expansion_search
        #: the near-copy groups of its nodes (None: a graph over every row, written before groups)
        self.groups = groups
        #: rows handed back for each node a walk holds (:data:`chaja.stores.ann_groups.ROWS_PER_NODE`)
        self.rows_per_node = ann_groups.ROWS_PER_NODE
        #: how far below the ``top``-th node, in cosine, a node's group is still read
        #: (:func:`chaja.stores.ann_groups.margin`; None: every node's, up to the rows)
        self.margin: float | None = ann_groups.margin(self.index.ndim - 1, radius)

    def candidates(self, n: int, factor: int = OVERSAMPLE) -> int:
        """How many rows a search for the best ``n`` asks the graph for: ``factor · n``, and
        never fewer than the walk holds anyway (its width, :data:`EXPANSION_SEARCH`)."""
        return max(factor * n, self.expansion)

    def search(self, query: np.ndarray, n: int) -> np.ndarray:
        """The keys of the graph's best ``n`` nodes for ``query`` (padded with 0 for a lifted graph)."""
        ef = max(n, self.expansion)
        if ef != self.index.expansion_search:
            self.index.expansion_search = ef
        if self.index.ndim == query.size + 1:
            query = np.append(query, np.float32(0.0))
        return np.asarray(self.index.search(query, n).keys, dtype=np.int64)

    def members(self, nodes: np.ndarray, scores: np.ndarray, top: int, query_norm: float,
                score: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                counted: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """What ``score`` gives for the group members that may reach the top ``top`` after a
        walk found ``nodes`` (best first by their exact ``scores``): at most
        :attr:`rows_per_node` rows for each node, read while a node scores within
        ``margin · |q|`` of the ``top``-th row found so far (:func:`~chaja.stores.ann_groups.read`;
        ``counted``: which nodes count as found, for a filtered search)."""
        if self.groups is None or not nodes.size:
            return score(nodes[:0])
        margin = None if self.margin is None else self.margin * query_norm
        return ann_groups.read(self.groups, nodes, scores, top, margin, self.rows_per_node * nodes.size, score,
                               counted)


def load(store_path: Path, field: str, meta: str | None, base_seq: int) -> Graph | None:
    """The field's graph when it covers exactly the postings file's log entry, else None."""
    if meta is None or not available():
        return None
    try:
        info = json.loads(meta)
        seq = int(info["seq"])
        if seq != base_seq or not graph_path(store_path, field).exists():
            return None
        built_with = int(info.get("expansion_add", 128))
        groups = None
        if "radius" in info:                 # a graph over group nodes: its groups must match
            groups = _read_groups(store_path, field, info)
            if groups is None:
                return None
        graph = Graph(store_path, field, seq, bool(info.get("projected", False)),
                      EXPANSION_SEARCH if built_with >= EXPANSION_ADD else LEGACY_EXPANSION_SEARCH, groups,
                      float(info.get("radius", 0.0)))
        if groups is not None and len(graph.index) != info.get("nodes"):
            return None
        return graph
    except (ValueError, KeyError, TypeError, RuntimeError, OSError):
        return None
