"""Documents → stored chunks: chunk, analyse, encode, write one document per transaction.

Re-indexing is idempotent: a document whose content fingerprint is unchanged is
skipped (not re-encoded); a changed one is replaced whole; ``prune`` deletes
stored documents that the given paths no longer hold. Passages of several
documents are encoded together in batches, then each document is written in its
own transaction, so a crash loses at most the batch in flight and never leaves a
half-written document.

With ``heading_vectors`` each chunk that has a heading also gets the vector of
its section's name alone (title and heading path, encoded as a passage;
identical names in a batch are encoded once), for the heading list of
:mod:`chaja.search.searcher`. With an ``aligned_encoder`` each chunk also gets
that encoder's vector of its passage and of its section name (the title alone
before the first heading), for the aligned lists, once the store and the run hold
two languages (:mod:`chaja.aligned_fill`, which also fills the chunks written before).
"""
from __future__ import annotations

import itertools
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from chaja.analysis import Analyzer
from chaja.chunking import chunk_document, iter_chunks
from chaja.documents import ChunkRecord, Document, source_file, storable_id
from chaja.encoders.base import Encoder
from chaja.stores import derived_terms, side_by_side
from chaja.stores.base import Store


@dataclass
class Progress:
    """How far indexing is: documents and chunks done, encoding time, and the ``stage``:
    ``"encoding"`` while documents are encoded and stored, then each finishing step by name
    (the vector statistics, the translation lexicon, the keyword postings, a field's vector
    file and graph), which on a large store take minutes after the last document."""
    documents_done: int
    documents_total: int
    chunks_done: int
    encode_seconds: float
    passages_encoded: int
    stage: str = "encoding"

    @property
    def encode_rate(self) -> float:
        return self.passages_encoded / self.encode_seconds if self.encode_seconds > 0 else 0.0


@dataclass
class IndexReport:
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks: int = 0
    seconds: float = 0.0            # the run's (Index.add: the statistics and compaction after the documents too)
    duplicates: list[str] = field(default_factory=list)     # ids seen twice in one run (last kept)
    discarded_staged: int = 0       # with prune: staged chunks of interrupted documents no longer given
    prune_refused: str = ""         # why a prune asked for removed nothing (a path missing, a file unread)
    kept_elsewhere: list[str] = field(default_factory=list)   # ids held by another file that is still there
    refused: list[str] = field(default_factory=list)          # documents whose id no store can keep
    files: int = 0                  # files read (Index.add: from the loader's report)
    skipped: list = field(default_factory=list)    # chaja.loaders.SkippedFile: files not read, with the reason
    problems: list[str] = field(default_factory=list)   # what the readers noticed in files they read
    by_source: Counter = field(default_factory=Counter)
    by_doc_type: Counter = field(default_factory=Counter)
    by_lang: Counter = field(default_factory=Counter)
    by_source_type: Counter = field(default_factory=Counter)  # (source, doc_type) → documents

    def missing(self, expected: dict[str, list[str]]) -> list[str]:
        """Warnings for each expected (source, document type) that this run did not see."""
        out = []
        for source, types in sorted(expected.items()):
            for t in types:
                if self.by_source_type[(source, t)] == 0:
                    out.append(f"expected documents of type {t!r} from source {source!r}; none were found")
        return out


class PruneGuard(Protocol):
    """What a prune asks the loader before removing the documents a run did not see."""

    def prune_veto(self) -> str: ...

    def still_there(self, infos: list) -> set[str]: ...


def held_elsewhere(store: Store, docs: list[Document]) -> dict[str, str]:
    """id → stored path, for the documents whose id the store holds from another file that
    still exists: two folders of one layout (``en/guide.md`` and ``ko/guide.md`` both
    ``guide``) would otherwise replace each other in silence. A file that is gone was
    moved or renamed, and its document is replaced."""
    if not docs:
        return {}
    paths = {d.id: d.path for d in docs}
    out = {}
    for info in store.documents(ids=list(paths), limit=len(paths)):
        new, old = paths.get(info.id) or "", info.path or ""
        if old and new and source_file(old) != source_file(new) and os.path.exists(source_file(old)):
            out[info.id] = old
    return out


