"""The hub's writer: a process of its own that holds the one writing Index.

Writes run there, one at a time, so their Python work (chunking, analysis, the
store's bookkeeping) never holds the serving process's interpreter lock, and the
process runs at a lower CPU priority (``hub.writer_nice``) with its own e5 session
of ``hub.writer_threads`` threads. Priority alone does not keep an ingest from
slowing searches when the two share a physical core, so the writer also yields
(:class:`YieldingEncoder`): it encodes a few passages at a time and, before each
piece, waits while searches are running (the serving process counts them in shared
memory), up to ``hub.ingest_max_wait_ms``, so an ingest never stops. The serving
process's readers see each commit through the store (SQLite's change log, or
PostgreSQL itself). The functions below run in the writer process; the hub calls
them through a one-worker process pool.

The writer dies with the hub, however the hub ends (SIGKILL included,
:mod:`chaja.lifeline`); the hub starts its writer from a thread that lives as long as
the hub, since Linux's parent-death signal follows the starting thread. An orphaned
writer would block forever on the pool's queue, whose pipe it holds both ends of, and
keep multiprocessing's resource tracker alive with it.
"""
from __future__ import annotations

import os
import time

import numpy as np

from chaja.config import Config
from chaja.encoders import get_encoder
from chaja.index import Index
from chaja.lifeline import die_with

_index: Index | None = None
_reading = None       # the process posted files are read in (chaja.reading_process), from the first

#: passages the writer encodes between two looks at the searches in flight
PIECE = 2


class YieldingEncoder:
    """Encodes passages :data:`PIECE` at a time, each piece after the searches in flight
    (``active``, a shared counter) have finished or ``max_wait_s`` has passed."""

    def __init__(self, inner, active, max_wait_s: float):
        self._inner, self._active, self._max_wait_s = inner, active, max_wait_s
        self.name, self.dim = inner.name, inner.dim
        self.waited_s = 0.0

    def _quiet(self) -> None:
        if self._active is None or self._active.value <= 0:
            return
        began = time.monotonic()
        end = began + self._max_wait_s
        while self._active.value > 0 and time.monotonic() < end:
            time.sleep(0.002)
        self.waited_s += time.monotonic() - began

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        parts = []
        for i in range(0, len(texts), PIECE):
            self._quiet()
            parts.append(self._inner.encode_passages(texts[i:i + PIECE]))
        return np.concatenate(parts) if parts else np.zeros((0, self.dim), np.float32)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._inner.encode_queries(texts)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def start(location: str, config: dict, nice: int, threads: int, active=None, max_wait_ms: float = 0.0,
          parent: int | None = None) -> None:
    """The pool's initializer: tie this process's life to the hub's (``parent``), lower
    the priority, open the store, load the encoders (wrapped to yield to searches when
    ``active`` is given)."""
    global _index
    if parent is not None:
        die_with(parent)
    if nice and hasattr(os, "nice"):
        try:
            os.nice(nice)
        except OSError:
            pass
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(1, user_api="blas")
    except ImportError:
        pass
    cfg = Config.from_dict(config)
    cfg.encoder.threads = max(0, int(threads))
    _index = writing_index(location, cfg)
    if active is not None:
        wait = max(0.0, float(max_wait_ms)) / 1000
        _index._encoder = YieldingEncoder(get_encoder(cfg.encoder), active, wait)
        aligned = _index.aligned_encoder
        if aligned is not None:
            _index._aligned = YieldingEncoder(aligned, active, wait)


def writing_index(location: str, cfg: Config) -> Index:
    """The writer's Index: its encoders run one after the other (an index run elsewhere runs
    them side by side, two cores' work; the writer leaves the other cores to searches), and
    its statistics are recomputed only once they drift."""
    index = Index.open(location, cfg)
    index.encoders_side_by_side = False
    # a mean or covariance over thousands of vectors does not move with a few more, and each
    # recomputation reads every vector and makes every reader decode the new statistics
    index.statistics_drift = float(cfg.hub.statistics_drift)
    return index


def pid() -> int:
    return os.getpid()


def ready() -> str:
    """Load and check the encoders (a store indexed with another model refuses here)."""
    _index.encoder.encode_passages(["warm up"])
    aligned = _index.aligned_encoder
    if aligned is not None:
        aligned.encode_passages(["warm up"])
    return _index.encoder.name


def add(docs) -> dict:
    r = _index.add_documents(docs)
    return {"added": r.added, "changed": r.changed, "unchanged": r.unchanged, "chunks": r.chunks,
            **({"refused": r.refused} if r.refused else {})}


def add_file(path: str, doc_id: str, name: str) -> dict:
    """Read one file with the reader its content calls for (in a child of this process,
    within ``index.read_timeout_s`` a page; never in the serving process) and index its
    documents; what was skipped or noticed is said by ``name``."""
    global _reading
    from pathlib import Path

    from chaja.loaders import LoadReport, file_documents, reading_process

    settings = _index.config.index
    if _reading is None:
        _reading = reading_process(settings.read_timeout_s)
    report = LoadReport()
    docs = list(file_documents(Path(path), doc_id, report, settings.language, ocr=settings.ocr, reading=_reading))
    for d in docs:
        d.path = d.path.replace(path, name)
    counts = add(docs) if docs else dict.fromkeys(("added", "changed", "unchanged", "chunks"), 0)
    return counts | {"ids": [d.id for d in docs], "skipped": [s.reason for s in report.skipped],
                     "warnings": [p.replace(path, name) for p in report.problems]}


def delete(doc_id: str) -> bool:
    return _index.delete(doc_id)


def prune(keep: list[str]) -> list[str]:
    kept = set(keep)
    gone = sorted(set(_index.store.fingerprints()) - kept)
    for doc_id in gone:
        _index.delete(doc_id)
    return gone


def stop() -> None:
    if _reading is not None:
        _reading.close()
    if _index is not None:
        _index.close()
