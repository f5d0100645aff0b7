"""The upkeep of an index (chaja.index_upkeep): what a bulk load defers and its build,
faults told from notes by ``check``, and ``repair``."""
from __future__ import annotations

import pytest

import chaja


def test_a_bulk_load_defers_the_graphs_until_they_are_built(tmp_path, corpus, encoder, capsys):
    from chaja.index import Index
    from chaja.stores import sqlite_ann
    from chaja.stores.sqlite import SqliteStore

    if not sqlite_ann.available():
        pytest.skip("usearch is not installed: pip install 'chaja[ann]'")
    with Index(SqliteStore(tmp_path / "bulk.chaja", ann_threshold=5), encoder=encoder) as idx:
        idx.add([corpus], defer_graphs=True)
        deferred = idx.deferred_graphs()
        assert {"chunk", "aligned", "aligned_heading", "translation tables"} <= set(deferred)
        assert idx.summary()["deferred_graphs"] == deferred
        from chaja.cli import print_stats
        print_stats(idx.summary(), as_json=False)
        assert f"deferred by a bulk load: {', '.join(deferred)}" in capsys.readouterr().out
        assert idx.searcher().lexicon.nearest == {}              # each query word scanned for
        exact = [d.doc_id for d in idx.search("자기주식 소각", top_k=5).documents]
        assert exact[0] == "filings/share-cancellation"
        steps: list[str] = []
        assert idx.build_graphs(progress=steps.append) == deferred
        assert idx.deferred_graphs() == [] and any(step.startswith("graph chunk") for step in steps)
        assert [d.doc_id for d in idx.search("자기주식 소각", top_k=5).documents] == exact
        assert idx.searcher().lexicon.nearest                    # and now looked up
        assert idx.build_graphs() == []                          # nothing left: no compaction


def test_check_tells_a_hubs_tolerated_drift_and_deferred_graphs_from_faults_and_repair_mends_both(
        tmp_path, corpus, encoder):
    from chaja.index import Index
    from chaja.stores import sqlite_ann
    from chaja.stores.sqlite import SqliteStore

    if not sqlite_ann.available():
        pytest.skip("usearch is not installed: pip install 'chaja[ann]'")
    with Index(SqliteStore(tmp_path / "s.chaja", ann_threshold=5), encoder=encoder) as idx:
        idx.add([corpus], defer_graphs=True)
        assert idx.check() == []
        assert any(n.startswith("deferred by a bulk load: chunk") for n in idx.check_notes())
        # a hub's writer leaves the statistics alone while the chunk count moves by under 5%
        idx.statistics_drift = 0.5
        extra = tmp_path / "late.md"
        extra.write_text("# 늦은 공지\n\n배수 펌프 점검 일정이 바뀌었습니다.\n", encoding="utf-8")
        idx.add([extra], defer_graphs=True)
        idx.config.hub.statistics_drift = 0.5
        assert idx.check() == [] and any(n.startswith("statistics:") for n in idx.check_notes())
        idx.config.hub.statistics_drift = idx.statistics_drift = 0.0     # beyond the tolerance: a fault
        assert idx.check() == ["statistics: the recorded language means do not match the stored vectors"]
        done = idx.repair()
        assert any("recomputed the language statistics" in d for d in done)
        assert any(d.startswith("built the deferred vector graphs") for d in done)
        assert idx.check() == [] and idx.check_notes() == []


def test_a_run_stopped_before_its_statistics_leaves_a_note_not_a_fault(tmp_path, corpus, encoder):
    """Ctrl-C or a kill between the last document and the statistics: check says the run
    was stopped (a note, what the next run or --repair mends), not that the store is damaged."""
    from chaja.ingest import index_documents
    from chaja.loaders import load_paths

    with chaja.open(tmp_path / "s.chaja", encoder=encoder) as idx:
        idx.add([corpus / "filings"])
        assert idx.check() == [] and idx.check_notes() == []
        idx.store.set_meta("statistics.pending", "1")          # what add_documents sets as it starts
        index_documents(idx.store, idx.encoder, list(load_paths([corpus / "manuals"])), idx.analyzer,
                        aligned_encoder=idx.aligned_encoder)      # ... and dies before the statistics
        assert idx.check() == []
        assert any("stopped before it recorded" in n for n in idx.check_notes())
        idx.store.set_meta("statistics.pending", "0")          # the same mismatch with no run stopped
        assert idx.check() == ["statistics: the recorded language means do not match the stored vectors"]
        idx.repair()
        assert idx.check() == [] and idx.check_notes() == []
