"""Run a search's independent graph walks side by side.

A hybrid search over a large store walks up to four HNSW graphs (passages and section
names, of each encoder), each a few milliseconds of work during which usearch
releases the GIL. Run one after another they add up; run on a small shared pool of
threads they overlap: on two cores, two graph walks take 3.0 ms together against 5.8 ms in
turn (100,000 vectors, 512 search candidates). Only pure computations on arrays the
caller has already read go to the pool; the store's own state (its caches, its SQLite
connection) is touched in the calling thread alone. Exact scans stay out of it: a
matrix product of that size already runs on every core (BLAS threads), and beside a
graph walk those threads stall it. An index batch runs its two encoders here too
(:mod:`chaja.ingest`): each keeps its own model, and a call the busy pool has not started
is taken by the caller, so a search never waits behind an encoding.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

#: threads beside the caller's (one per core beyond the first, at most three)
WORKERS = max(0, min(3, (os.cpu_count() or 1) - 1))

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _shared_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=max(1, WORKERS), thread_name_prefix="chaja-search")
        return _pool


def _forget_pool() -> None:           # a forked child does not inherit the parent's threads
    global _pool
    _pool = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def run(calls: Sequence[Callable[[], T]], workers: int | None = None) -> list[T]:
    """The results of ``calls``, in order: the first runs in the calling thread, the rest
    on the shared pool; with ``workers`` 0 (default :data:`WORKERS`, 0 on one core) all run
    in turn in the calling thread. The first exception raised is raised here, after every
    call has finished."""
    workers = WORKERS if workers is None else workers
    if workers <= 0 or len(calls) < 2:
        return [call() for call in calls]
    pool = _shared_pool()
    futures = [None] + [pool.submit(call) for call in calls[1:]]
    results: list = [None] * len(calls)
    error: BaseException | None = None
    for i, call in enumerate(calls):   # the caller takes every call the pool has not started
        if i and not futures[i].cancel():
            continue
        try:
            results[i] = call()
        except BaseException as exc:      # wait for the others before raising
            error = error or exc
    for i, f in enumerate(futures):
        if f is None or f.cancelled():
            continue
        try:
            results[i] = f.result()
        except BaseException as exc:
            error = error or exc
    if error is not None:
        raise error
    return results
