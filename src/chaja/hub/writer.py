"""The hub's writer: a process of its own that holds the one writing Index.

Writes run there, one at a time, so their Python work (chunking, analysis, the
store's bookkeeping) never holds the serving process's interpreter lock, and the
process runs at a lower CPU priority (``hub.writer_nice``) with its own e5 session
of ``hub.writer_threads`` threads: an ingest takes the cycles searches leave. The
serving process's readers see each commit through the store (SQLite's change log,
or PostgreSQL itself). The functions below run in the writer process; the hub calls
them through a one-worker process pool.
"""
from __future__ import annotations

import os

from chaja.config import Config
from chaja.index import Index

_index: Index | None = None


def start(location: str, config: dict, nice: int, threads: int) -> None:
    """The pool's initializer: lower the priority, open the store, load the encoders."""
    global _index
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
    _index = Index.open(location, cfg)


def ready() -> str:
    """Load and check the encoders (a store indexed with another model refuses here)."""
    _index.encoder.encode_passages(["warm up"])
    aligned = _index.aligned_encoder
    if aligned is not None:
        aligned.encode_passages(["warm up"])
    return _index.encoder.name


def add(docs) -> dict:
    r = _index.add_documents(docs)
    return {"added": r.added, "changed": r.changed, "unchanged": r.unchanged, "chunks": r.chunks}


def delete(doc_id: str) -> bool:
    return _index.delete(doc_id)


def prune(keep: list[str]) -> list[str]:
    kept = set(keep)
    gone = sorted(set(_index.store.fingerprints()) - kept)
    for doc_id in gone:
        _index.delete(doc_id)
    return gone


def stop() -> None:
    if _index is not None:
        _index.close()