def analysed(chunks: list, title_terms: list[str], analyzer: Analyzer) -> tuple[list, list[str]]:
    """(chunk, title terms, heading terms, body terms) of each chunk, and the passages to encode."""
    parts = [(c, title_terms, analyzer(" ".join(c.heading_path)), analyzer(c.text)) for c in chunks]
    return parts, [c.passage_text() for c in chunks]


def records_for(doc: Document, analyzer: Analyzer, max_chars: int) -> tuple[list, list[str]]:
    """Chunks of a document with their analysed terms, and the passages to encode."""
    return analysed(chunk_document(doc, max_chars), analyzer(doc.title), analyzer)


def _longer_than(doc: Document, chars: int) -> bool:
    """Whether the document's text is longer than ``chars`` (more than one batch of chunks
    at the most: a chunk holds at most ``max_chars``)."""
    total = 0
    for section in doc.sections:
        total += len(section.text)
        if total > chars:
            return True
    return False


def _batches(items: Iterable, n: int) -> Iterator[list]:
    it = iter(items)
    while part := list(itertools.islice(it, max(n, 1))):
        yield part


def index_documents(store: Store, encoder: Encoder, docs: Iterable[Document], analyzer: Analyzer,
                    *, max_chars: int = 1200, batch_chunks: int = 64, prune: bool = False,
                    heading_vectors: bool = False, aligned_encoder: Encoder | None = None,
                    progress: Callable[[Progress], None] | None = None,
                    prune_guard: PruneGuard | None = None, replace_moved: bool = False,
                    aligned_need: Callable[[set[str]], bool] | None = None,
                    encoders_side_by_side: bool = True) -> IndexReport:
    """Store ``docs`` (see the module's docstring). With ``prune``, ``prune_guard`` (the
    loader's report) is asked once every document is read: a reason its ``prune_veto()``
    gives (a path that was missing, nothing read) removes nothing and is kept in
    ``prune_refused``, and the unseen documents its ``still_there(infos)`` names (their
    file is there but failed to read) stay. A
    document whose id is stored from another file that is still there (two folders
    of one layout indexed into one store) is not stored over it unless
    ``replace_moved``; it is named in ``kept_elsewhere``. ``aligned_need(languages)``
    says whether a batch of chunks of those languages gets aligned vectors
    (:class:`chaja.aligned_fill.AlignedNeed`; every batch without it). With ``encoders_side_by_side``
    a batch's two encoders run at once (two cores' work), else one after the other."""
    start = time.perf_counter()
    report = IndexReport()
    seen = _distinct(docs, report)
    # a prune weighs every stored document; otherwise only those of the ids seen are asked for
    stored = store.fingerprints() if prune else store.fingerprints(list(seen))
    todo = _changed(seen, stored, report)
    if not replace_moved:
        todo = _not_held_elsewhere(store, todo, stored, report)
    state = Progress(report.unchanged, len(seen), 0, 0.0, 0)
    staging = getattr(store, "stage_chunks", None) is not None
    run = _Run(store, encoder, analyzer, max_chars=max_chars, batch_chunks=batch_chunks,
               heading_vectors=heading_vectors, aligned_encoder=aligned_encoder, progress=progress,
               report=report, stored=stored, state=state, aligned_need=aligned_need,
               encoders_side_by_side=encoders_side_by_side)
    run.store_all(todo, staging)
    if prune:
        _prune(store, report, sorted(set(stored) - set(seen)), prune_guard, staging)
    report.seconds = time.perf_counter() - start
    return report


def _distinct(docs: Iterable[Document], report: IndexReport) -> dict[str, Document]:
    """id → document of every storable document, the last one of an id seen twice kept
    (the repeats in ``duplicates``, the ids no store can keep in ``refused``)."""
    seen: dict[str, Document] = {}
    for doc in docs:
        if not storable_id(doc.id):          # refused on every store alike
            report.refused.append(f"document id {doc.id!r} ({doc.path or 'no path'}) is blank or holds a NUL "
                                  "character; not stored")
            continue
        if doc.id in seen:
            report.duplicates.append(doc.id)
        seen[doc.id] = doc
    return seen


