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
:mod:`chaja.search.searcher`. With an ``aligned_encoder`` every chunk also gets
that encoder's vector of its passage and of its section name (the title alone
before the first heading), for the aligned lists.
"""
from __future__ import annotations

import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from chaja.analysis import Analyzer
from chaja.chunking import chunk_document, iter_chunks
from chaja.documents import ChunkRecord, Document, source_file, storable_id
from chaja.encoders.base import Encoder
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
    seconds: float = 0.0
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
    import os

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
                    prune_guard: PruneGuard | None = None, replace_moved: bool = False) -> IndexReport:
    """Store ``docs`` (see the module's docstring). With ``prune``, ``prune_guard`` (the
    loader's report) is asked once every document is read: a reason its ``prune_veto()``
    gives (a path that was missing, nothing read) removes nothing and is kept in
    ``prune_refused``, and the unseen documents its ``still_there(infos)`` names (their
    file is there but failed to read) stay. A
    document whose id is stored from another file that is still there (two folders
    of one layout indexed into one store) is not stored over it unless
    ``replace_moved``; it is named in ``kept_elsewhere``."""
    start = time.perf_counter()
    report = IndexReport()
    stored = store.fingerprints()
    seen: dict[str, Document] = {}
    for doc in docs:
        if not storable_id(doc.id):          # refused on every store alike
            report.refused.append(f"document id {doc.id!r} ({doc.path or 'no path'}) is blank or holds a NUL "
                                  "character; not stored")
            continue
        if doc.id in seen:
            report.duplicates.append(doc.id)
        seen[doc.id] = doc
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
    if not replace_moved:
        held = held_elsewhere(store, [d for d in todo if d.id in stored])
        if held:
            report.kept_elsewhere = [f"{d.id!r} is held by {held[d.id]}, which is still there; {d.path} was not "
                                     "stored over it (index with --replace-moved to replace it)"
                                     for d in todo if d.id in held]
            todo = [d for d in todo if d.id not in held]
    state = Progress(report.unchanged, len(seen), 0, 0.0, 0)

    pending: list[tuple[Document, list]] = []
    passages: list[str] = []

    def heading_vectors_of(chunks: list) -> dict:
        texts = sorted({h for c in chunks if (h := c.heading_passage())})
        return dict(zip(texts, encoder.encode_passages(texts))) if texts else {}

    def encode(items: list[tuple[Document, list]], texts: list[str]) -> list[tuple[Document, list[ChunkRecord]]]:
        """The records of these documents' analysed chunks, every vector encoded."""
        t0 = time.perf_counter()
        vectors = encoder.encode_passages(texts)
        chunks = [c for _, parts in items for c, *_ in parts]
        headings = heading_vectors_of(chunks) if heading_vectors else {}
        aligned, names = None, {}
        if aligned_encoder is not None:
            aligned = aligned_encoder.encode_passages(texts)
            names_ = sorted({n for c in chunks if (n := c.aligned_name())})
            names = dict(zip(names_, aligned_encoder.encode_passages(names_))) if names_ else {}
        state.encode_seconds += time.perf_counter() - t0
        # the rate counts section names and aligned passages too
        state.passages_encoded += len(texts) + len(headings) + (len(texts) + len(names) if aligned is not None else 0)
        at = 0
        out = []
        for doc, parts in items:
            records = [ChunkRecord(c, tt, ht, bt, vectors[at + i], headings.get(c.heading_passage()),
                                   None if aligned is None else aligned[at + i], names.get(c.aligned_name() or ""))
                       for i, (c, tt, ht, bt) in enumerate(parts)]
            at += len(parts)
            out.append((doc, records))
        return out

    def count(doc: Document, n_chunks: int) -> None:
        if doc.id in stored:
            report.changed += 1
        else:
            report.added += 1
        report.chunks += n_chunks
        state.documents_done += 1

    def stream(doc: Document) -> None:
        """A document longer than a batch: staged a batch at a time (resuming after what
        an interrupted run staged), then published whole (:mod:`chaja.stores.sqlite_staging`)."""
        key = stage_key(doc)
        done = store.resume_staged(doc.id, key)
        title_terms = analyzer(doc.title)
        n = 0
        for part in _batches(iter_chunks(doc, max_chars), batch_chunks):
            n += len(part)
            if part[-1].ordinal < done:
                continue                      # staged by an earlier run
            parts, texts = analysed([c for c in part if c.ordinal >= done], title_terms, analyzer)
            [(_, records)] = encode([(doc, parts)], texts)
            store.stage_chunks(key, records)
            state.chunks_done += len(records)
            if progress:
                progress(state)
        store.put_staged(doc, key, n)
        count(doc, n)
        if progress:
            progress(state)

    def stage_key(doc: Document) -> str:
        return "|".join((doc.fingerprint(), str(max_chars), getattr(analyzer, "__name__", type(analyzer).__name__),
                         encoder.name, aligned_encoder.name if aligned_encoder is not None else "-",
                         str(int(heading_vectors))))

    def flush() -> None:
        if not pending:
            return
        batch = encode(pending, passages)
        put_many = getattr(store, "put_documents", None)
        if put_many is not None:
            put_many(batch)
        else:
            for doc, records in batch:
                store.put_document(doc, records)
        for doc, records in batch:
            count(doc, len(records))
            state.chunks_done += len(records)
        pending.clear()
        passages.clear()
        if progress:
            progress(state)

    staging = getattr(store, "stage_chunks", None) is not None
    for doc in todo:
        if staging and _longer_than(doc, batch_chunks * max_chars):
            flush()
            stream(doc)
            continue
        parts, texts = records_for(doc, analyzer, max_chars)
        pending.append((doc, parts))
        passages.extend(texts)
        if len(passages) >= batch_chunks:
            flush()
    flush()

    if prune and prune_guard is not None:
        report.prune_refused = prune_guard.prune_veto()
        prune = not report.prune_refused
    if prune:
        gone = sorted(set(stored) - set(seen))
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
    report.seconds = time.perf_counter() - start
    return report
