"""What a running hub holds: one writer, a pool of readers, the shared encoders.

- **Readers**: ``hub.readers`` :class:`~chaja.index.Index` objects over the same store,
  each with its own connection, all sharing one encoder and one aligned encoder
  (loaded once). A search borrows a reader and gives it back; SQLite in WAL mode
  and PostgreSQL let readers run beside the writer. Every reader sees committed
  writes of any process, vectors included (the SQLite store checks its change log
  on each search; an Index rebuilds its statistics when the store's change).
- **Writer**: one Index in a process of its own (:mod:`chaja.hub.writer`), fed one
  write at a time, at a lower CPU priority and with its own e5 session, so an ingest
  takes the cycles searches leave. Should it die, the next write starts a new one.
  It dies with the hub, SIGKILL included (:func:`chaja.lifeline.die_with`): the
  hub starts it from a thread of its own that lives as long as the hub, since Linux's
  parent-death signal follows the thread that started a process, not the process.
  Multiprocessing's resource tracker ends when the last process holding its pipe
  (the hub and the writer) does.
- **Catching up**: after each write the hub's writer makes, and every
  ``hub.refresh_interval_s`` for writes of other processes, a background thread
  borrows each idle reader in turn and brings it up to date
  (:meth:`~chaja.index.Index.refresh`), so the first search after a write does not
  pay for reading it (about 20 ms on a store of 4,000 chunks).
- **Readiness**: the encoders load in a background thread at start-up, with one
  search to warm the caches; until then searches, embeddings and reranking answer 503.
- **Reranker**: ``/v1/rerank`` uses the reranker ``search.reranker`` names, built on
  first use over the readers' encoder (``e5-windows``) and shared by every request.
"""
from __future__ import annotations

import multiprocessing
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import TypeVar

from chaja.config import Config
from chaja.encoders import get_encoder
from chaja.hub import writer
from chaja.hub.metrics import Metrics, TimedEncoder
from chaja.index import Index
from chaja.rerank import Reranker, get_reranker

T = TypeVar("T")


class NotReady(RuntimeError):
    """The hub is still loading its encoders, or failed to."""


class Busy(RuntimeError):
    """No reader came free in time."""


