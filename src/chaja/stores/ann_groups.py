"""Near-copy groups: rows close to a graph node join its group instead of becoming nodes.

A large store holds near-copies: the same notice in every branch's folder, a page saved
under three names, a section heading repeated in every document. An HNSW graph over all
of them links each row mostly to its own copies, and a walk that reaches one cloud of
copies spends its whole width there: on the 1,000,000-chunk benchmark corpus (74 noisy
copies of each source row, 0.28–0.30 from it), the chunk graph's recall@10 was 0.216
(``docs/scale.md``). Here a row within :data:`RADIUS` (Euclidean, in the graph's space)
of an existing node joins that node's group; the graph holds the nodes only. A search
walks the nodes, scores them exactly, then reads their groups best node first
(:func:`read`), :data:`STEP` nodes at a time, while the next node scores within a margin
of the caller's ``top``-th best score found so far and for at most :data:`ROWS_PER_NODE`
rows a node; every row is scored exactly, so only recall can differ. A member ``m`` of
the group of ``l`` scores ``q·m = q·l + q·(m − l)``; the margin (:func:`margin`) is
:data:`SPREAD` times the spread of ``q·(m − l)`` for ``|m − l| ≤ RADIUS``.

Grouping is greedy, in batches of :data:`BATCH` rows in rowid order (as a store grows):
each row is compared with the :data:`PROBES` nodes a walk of the graph built so far finds
nearest, and joins the nearest within the radius; the rows none holds are taken in order,
each joining an earlier new node of its batch within the radius, else becoming a node,
and the batch's new nodes are added to the graph before the next batch. The same step
adds a later compaction's new rows to an existing graph (:func:`chaja.stores.sqlite_ann.update`).

At 1,000,000 benchmark chunks, radius 0.3: the chunk graph holds 243,784 nodes and its
recall@10 against exact search over the stored codes is 0.960; the four graphs take 340 MB
against 2,419 and build in 296 s against 691 (``docs/scale.md``). Below
:data:`GROUPS_FROM` rows only identical rows share a node.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

from chaja.stores import array_file
from chaja.stores.sorted_keys import positions

#: the groups file's first bytes (:mod:`chaja.stores.array_file`)
MAGIC = b"CHJGRP01"

#: a row within this distance of a node (in the graph's space: unit vectors, or their
#: projections for a projected field) joins its group: about cosine 0.955 on unit vectors
RADIUS = 0.3
#: fields of fewer rows group identical rows only (radius 0). On the benchmark corpus's
#: chunk field, the searcher's recall@60 against exact search: at 100,000 rows (seven
#: copies of each source) 0.981 for a graph over every row and 0.961 with groups at 0.3,
#: in three times the time (a member's node can score well below it and stay out of the
#: walk); at 500,000 rows 0.944 and 0.939; at 1,000,000 the graph over every row fell to
#: recall@10 0.216, groups reach 0.96
GROUPS_FROM = 500_000
#: squared distances up to this count as identical (float32 rounding of ``|v|² + |l|² − 2v·l``)
SAME = 1e-6
#: rows grouped together: the batch's own new nodes are compared with one another exactly
BATCH = 4096
#: nodes a new row is compared with, and the walk's width while finding them
PROBES, PROBE_EXPANSION = 8, 64
#: a search reads at most this many group members for each node its walk holds
ROWS_PER_NODE = 8
#: rows a graph is given at once where a build groups identical rows only
ADD_BLOCK = 100_000
#: groups are read this many nodes at a time, the top list's floor raised after each: at
#: 100,000 benchmark rows the aligned field's 60 best in 0.9 ms reading 64 nodes a step,
#: 1.5 ms reading all 256 at once, 16 a step costing more calls than it saves
STEP = 64
#: a search reads the groups of the nodes scoring at least the caller's ``top``-th score
#: found so far less ``SPREAD · RADIUS · |q| / √d``: a member ``m`` scores ``q·(m − l)`` off its
#: node ``l``, for a direction of ``m − l`` unrelated to ``q`` spread about
#: ``|m − l|·|q|/√d ≤ RADIUS·|q|/√d`` (0.015 at 384 dimensions), and at most ``RADIUS·|q|``
SPREAD = 3.5


def radius_for(rows: int) -> float:
    """The group radius of a field of ``rows`` rows (:data:`GROUPS_FROM`)."""
    return RADIUS if rows >= GROUPS_FROM else 0.0


def margin(dim: int, radius: float) -> float:
    """How far below the ``top``-th node, in cosine (score over ``|q|``), a node's group may
    still hold a top row."""
    return SPREAD * radius / float(np.sqrt(max(dim, 1)))


class Groups:
    """The members of each node's group: ``nodes`` (ascending keys of the nodes that have
    members), ``starts`` (``len(nodes) + 1`` offsets) and ``members`` (row keys, a node's
    ascending)."""

    def __init__(self, nodes: np.ndarray, starts: np.ndarray, members: np.ndarray):
        self.nodes, self.starts, self.members = nodes, starts, members

    @classmethod
    def of_pairs(cls, member: np.ndarray, node: np.ndarray) -> Groups:
        """Groups from (member key, its node's key) pairs."""
        member, node = np.asarray(member, np.int64), np.asarray(node, np.int64)
        order = np.lexsort((member, node))
        node, member = node[order], member[order]
        nodes, first = np.unique(node, return_index=True)
        return cls(nodes, np.append(first, node.size).astype(np.int64), member)

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(member keys, their nodes' keys)."""
        return self.members, np.repeat(self.nodes, np.diff(self.starts))

    def __len__(self) -> int:
        return int(self.members.size)

    def holds(self, keys: np.ndarray) -> np.ndarray:
        """Whether each of ``keys`` is a member of some group."""
        if not self.members.size:
            return np.zeros(len(keys), bool)
        return positions(np.sort(self.members), keys)[1]

    def joined(self, member: np.ndarray, node: np.ndarray) -> Groups:
        """These groups with the pairs (``member``, ``node``) added."""
        old_member, old_node = self.pairs()
        return Groups.of_pairs(np.concatenate([old_member, member]), np.concatenate([old_node, node]))

    def expand(self, keys: np.ndarray, rows: int) -> np.ndarray:
        """``keys`` (nodes, best first), then the members of their groups taken best node
        first until ``rows`` keys in all (the last group taken in part, its lowest keys)."""
        keys = np.asarray(keys, np.int64)
        if not self.nodes.size or not keys.size or rows <= keys.size:
            return keys
        at, has = positions(self.nodes, keys)
        at = at[has]
        sizes = self.starts[at + 1] - self.starts[at]
        room = rows - keys.size
        ends = np.cumsum(sizes)
        take = int(np.searchsorted(ends, room)) + 1          # groups reaching the room
        at, sizes = at[:take], sizes[:take].copy()
        if sizes.size and ends[sizes.size - 1] > room:
            sizes[-1] -= ends[sizes.size - 1] - room
        total = int(sizes.sum())
        if not total:
            return keys
        # the positions of each taken group's first ``size`` members, in one array
        offsets = np.repeat(self.starts[at] - np.concatenate([[0], np.cumsum(sizes)[:-1]]), sizes)
        return np.concatenate([keys, self.members[offsets + np.arange(total)]])

    def save(self, path: Path) -> None:
        """Write to ``path`` atomically (readers keep the file they mapped)."""
        array_file.save(path, MAGIC, {"nodes": self.nodes, "starts": self.starts, "members": self.members}, {})

    @classmethod
    def load(cls, path: Path) -> Groups:
        """The groups a file holds, mapped (``ValueError`` for a file that is not one)."""
        arrays, _ = array_file.load(path, MAGIC)
        try:
            nodes, starts, members = (arrays[k] for k in ("nodes", "starts", "members"))
        except KeyError:
            raise ValueError(f"{path}: not a groups file") from None
        if starts.size != nodes.size + 1 or (starts.size and starts[-1] != members.size):
            raise ValueError(f"{path}: not a groups file")
        return cls(nodes, starts, members)


def read(groups: Groups, nodes: np.ndarray, scores: np.ndarray, top: int, margin: float | None, rows: int,
         score: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
         counted: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``score(keys)`` (rows, scores) of the members of the groups of ``nodes`` (best first by
    their exact ``scores``), :data:`STEP` nodes at a time, until ``rows`` members or a node
    scoring below the ``top``-th best score found so far less ``margin``: a member scores at
    most ``margin`` above its node, so no later group can reach the top ``top``. ``counted``:
    the nodes whose scores count as found (a filtered search: those that pass; ``score``
    then gives the passing members only); all of them when None."""
    found = np.asarray(scores if counted is None else scores[counted], np.float32)
    got_rows, got_scores = [], []
    taken = 0
    for at in range(0, nodes.size, STEP):
        if taken >= rows:
            break
        if margin is not None and found.size >= top:
            floor = np.partition(found, found.size - top)[found.size - top]
            if scores[at] < floor - margin:
                break
        lead = nodes[at:at + STEP]
        keys = groups.expand(lead, lead.size + rows - taken)[lead.size:]
        if keys.size:
            r, s = score(keys)
            got_rows.append(r)
            got_scores.append(s)
            found = np.concatenate([found, s])
            taken += keys.size
    if not got_rows:
        return score(nodes[:0])
    return np.concatenate(got_rows), np.concatenate(got_scores)


def grow(graph, add, keys: np.ndarray, vectors: np.ndarray, *, node_vectors, radius: float,
         threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Group the rows ``keys`` (their ``vectors`` in the graph's space, rowid order) around
    the nodes of ``graph`` (a usearch index over lifted vectors, searched with a zero in
    the last place), adding the rows that become nodes with ``add(keys, vectors)``.
    ``node_vectors(keys)`` gives the vectors of nodes already in the graph.
    Returns (member keys, their nodes' keys) for the rows that joined a group."""
    if radius == 0 and not len(graph):
        return _identical(add, keys, vectors)
    member_out, node_out = [], []
    for start in range(0, keys.size, BATCH):
        k, v = keys[start:start + BATCH], np.asarray(vectors[start:start + BATCH], np.float32)
        free = np.ones(k.size, bool)
        if len(graph):
            free = _join_nodes(graph, k, v, node_vectors, radius, threads, member_out, node_out)
        new = _new_nodes(k[free], v[free], radius, member_out, node_out)
        if new.any():
            add(k[free][new], v[free][new])
    if not member_out:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(member_out), np.concatenate(node_out)


def _identical(add, keys: np.ndarray, vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A new graph grouping identical rows only: by their bytes, in one pass, and the first
    of each set added as a node (as fast as a graph over every row; the walks that find
    near rows cost a build at 100,000 benchmark rows 31 s against 17 s)."""
    first: dict[bytes, int] = {}
    node_of = np.arange(keys.size)
    for start in range(0, keys.size, ADD_BLOCK):
        block = np.ascontiguousarray(vectors[start:start + ADD_BLOCK], np.float32)
        for j in range(block.shape[0]):
            node_of[start + j] = first.setdefault(block[j].tobytes(), start + j)
    is_node = node_of == np.arange(keys.size)
    at = np.flatnonzero(is_node)
    for start in range(0, at.size, ADD_BLOCK):
        rows = at[start:start + ADD_BLOCK]
        add(keys[rows], np.asarray(vectors[rows], np.float32))
    return keys[~is_node], keys[node_of[~is_node]]


def _join_nodes(graph, k, v, node_vectors, radius, threads, member_out, node_out) -> np.ndarray:
    """Join each row to its nearest of the graph's nodes within ``radius``; the rows left free."""
    probes = min(PROBES, len(graph))
    width = graph.expansion_search
    graph.expansion_search = PROBE_EXPANSION        # (for these walks only)
    try:
        found = graph.search(np.hstack([v, np.zeros((k.size, 1), np.float32)]), probes, threads=threads)
    finally:
        graph.expansion_search = width
    near = np.asarray(found.keys, np.int64).reshape(k.size, -1)
    valid = np.arange(near.shape[1])[None, :] < np.asarray(found.counts).reshape(-1, 1)
    near = np.where(valid, near, near[:, :1])
    nv = node_vectors(near.ravel()).reshape(*near.shape, v.shape[1])
    d2 = (np.einsum("ij,ij->i", v, v)[:, None] + np.einsum("ijk,ijk->ij", nv, nv)
          - 2 * np.einsum("ijk,ik->ij", nv, v))
    d2[~valid] = np.inf
    best = d2.argmin(axis=1)
    close = d2[np.arange(k.size), best] <= radius * radius + SAME
    member_out.append(k[close])
    node_out.append(near[np.arange(k.size), best][close])
    return ~close


def _new_nodes(k, v, radius, member_out, node_out) -> np.ndarray:
    """Among rows no node holds, in order: each joins an earlier new node within
    ``radius``, else becomes one. Whether each became a node."""
    is_node = np.zeros(k.size, bool)
    if not k.size:
        return is_node
    sq = np.einsum("ij,ij->i", v, v)
    d2 = sq[:, None] + sq[None, :] - 2 * (v @ v.T)
    limit = radius * radius + SAME
    nodes: list[int] = []
    joined_m, joined_n = [], []
    for j in range(k.size):
        if nodes:
            dd = d2[j, nodes]
            b = int(dd.argmin())
            if dd[b] <= limit:
                joined_m.append(k[j])
                joined_n.append(k[nodes[b]])
                continue
        nodes.append(j)
        is_node[j] = True
    member_out.append(np.asarray(joined_m, np.int64))
    node_out.append(np.asarray(joined_n, np.int64))
    return is_node
