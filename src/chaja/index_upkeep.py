"""The upkeep of an index: what its store's next compaction or a bulk load left to do,
what ``chaja check`` finds (faults that make the index less than whole, and notes), and the
repair of what can be mended without encoding anything again.

:class:`IndexUpkeep` is a part of :class:`chaja.index.Index` (its ``store``, ``config``,
``analyzer``, ``statistics_drift`` and ``_record_statistics``), kept here so the index's
front door holds its reading and writing alone.
"""
from __future__ import annotations

from collections.abc import Callable

from chaja import store_statistics
from chaja.stores import StoreError

#: :meth:`Index.pending_upkeep`'s work, as ``chaja check`` notes it
_UPKEEP_NOTES = {
    "vectors": "vectors: kept in an older form, waiting to be written into their files",
    "text": "text: chunks written before the store's text dictionaries are kept plain, waiting to be packed",
    "terms": "keyword rows: terms the store's analyser makes again are kept as rows, waiting to be dropped",
    "keywords": "keyword file: missing or of an older format, so each process builds the postings from the rows",
}


class IndexUpkeep:
    """:class:`chaja.index.Index`'s upkeep, checks and repair."""

    def vectors_to_move(self) -> bool:
        """A store an older chaja wrote, whose vectors its next compaction (the next
        :meth:`add_documents` or :meth:`build_graphs`) moves into files."""
        waiting = getattr(self.store, "vectors_to_move", None)
        return waiting is not None and waiting()

    def text_to_pack(self) -> bool:
        """Rows whose text the next compaction packs (SQLite store: those written before its
        text dictionaries, every row of a store an older chaja wrote; :mod:`chaja.stores.text_repacking`)."""
        waiting = getattr(self.store, "text_to_pack", None)
        return waiting is not None and waiting()

    def pending_upkeep(self) -> list[str]:
        """The work the store's next compaction has of its own, new rows or not (SQLite store):
        ``"vectors"`` to move into today's files, ``"text"`` to pack, ``"terms"``: keyword rows
        to drop (:mod:`chaja.stores.derived_terms`), ``"keywords"``: a keyword file to write
        again (missing, or an older format)."""
        keywords = getattr(self.store, "keywords_to_write", None)
        terms = getattr(self.store, "terms_to_drop", None)
        checks = (("vectors", self.vectors_to_move), ("text", self.text_to_pack),
                  ("terms", terms or (lambda: False)), ("keywords", keywords or (lambda: False)))
        return [name for name, waiting in checks if waiting()]

    def deferred_graphs(self) -> list[str]:
        """The vector fields searched exactly for want of a graph (SQLite store; see
        :meth:`SqliteStore.deferred_graphs`), and ``"translation tables"`` where a bulk load
        left the lexicon's out; empty where there is nothing to build."""
        deferred = getattr(self.store, "deferred_graphs", None)
        tables = [store_statistics.TABLES_LABEL] if store_statistics.tables_deferred(self.store) else []
        return (deferred() if deferred is not None else []) + tables

    def build_graphs(self, progress: Callable[[str], None] | None = None) -> list[str]:
        """Build what a bulk load deferred (:meth:`deferred_graphs`), the graphs with the compaction
        they belong to (which also does the upkeep that waits: :meth:`pending_upkeep`)."""
        fields = self.deferred_graphs()
        if store_statistics.split_deferred(fields)[0] or self.pending_upkeep():
            self.store.compact(force=True, progress=progress)
        store_statistics.complete_lexicon(self.store)
        self._searcher = None
        return fields

    def inspect(self) -> tuple[list[str], list[str]]:
        """(faults, notes), the stored vectors read once. Faults make the index less than
        whole: the store's own (where the store can check itself) and recorded language
        statistics that no longer match the stored vectors beyond what a hub allows
        (``chaja index`` on the same files, or :meth:`repair`, brings those up to date).
        Notes are what a whole index may still show: statistics a hub left as they were
        while the chunk count moved within ``hub.statistics_drift``, or that an index run
        stopped before recording, and vector graphs deferred (searched exactly until
        :meth:`build_graphs` or :meth:`repair` builds them)."""
        faults = list(self.store.check()) if hasattr(self.store, "check") else []
        notes = []
        try:
            off, deferred = self._statistics_off(), self.deferred_graphs()
        except StoreError:
            if faults:        # the store's own faults say why its vectors cannot be read
                return faults, notes
            raise
        if off == "fault":
            faults.append("statistics: the recorded language means do not match the stored vectors")
        elif off == "drift":
            notes.append("statistics: the language means were recorded before the last few changes, within "
                         f"the hub's tolerance ({self.config.hub.statistics_drift:.0%} of the chunks); "
                         "check --repair recomputes them")
        elif off == "interrupted":
            notes.append("statistics: the last index run was stopped before it recorded the language means "
                         "(Ctrl-C, a kill); the next chaja index, or check --repair, records them")
        if deferred:
            notes.append(f"deferred by a bulk load: {', '.join(deferred)}; check --repair or chaja optimize builds "
                         "them (until then searches find the same results, more slowly)")
        return faults, notes + self._upkeep_notes()

    def _upkeep_notes(self) -> list[str]:
        """What the next compaction would bring to today's form (:meth:`pending_upkeep`)."""
        return [f"{_UPKEEP_NOTES[name]}; chaja optimize (or the next chaja index) does it"
                for name in self.pending_upkeep()]

    def check(self) -> list[str]:
        """The faults of :meth:`inspect`; empty: whole."""
        return self.inspect()[0]

    def check_notes(self) -> list[str]:
        """The notes of :meth:`inspect`."""
        return self.inspect()[1]

    def _statistics_off(self) -> str:
        """:func:`chaja.store_statistics.off`, within this index's or the hub's drift, the larger."""
        return store_statistics.off(self.store, max(self.statistics_drift, float(self.config.hub.statistics_drift)))

    def repair(self) -> list[str]:
        """Mend what :meth:`inspect` finds without encoding anything
        again: the store's own repairs (where it has them), the language statistics and
        deferred vector graphs; returns what was done."""
        done = list(self.store.repair(self.analyzer)) if hasattr(self.store, "repair") else []
        if done or self._statistics_off():
            self._record_statistics(changed=True)
            done.append("recomputed the language statistics from the stored vectors")
        built = self.build_graphs() if self.deferred_graphs() else []
        if built:
            done.append(f"built the deferred vector graphs: {', '.join(built)}")
        self._searcher = None
        return done
