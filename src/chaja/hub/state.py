"""What a running hub holds: one writer, a pool of readers, the shared encoders.

- **Readers**: ``hub.readers`` :class:`~chaja.index.Index` objects over the same store,
  each with its own connection, all sharing one encoder and one aligned encoder
  (loaded once). A search borrows a reader and gives it back; SQLite in WAL mode
  and PostgreSQL let readers run beside the writer. Every reader sees committed
  writes of any process, vectors included (the SQLite store checks its change log
  on each search; an Index rebuilds its statistics when the store's change).
- **Writer**: one Index on a thread of its own, fed one write at a time. It encodes
  with its own e5 session (``hub.writer_threads``, one thread by default) and runs at
  a lower CPU priority (``hub.writer_nice``), so an ingest takes the cores that
  searches leave instead of doubling their latency.
- **Readiness**: the encoders load in a background thread at start-up, with one
  search to warm the caches; until then searches and embeddings answer 503.
"""
from __future__ import annotations

import dataclasses
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import TypeVar

from chaja.config import Config
from chaja.encoders import get_encoder
from chaja.hub.metrics import Metrics, TimedEncoder
from chaja.index import Index

T = TypeVar("T")


class NotReady(RuntimeError):
    """The hub is still loading its encoders, or failed to."""


class Busy(RuntimeError):
    """No reader came free in time."""


class Hub:
    def __init__(self, location: str, config: Config, *, encoder=None, wait_s: float = 30.0):
        self.location, self.config, self.wait_s = str(location), config, wait_s
        self.metrics = Metrics()
        self.writer = Index.open(location, config, encoder)
        self._writes = ThreadPoolExecutor(1, thread_name_prefix="chaja-writer", initializer=self._writer_start)
        self._encoder = encoder
        self._free: queue.Queue[Index] = queue.Queue()
        self._readers: list[Index] = []
        self.ready = threading.Event()
        self.error: str | None = None
        self.encoder_name: str | None = None
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

    def _writer_start(self) -> None:
        """In the writer thread: lower its priority; its encoder session is made here, so
        the session's threads inherit that priority."""
        nice = int(self.config.hub.writer_nice)
        if nice and hasattr(os, "setpriority"):
            try:
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
            except OSError:
                pass
        if self._encoder is None:
            enc_cfg = dataclasses.replace(self.config.encoder, threads=max(0, int(self.config.hub.writer_threads)))
            self.writer._encoder = TimedEncoder(get_encoder(enc_cfg), self.metrics, "writer")

    def _load(self) -> None:
        try:
            self._writes.submit(self._check_writer).result()
            enc = TimedEncoder(self._encoder or get_encoder(self.config.encoder), self.metrics, "passage+query")
            aligned = self.writer.aligned_encoder
            if aligned is not None:
                aligned = TimedEncoder(aligned, self.metrics, "aligned")
                self.writer._aligned = aligned
            for _ in range(int(self.config.hub.readers) or max(2, os.cpu_count() or 2)):
                idx = Index.open(self.location, self.config, enc)
                idx._aligned = aligned
                self._readers.append(idx)
            enc.encode_queries(["warm up"])
            if aligned is not None:
                aligned.encode_queries(["warm up"])
            first = self._readers[0]
            first.encoder            # the store's model against the readers' encoder
            if first.store.stats().chunks:
                first.search("warm up")
            for idx in self._readers:
                self._free.put(idx)
            self.encoder_name = enc.name
            self.ready.set()
        except Exception as exc:   # noqa: BLE001 - reported by /readyz and on stderr
            self.error = f"{type(exc).__name__}: {exc}"
            print(f"hub: start-up failed: {self.error}", file=sys.stderr)

    # ---- use ---------------------------------------------------------------
    @contextmanager
    def reader(self, wait_s: float | None = None) -> Iterator[Index]:
        if not self.ready.is_set():
            raise NotReady(self.error or "the hub is loading its encoders")
        try:
            idx = self._free.get(timeout=self.wait_s if wait_s is None else wait_s)
        except queue.Empty:
            raise Busy(f"every read connection stayed busy for {self.wait_s:g} s") from None
        try:
            yield idx
        finally:
            self._free.put(idx)

    def _check_writer(self) -> None:
        self.writer.encoder          # the store's model against the writer's encoder
        self.writer._encoder.encode_passages(["warm up"])

    def write(self, fn: Callable[[Index], T]) -> T:
        """Run ``fn(writer)`` on the writer thread, after the writes before it."""
        if not self.ready.is_set():
            raise NotReady(self.error or "the hub is loading its encoders")
        return self._writes.submit(fn, self.writer).result()

    def close(self) -> None:
        self._writes.shutdown(wait=True)
        for idx in self._readers:
            idx.close()
        self._readers.clear()
        self.writer.close()
