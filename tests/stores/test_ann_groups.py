"""Near-copy groups: a graph's nodes and the rows grouped around them."""
from __future__ import annotations

import numpy as np
import pytest

from chaja.stores import ann_groups, array_file, sqlite_ann

DIM = 16


def groups() -> ann_groups.Groups:
    # node 10 holds 11, 12, 13; node 20 holds 21; node 30 holds none
    return ann_groups.Groups.of_pairs(np.array([13, 21, 11, 12]), np.array([10, 20, 10, 10]))


def test_a_search_hands_back_its_nodes_then_their_members_best_node_first():
    g = groups()
    assert g.expand(np.array([20, 10, 30]), 5).tolist() == [20, 10, 30, 21, 11]     # 10's group cut to its lowest
    assert g.expand(np.array([20, 10, 30]), 100).tolist() == [20, 10, 30, 21, 11, 12, 13]
    assert g.expand(np.array([30, 10]), 2).tolist() == [30, 10]                       # no room: the walk's nodes only
    assert g.expand(np.array([30]), 10).tolist() == [30]
    assert ann_groups.Groups.of_pairs(np.array([]), np.array([])).expand(np.array([7]), 10).tolist() == [7]


def test_members_are_known_and_pairs_come_back_as_given():
    g = groups()
    assert g.holds(np.array([11, 10, 21, 99])).tolist() == [True, False, True, False]
    member, node = g.pairs()
    assert sorted(zip(member.tolist(), node.tolist())) == [(11, 10), (12, 10), (13, 10), (21, 20)]
    more = g.joined(np.array([31]), np.array([30]))
    assert len(more) == 5 and more.expand(np.array([30]), 10).tolist() == [30, 31]


def test_groups_are_written_and_read_whole(tmp_path):
    path = tmp_path / "x.groups"
    groups().save(path)
    back = ann_groups.Groups.load(path)
    assert back.expand(np.array([20, 10]), 10).tolist() == groups().expand(np.array([20, 10]), 10).tolist()
    path.write_bytes(b"not a groups file")
    with pytest.raises(ValueError):
        ann_groups.Groups.load(path)
    array_file.save(path, ann_groups.MAGIC, {"nodes": np.array([1, 2]), "starts": np.array([0, 1]),
                                             "members": np.array([5])}, {})
    with pytest.raises(ValueError, match="not a groups file"):
        ann_groups.Groups.load(path)


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.mark.skipif(not sqlite_ann.available(), reason="usearch is not installed: pip install 'chaja[ann]'")
def test_rows_near_a_node_join_it_and_rows_far_from_every_node_become_nodes():
    rng = np.random.default_rng(0)
    centres = unit(rng.standard_normal((3, DIM)) * 10)
    copies = unit(np.repeat(centres, 4, axis=0) + 0.02 * rng.standard_normal((12, DIM)))
    rows = np.concatenate([centres, copies])             # keys 0–2 the centres, 3–14 their copies
    keys = np.arange(rows.shape[0], dtype=np.int64)
    graph = sqlite_ann._new_graph(DIM)
    member, node = sqlite_ann._grow(graph, keys, rows, ann_groups.RADIUS)
    assert sorted(int(k) for k in graph.keys) == [0, 1, 2]
    assert sorted(zip(member.tolist(), node.tolist())) == [(3 + i, i // 4) for i in range(12)]
    # a later batch: a copy joins the graph's node, a far row and its own copy make a new group
    later = np.concatenate([unit(centres[1] + 0.02 * rng.standard_normal(DIM))[None], unit(-centres[:1]),
                            unit(-centres[:1] + 0.02 * rng.standard_normal(DIM))])
    all_keys, all_rows = np.arange(18, dtype=np.int64), np.concatenate([rows, later])
    member, node = sqlite_ann._grow(graph, all_keys, all_rows, ann_groups.RADIUS, np.array([15, 16, 17]))
    assert sorted(int(k) for k in graph.keys) == [0, 1, 2, 16]
    assert sorted(zip(member.tolist(), node.tolist())) == [(15, 1), (17, 16)]


def test_groups_are_read_while_a_node_can_still_reach_the_top(monkeypatch):
    monkeypatch.setattr(ann_groups, "STEP", 1)
    members = np.array([k for base in (10, 20, 30) for k in range(base, base + 8)])
    g = ann_groups.Groups.of_pairs(members, members // 10)           # node 1 holds 10–17, ...
    value = {1: 0.9, 2: 0.5, 3: 0.1, **{k: 0.95 - 0.001 * (k % 10) for k in range(10, 18)},
             **{k: 0.5 for k in range(20, 38)}}
    read_keys: list[int] = []

    def score(keys):
        read_keys.extend(keys.tolist())
        return keys, np.array([value[int(k)] for k in keys], np.float32)

    nodes, scores = np.array([1, 2, 3]), np.array([0.9, 0.5, 0.1], np.float32)
    rows, got = ann_groups.read(g, nodes, scores, 4, 0.1, 100, score)
    assert rows.tolist() == list(range(10, 18))                      # node 2 is 0.45 below the 4th best
    assert got.tolist() == pytest.approx([value[k] for k in range(10, 18)])
    read_keys.clear()
    rows, _ = ann_groups.read(g, nodes, scores, 4, None, 100, score)   # no margin: every group
    assert len(rows) == 24
    rows, _ = ann_groups.read(g, nodes, scores, 4, None, 5, score)     # at most five members
    assert rows.tolist() == [10, 11, 12, 13, 14]
    rows, _ = ann_groups.read(g, nodes, scores, 30, 0.1, 100, score)   # a long top list: node 2 can reach it
    assert 20 in rows.tolist()


@pytest.mark.skipif(not sqlite_ann.available(), reason="usearch is not installed: pip install 'chaja[ann]'")
def test_a_field_below_the_groups_size_groups_identical_rows_only():
    assert ann_groups.radius_for(ann_groups.GROUPS_FROM - 1) == 0.0
    assert ann_groups.radius_for(ann_groups.GROUPS_FROM) == ann_groups.RADIUS
    rng = np.random.default_rng(3)
    base = unit(rng.standard_normal((50, DIM)))
    near = unit(base[:10] + 0.02 * rng.standard_normal((10, DIM)))
    rows = np.concatenate([base, base[:5], near])              # 5 identical rows, 10 near copies
    keys = np.arange(rows.shape[0], dtype=np.int64)
    graph = sqlite_ann._new_graph(DIM)
    member, node = sqlite_ann._grow(graph, keys, rows, 0.0)
    assert sorted(zip(member.tolist(), node.tolist())) == [(50 + i, i) for i in range(5)]
    assert len(graph) == 60