def _changed(seen: dict[str, Document], stored: dict[str, str], report: IndexReport) -> list[Document]:
    """The documents whose fingerprint differs from the stored one (or that are new), each
    document counted by source, type and language, the unchanged ones in ``unchanged``."""
    todo = []
    for doc in seen.values():
        report.by_source[doc.source or "-"] += 1
        report.by_doc_type[doc.doc_type or "-"] += 1
        report.by_lang[doc.lang or "-"] += 1
        report.by_source_type[(doc.source, doc.doc_type)] += 1
        if stored.get(doc.id) == doc.fingerprint():
            report.unchanged += 1
        else:
            todo.append(doc)
    return todo


def _not_held_elsewhere(store: Store, todo: list[Document], stored: dict[str, str],
                        report: IndexReport) -> list[Document]:
    """``todo`` without the documents whose id the store holds from another file that is
    still there (:func:`held_elsewhere`), those named in ``kept_elsewhere``."""
    held = held_elsewhere(store, [d for d in todo if d.id in stored])
    if held:
        report.kept_elsewhere = [f"{d.id!r} is held by {held[d.id]}, which is still there; {d.path} was not "
                                 "stored over it (index with --replace-moved to replace it)"
                                 for d in todo if d.id in held]
        todo = [d for d in todo if d.id not in held]
    return todo


def _prune(store: Store, report: IndexReport, gone: list[str], prune_guard: PruneGuard | None,
           staging: bool) -> None:
    """Delete the stored documents this run did not see (``gone``) but those whose file the
    guard says is still there, and (``staging``) every chunk still staged; nothing where the
    guard vetoes the prune (its reason kept in ``prune_refused``)."""
    if prune_guard is not None:
        report.prune_refused = prune_guard.prune_veto()
        if report.prune_refused:
            return
    if gone and prune_guard is not None:
        kept = prune_guard.still_there(store.documents(ids=gone, limit=len(gone)))
        if kept:
            report.prune_refused = (f"kept {len(kept)} document{'s' if len(kept) > 1 else ''} whose file "
                                    "is still there but could not be read")
        gone = [d for d in gone if d not in kept]
    for doc_id in gone:
        if store.delete_document(doc_id):
            report.removed += 1
    if staging:
        # every document of this run is published by now: what is still staged
        # belongs to documents the given paths no longer hold
        report.discarded_staged = store.discard_staged()


