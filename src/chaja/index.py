"""The library's front door: an :class:`Index` is a store plus the settings and
encoder that fill and search it.

    >>> import chaja
    >>> idx = chaja.open("docs.chaja")              # one SQLite file (or postgresql://…)
    >>> idx.add(["docs/"])                          # load, chunk, encode, store
    >>> for d in idx.search("상태 관리").documents:
    ...     print(d.rank, d.doc_id, d.title)

A store remembers how it was indexed (analyser, chunk size, embedding model);
those settings win over the config when the store is reopened, so a search is
always analysed and encoded the way its index was.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable, Iterable, Mapping

from chaja import aligned_fill, store_statistics
from chaja.analysis import get_analyzer
from chaja.config import Config, SearchConfig
from chaja.documents import Document
from chaja.encoders import Encoder, get_encoder
from chaja.encoders.aligned import UseM3Encoder, get_aligned_encoder
from chaja.encoders.base import model_of
from chaja.ingest import IndexReport, Progress, PruneGuard, index_documents
from chaja.loaders import LoadReport, ReadProgress, load_paths
from chaja.rerank import Reranker, get_reranker
from chaja.language_means import META_KEY, decode_means
from chaja.store_statistics import PENDING
from chaja.filters import Filters
from chaja.index_upkeep import IndexUpkeep
from chaja.search.results import SearchResult
from chaja.search.searcher import Searcher
from chaja.stores import Store, StoreError, open_store

_INDEX_KEYS = ("analyzer", "chunk_chars", "heading_vectors", "aligned_vectors")


class Index(IndexUpkeep):
    #: an index batch runs e5 and the aligned encoder side by side (the hub's writer, which
    #: must leave the other cores to searches, turns it off)
    encoders_side_by_side = True

    def __init__(self, store: Store, config: Config | None = None, encoder: Encoder | None = None):
        self.store = store
        self.config = config.copy() if config else Config()
        for key in _INDEX_KEYS:
            value = store.get_meta(f"index.{key}")
            if value is not None:
                self.config.set(f"index.{key}", value)
        self._encoder = encoder
        self._aligned: object | None = None
        self._searcher: Searcher | None = None
        self._rerankers: dict[tuple, Reranker | None] = {}
        self._token: str | None = None
        self.analyzer = get_analyzer(self.config.index.analyzer)

    @classmethod
    def open(cls, location: str | os.PathLike, config: Config | None = None,
             encoder: Encoder | None = None) -> "Index":
        return cls(open_store(str(location)), config, encoder)

    # ---- encoder ---------------------------------------------------------
    @property
    def encoder(self) -> Encoder:
        if self._encoder is None:
            self._encoder = get_encoder(self.config.encoder)
        stored = self.store.get_meta("encoder")
        if stored and model_of(stored) != model_of(self._encoder.name):
            raise StoreError(
                f"this store was indexed with {stored}; the configured encoder is {self._encoder.name}. "
                "Search it with the same model, or index into a new store.")
        return self._encoder

    @property
    def aligned_encoder(self) -> Encoder | None:
        """The aligned encoder (:mod:`chaja.encoders.aligned`): the one the store was indexed
        with; for a new store, the configured one when ``index.aligned_vectors`` is on."""
        if self._aligned is None:
            stored = self.store.get_meta("aligned_encoder")
            if stored is not None and stored != UseM3Encoder.name:
                raise StoreError(f"this store was indexed with the aligned encoder {stored!r}, which this chaja lacks")
            if stored is not None:
                self._aligned = get_aligned_encoder("use-m3", self.config.encoder.threads)
            elif self.store.get_meta("encoder") is None and self.config.index.aligned_vectors:
                self._aligned = get_aligned_encoder(self.config.encoder.aligned, self.config.encoder.threads)
        return self._aligned

    @property
    def encoder_name(self) -> str:
        return self.store.get_meta("encoder") or self.encoder.name

    # ---- writing ---------------------------------------------------------
    def add(self, paths: Iterable[str | os.PathLike], *, prune: bool = False,
            load_report: LoadReport | None = None, defer_graphs: bool = False,
            progress: Callable[[Progress], None] | None = None,
            read_progress: ReadProgress | None = None, replace_moved: bool = False) -> IndexReport:
        """Index files and folders (see :mod:`chaja.loaders`). The report names every file
        that was not read, with the reason (``skipped``), and what the readers noticed
        (``problems``). ``prune`` removes nothing when a path was missing or a file could
        not be read (``prune_refused`` says which). ``read_progress(path, done, total)``
        follows a long file page by page; scanned pages are read as ``index.ocr`` says;
        each file is read in a child process, within ``index.read_timeout_s`` a page. A
        document whose id the store holds from another file that is still there is kept,
        not stored over (``kept_elsewhere``), unless ``replace_moved``."""
        load_report = load_report if load_report is not None else LoadReport()
        docs = load_paths(list(paths), load_report, language=self.config.index.language,
                          ocr=self.config.index.ocr, progress=read_progress,
                          read_timeout_s=self.config.index.read_timeout_s)
        report = self.add_documents(docs, prune=prune, defer_graphs=defer_graphs, progress=progress,
                                    prune_guard=load_report, replace_moved=replace_moved)
        report.files, report.skipped, report.problems = load_report.files, load_report.skipped, load_report.problems
        return report

    def add_documents(self, docs: Iterable[Document], *, prune: bool = False, defer_graphs: bool = False,
                      progress: Callable[[Progress], None] | None = None,
                      prune_guard: PruneGuard | None = None, replace_moved: bool = True) -> IndexReport:
        """Index documents. ``defer_graphs`` (a bulk load): no vector graph (SQLite store) and no
        nearest-word tables now, so the documents are searchable sooner, searched exactly and
        their words scanned for until :meth:`build_graphs` (``chaja optimize``) builds them.
        Documents given here replace those of the same id wherever they came from
        (``replace_moved``; :meth:`add` keeps those of another file still there). The report's
        ``seconds`` are the whole run's: the documents, then the statistics and compaction."""
        start = time.perf_counter()
        enc = self.encoder
        aligned = self.aligned_encoder
        self._record_settings(enc, aligned)
        last: list[Progress] = []

        def relay(p: Progress) -> None:
            last[:] = [p]
            progress(p)

        def stage(name: str) -> None:
            """Tell ``progress`` a finishing step has begun, beside the last counts."""
            if progress is not None:
                progress(dataclasses.replace(last[0], stage=name) if last else Progress(0, 0, 0, 0.0, 0, name))

        need = aligned_fill.AlignedNeed(self.store) if aligned is not None else None
        if self.store.get_meta(PENDING) != "1":
            self.store.set_meta(PENDING, "1")        # cleared once the statistics follow this run
        report = index_documents(self.store, enc, docs, self.analyzer, max_chars=self.config.index.chunk_chars,
                                 batch_chunks=max(self.config.encoder.batch_size, 1) * 4, prune=prune,
                                 heading_vectors=self.config.index.heading_vectors, aligned_encoder=aligned,
                                 progress=relay if progress is not None else None, prune_guard=prune_guard,
                                 replace_moved=replace_moved, aligned_need=need,
                                 encoders_side_by_side=self.encoders_side_by_side)
        if need is not None:          # a store that holds a second language now: the chunks before get theirs
            aligned_fill.fill_pending(self.store, aligned, need, stage)
        # also after a run that found nothing to do: a crash may have left them behind
        self._record_statistics(changed=bool(report.added or report.changed or report.removed), stage=stage,
                                tables=not defer_graphs)
        compact = getattr(self.store, "compact", None)
        moving = self.vectors_to_move()
        if compact is not None and (report.added or report.changed or report.removed or self.pending_upkeep()):
            compact(progress=stage, graphs=not defer_graphs, **({"force": True} if moving else {}))
        self._searcher = None
        report.seconds = time.perf_counter() - start
        return report

    #: the store's vector statistics are recomputed once its chunk count has moved by more than
    #: this share (0: on every change, so a store matches a clean build of the same documents;
    #: the hub's writer allows ``hub.statistics_drift``, 5%, since recomputing reads every vector)
    statistics_drift = 0.0

    def _record_statistics(self, changed: bool = True, stage: Callable[[str], None] = lambda name: None,
                           tables: bool = True) -> None:
        """Record the store's statistics where they no longer follow it (:func:`chaja.store_statistics.record`)."""
        store_statistics.record(self.store, lambda: self.aligned_encoder, self.statistics_drift, changed, stage,
                                tables)

    def _record_settings(self, enc: Encoder, aligned: Encoder | None = None) -> None:
        for key in _INDEX_KEYS:
            value = str(getattr(self.config.index, key))
            stored = self.store.get_meta(f"index.{key}")
            if stored is None:
                self.store.set_meta(f"index.{key}", value)
        if self.store.get_meta("encoder") is None:
            self.store.set_meta("encoder", enc.name)
            if aligned is not None:
                self.store.set_meta("aligned_encoder", aligned.name)

    def delete(self, doc_id: str) -> bool:
        self._searcher = None
        found = self.store.delete_document(doc_id)
        compact = getattr(self.store, "compact", None)
        if found and compact is not None:
            compact()
        if found and self.store.get_meta(META_KEY) is not None:
            self._record_statistics()
        return found

    # ---- reading ---------------------------------------------------------
    def searcher(self) -> Searcher:
        """The searcher over this index, built once (it caches the store's language
        statistics) and rebuilt after writes, this process's or another's (the
        statistics are rewritten with every write that changes content); it reads
        ``config.search`` live."""
        token = self.store.get_meta(META_KEY)
        if self._searcher is None or self._searcher.cfg is not self.config.search or token != self._token:
            indexed = self.store.get_meta("encoder") is not None
            aligned = self.aligned_encoder if indexed else None
            if aligned is not None and len(decode_means(token, min_chunks=1)) > 1:
                getattr(aligned, "prefetch", lambda: None)()   # loads beside the e5 encoder's load below
            enc = self.encoder if indexed else None
            self._searcher = Searcher(self.store, enc, self.config.search, self.analyzer, aligned,
                                      rerank=self.config.rerank, rerankers=self.reranker)
            self._token = token
        return self._searcher

    def reranker(self, spec: str) -> Reranker | None:
        """The reranker ``spec`` names (``search.reranker``), loaded once per spec and
        ``[rerank]`` settings and kept for the life of the index."""
        key = (spec, dataclasses.astuple(self.config.rerank))
        if key not in self._rerankers:
            enc = self.encoder if spec == "e5-windows" and self.store.get_meta("encoder") else None
            self._rerankers[key] = get_reranker(spec, self.config.rerank, enc, self.config.encoder.threads)
        return self._rerankers[key]

    def refresh(self) -> bool:
        """Catch up with what the store has committed since this index last read it (any
        process's writes): the searcher and its statistics, and the store's in-memory
        keyword index and vectors. A search does this itself before it ranks; calling it
        between searches (as the hub does after each write) takes that work off the next
        search's time. True when there was something to catch up with."""
        refresh = getattr(self.store, "refresh", None)
        changed = bool(refresh()) if refresh is not None else False
        before = self._searcher
        searcher = self.searcher()
        changed = changed or searcher is not before
        searcher.language_means, searcher.languages      # noqa: B018 - read to cache them
        if self.config.search.fusion == "calibrated":
            searcher.background                          # noqa: B018
        return changed

    def search(self, text: str, top_k: int | None = None, filters: Filters | Mapping | None = None,
               settings: Mapping[str, object] | None = None) -> SearchResult:
        """Hybrid search. ``filters`` keeps results to chunks whose fields match
        (:class:`chaja.filters.Filters`, or a mapping such as ``{"lang": "ko"}``);
        ``settings`` changes ``search.*`` settings for this search alone
        (``{"search.mode": "keyword"}``; keys without a section are read as ``search.``)."""
        searcher = self.searcher()
        if settings:
            searcher = searcher.with_config(self.search_config(settings))
        return searcher.search(text, top_k, Filters.from_mapping(filters))

    def search_config(self, settings: Mapping[str, object]) -> SearchConfig:
        """A copy of ``config.search`` with ``settings`` applied (only ``search.*`` keys)."""
        cfg = Config(search=dataclasses.replace(self.config.search))
        for key, value in settings.items():
            dotted = key if "." in key else f"search.{key}"
            if not dotted.startswith("search."):
                raise ValueError(f"only search settings can change per search, not {key!r}")
            cfg.set(dotted, value)
        return cfg.search

    def summary(self) -> dict:
        """What the store holds and how it was indexed (``chaja stats --json``, the hub's
        ``/v1/stats``): counts, size, counts by language, source and type, the models,
        the index settings the store records, on PostgreSQL its keyword engine and stored
        postings (:meth:`PostgresStore.keyword_status`) and on a replica how far it is
        behind (:meth:`PostgresStore.replica_status`; None elsewhere)."""
        s = self.store.stats()
        return {"documents": s.documents, "chunks": s.chunks, "size_bytes": s.size_bytes,
                "by_lang": dict(s.by_lang), "by_source": dict(s.by_source), "by_doc_type": dict(s.by_doc_type),
                "encoder": self.store.get_meta("encoder"), "aligned_encoder": self.store.get_meta("aligned_encoder"),
                "index": {k: self.store.get_meta(f"index.{k}") for k in _INDEX_KEYS},
                "deferred_graphs": self.deferred_graphs(),
                "keyword": keyword() if (keyword := getattr(self.store, "keyword_status", None)) else None,
                "replica": replica() if (replica := getattr(self.store, "replica_status", None)) else None}

    def fingerprint(self) -> str:
        """Identifies the stored content and how it was indexed (for evaluation records)."""
        h = hashlib.sha256()
        for doc_id, fp in sorted(self.store.fingerprints().items()):
            h.update(f"{doc_id}\x00{fp}\x00".encode())
        for key in ("encoder", "aligned_encoder", *(f"index.{k}" for k in _INDEX_KEYS)):
            value = self.store.get_meta(key)
            if value is not None:   # settings a store predates leave its fingerprint alone
                h.update(f"{key}={value}\x00".encode())
        return h.hexdigest()[:16]

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open(location: str | os.PathLike, config: Config | None = None, encoder: Encoder | None = None) -> Index:  # noqa: A001
    """Open (or create) an index at a SQLite path or a ``postgresql://`` URL."""
    return Index.open(location, config, encoder)