class Hub:
    def __init__(self, location: str, config: Config, *, encoder=None, wait_s: float = 30.0):
        self.location, self.config, self.wait_s = str(location), config, wait_s
        self.metrics = Metrics()
        self._encoder = encoder
        self._writes: ProcessPoolExecutor | None = None
        self._context = multiprocessing.get_context("spawn")
        self._active = self._context.Value("i", 0)     # searches in flight, which the writer yields to
        self._writes_lock = threading.Lock()
        # the thread the writer process is started from: it lives until close(), so the
        # writer's parent-death signal fires when the hub ends, not when a request thread does
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="chaja-hub-spawn")
        self._free: queue.Queue[Index] = queue.Queue()
        self._readers: list[Index] = []
        self.ready = threading.Event()
        self._wrote = threading.Event()           # set after each write, wakes the refresher
        self._closing = threading.Event()
        self._refreshing: threading.Thread | None = None
        self.error: str | None = None
        self.encoder = None          # the readers' e5 encoder, once loaded
        self._reranker: Reranker | None = None     # search.reranker for /v1/rerank, built on first use
        self._reranker_lock = threading.Lock()
        Index.open(self.location, config).close()   # a path that is no store fails here, before serving
        self.metrics.gauge("chaja_store_documents", "documents in the store", lambda: self._stats().documents)
        self.metrics.gauge("chaja_store_chunks", "chunks in the store", lambda: self._stats().chunks)
        self.metrics.gauge("chaja_readers_free", "read connections not in use", self._free.qsize)

    def _stats(self):
        with self.reader(wait_s=1.0) as idx:
            return idx.store.stats()

    # ---- start-up --------------------------------------------------------
    def start(self, background: bool = True) -> None:
        if background:
            threading.Thread(target=self._load, name="chaja-hub-load", daemon=True).start()
        else:
            self._load()

    def _writer_pool(self) -> ProcessPoolExecutor:
        with self._writes_lock:
            if self._writes is None:
                hub = self.config.hub
                pool = ProcessPoolExecutor(
                    1, mp_context=self._context, initializer=writer.start,
                    initargs=(self.location, self.config.to_dict(), int(hub.writer_nice), int(hub.writer_threads),
                              self._active if hub.ingest_max_wait_ms > 0 else None, float(hub.ingest_max_wait_ms),
                              os.getpid()))
                # the pool starts its process on the first submit, in the submitting thread
                self._spawner.submit(pool.submit, writer.pid).result()
                self._writes = pool
            return self._writes

    def _load(self) -> None:
        try:
            writes = self._writer_pool().submit(writer.ready)
            enc = TimedEncoder(self._encoder or get_encoder(self.config.encoder), self.metrics, "passage+query")
            for _ in range(int(self.config.hub.readers) or max(2, os.cpu_count() or 2)):
                self._readers.append(Index.open(self.location, self.config, enc))
            first = self._readers[0]
            first.encoder            # the store's model against the readers' encoder
            aligned = first.aligned_encoder
            if aligned is not None:
                aligned = TimedEncoder(aligned, self.metrics, "aligned")
                for idx in self._readers:
                    idx._aligned = aligned
                aligned.encode_queries(["warm up"])
            enc.encode_queries(["warm up"])
            if first.store.stats().chunks:
                first.search("warm up")
            writes.result()
            for idx in self._readers:
                self._free.put(idx)
            self.encoder = enc
            self.ready.set()
            self._refreshing = threading.Thread(target=self._refresher, name="chaja-hub-refresh", daemon=True)
            self._refreshing.start()
        except BrokenProcessPool:
            self.error = "the writer process failed to start (its error is above)"
            print(f"hub: start-up failed: {self.error}", file=sys.stderr)
        except Exception as exc:   # noqa: BLE001 - reported by /readyz and on stderr
            self.error = f"{type(exc).__name__}: {exc}"
            print(f"hub: start-up failed: {self.error}", file=sys.stderr)

    def _refresher(self) -> None:
        """Bring idle readers up to date after each write and every refresh interval; a
        reader in use is left alone (its next search catches up itself)."""
        interval = float(self.config.hub.refresh_interval_s) or None
        while not self._closing.is_set():
            self._wrote.wait(interval)
            self._wrote.clear()
            if self._closing.is_set():
                return
            for _ in range(len(self._readers)):
                try:
                    idx = self._free.get_nowait()
                except queue.Empty:
                    break
                began = time.perf_counter()
                try:
                    if idx.refresh():
                        self.metrics.refreshed(time.perf_counter() - began)
                except Exception as exc:   # noqa: BLE001 - the next search meets the same error and reports it
                    print(f"hub: catching up with the store failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                finally:
                    self._free.put(idx)

    # ---- use ---------------------------------------------------------------
    def require_ready(self) -> None:
        if not self.ready.is_set():
            raise NotReady(self.error or "the hub is loading its encoders")

    def reranker(self) -> Reranker | None:
        """The reranker ``search.reranker`` names (None for none), built on first use over
        the readers' encoder and kept; :class:`NotReady` while the encoders load."""
        if self.config.search.reranker == "none":
            return None
        self.require_ready()
        with self._reranker_lock:
            if self._reranker is None:
                self._reranker = get_reranker(self.config.search.reranker, self.config.rerank, self.encoder,
                                              int(self.config.encoder.threads))
        return self._reranker

    @contextmanager
    def reader(self, wait_s: float | None = None) -> Iterator[Index]:
        self.require_ready()
        try:
            idx = self._free.get(timeout=self.wait_s if wait_s is None else wait_s)
        except queue.Empty:
            raise Busy(f"every read connection stayed busy for {self.wait_s:g} s") from None
        with self._active.get_lock():
            self._active.value += 1
        try:
            yield idx
        finally:
            with self._active.get_lock():
                self._active.value -= 1
            self._free.put(idx)

    def write(self, job: Callable[..., T], *args) -> T:
        """Run ``job(*args)`` (a function of :mod:`chaja.hub.writer`) in the writer process,
        after the writes before it."""
        self.require_ready()
        try:
            return self._writer_pool().submit(job, *args).result()
        except BrokenProcessPool:
            with self._writes_lock:
                self._writes = None          # the next write starts a new writer
            raise Busy("the writer process stopped; it restarts on the next write, which may be retried") from None
        finally:
            self._wrote.set()

    def close(self) -> None:
        self._closing.set()
        self._wrote.set()
        with self._writes_lock:
            if self._writes is not None:
                try:
                    self._writes.submit(writer.stop).result(timeout=60)
                except Exception:   # noqa: BLE001 - closing: a dead writer has nothing to close
                    pass
                self._writes.shutdown(wait=True)
                self._writes = None
        self._spawner.shutdown(wait=True)
        if self._refreshing is not None:
            self._refreshing.join(timeout=30)     # it may hold a reader
        for idx in self._readers:
            idx.close()
        self._readers.clear()