class _Run:
    """The encoding and writing of one run: documents gathered until their passages fill a
    batch, encoded together and written in one transaction; a document longer than a batch
    streamed through the store's staging. Counts go to ``report`` and ``state``."""

    def __init__(self, store: Store, encoder: Encoder, analyzer: Analyzer, *, max_chars: int, batch_chunks: int,
                 heading_vectors: bool, aligned_encoder: Encoder | None,
                 progress: Callable[[Progress], None] | None, report: IndexReport, stored: dict[str, str],
                 state: Progress, aligned_need: Callable[[set[str]], bool] | None = None,
                 encoders_side_by_side: bool = True):
        self.store, self.encoder, self.analyzer = store, encoder, analyzer
        self.max_chars, self.batch_chunks = max_chars, batch_chunks
        self.heading_vectors, self.aligned_encoder = heading_vectors, aligned_encoder
        self.progress, self.report, self.stored, self.state = progress, report, stored, state
        #: whether a batch of chunks of these languages gets aligned vectors (every one without it)
        self.aligned_need = aligned_need or (lambda langs: True)
        self.encoders_side_by_side = encoders_side_by_side
        self.pending: list[tuple[Document, list]] = []
        self.passages: list[str] = []

    def store_all(self, todo: list[Document], staging: bool) -> None:
        """Encode and store every document of ``todo``, a batch at a time; with ``staging``
        (a store that stages chunks) a document longer than a batch streams."""
        for doc in todo:
            if staging and _longer_than(doc, self.batch_chunks * self.max_chars):
                self.flush()
                self.stream(doc)
                continue
            parts, texts = records_for(doc, self.analyzer, self.max_chars)
            self.pending.append((doc, parts))
            self.passages.extend(texts)
            if len(self.passages) >= self.batch_chunks:
                self.flush()
        self.flush()

    def tell(self) -> None:
        if self.progress:
            self.progress(self.state)

    def heading_vectors_of(self, chunks: list) -> dict:
        texts = sorted({h for c in chunks if (h := c.heading_passage())})
        return dict(zip(texts, self.encoder.encode_passages(texts))) if texts else {}

    def encode(self, items: list[tuple[Document, list]], texts: list[str]) -> list[tuple[Document, list[ChunkRecord]]]:
        """The records of these documents' analysed chunks, every vector encoded."""
        t0 = time.perf_counter()
        chunks = [c for _, parts in items for c, *_ in parts]

        def own_language() -> tuple:
            return (self.encoder.encode_passages(texts),
                    self.heading_vectors_of(chunks) if self.heading_vectors else {})

        def aligned_vectors() -> tuple:
            names_ = sorted({n for c in chunks if (n := c.aligned_name())})
            return (self.aligned_encoder.encode_passages(texts),
                    dict(zip(names_, self.aligned_encoder.encode_passages(names_))) if names_ else {})
        if self.aligned_encoder is not None and self.aligned_need({c.lang for c in chunks}):
            # the two encoders side by side: the aligned one's numpy work runs while e5's
            # onnxruntime batches and Python tokenising leave a core free (96 passages on two
            # cores: 6.1 s against 6.9-7.4 s one after the other)
            (vectors, headings), (aligned, names) = side_by_side.run([own_language, aligned_vectors],
                                                                     None if self.encoders_side_by_side else 0)
        else:
            (vectors, headings), (aligned, names) = own_language(), (None, {})
        self.state.encode_seconds += time.perf_counter() - t0
        # the rate counts section names and aligned passages too
        self.state.passages_encoded += (len(texts) + len(headings)
                                        + (len(texts) + len(names) if aligned is not None else 0))
        at, out, terms_from = 0, [], derived_terms.name_of(self.analyzer)
        for doc, parts in items:
            records = [ChunkRecord(c, tt, ht, bt, vectors[at + i], headings.get(c.heading_passage()),
                                   None if aligned is None else aligned[at + i], names.get(c.aligned_name() or ""),
                                   terms_from)
                       for i, (c, tt, ht, bt) in enumerate(parts)]
            at += len(parts)
            out.append((doc, records))
        return out

    def count(self, doc: Document, n_chunks: int) -> None:
        if doc.id in self.stored:
            self.report.changed += 1
        else:
            self.report.added += 1
        self.report.chunks += n_chunks
        self.state.documents_done += 1

    def stream(self, doc: Document) -> None:
        """A document longer than a batch: staged a batch at a time (resuming after what
        an interrupted run staged), then published whole (:mod:`chaja.stores.sqlite_staging`)."""
        key = self.stage_key(doc)
        done = self.store.resume_staged(doc.id, key)
        title_terms = self.analyzer(doc.title)
        n = 0
        for part in _batches(iter_chunks(doc, self.max_chars), self.batch_chunks):
            n += len(part)
            if part[-1].ordinal < done:
                continue                      # staged by an earlier run
            parts, texts = analysed([c for c in part if c.ordinal >= done], title_terms, self.analyzer)
            [(_, records)] = self.encode([(doc, parts)], texts)
            self.store.stage_chunks(key, records)
            self.state.chunks_done += len(records)
            self.tell()
        self.store.put_staged(doc, key, n)
        self.count(doc, n)
        self.tell()

    def stage_key(self, doc: Document) -> str:
        analyzer, encoder, aligned_encoder = self.analyzer, self.encoder, self.aligned_encoder
        return "|".join((doc.fingerprint(), str(self.max_chars),
                         getattr(analyzer, "__name__", type(analyzer).__name__),
                         encoder.name, aligned_encoder.name if aligned_encoder is not None else "-",
                         str(int(self.heading_vectors))))

    def flush(self) -> None:
        if not self.pending:
            return
        batch = self.encode(self.pending, self.passages)
        put_many = getattr(self.store, "put_documents", None)
        if put_many is not None:
            put_many(batch)
        else:
            for doc, records in batch:
                self.store.put_document(doc, records)
        for doc, records in batch:
            self.count(doc, len(records))
            self.state.chunks_done += len(records)
        self.pending.clear()
        self.passages.clear()
        self.tell()
