"""The store interface. A store knows storage, not ranking policy: it returns
candidate lists (keyword, vector) and chunks; fusion and weights live in
:mod:`chaja.search`.

Keyword queries arrive as analysed terms (already bigrams and lower-cased words);
a store must treat each term as a literal, so no user input can form query syntax.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import ContextManager, Protocol, runtime_checkable

import numpy as np

from chaja.documents import Chunk, ChunkRecord, Document, DocumentInfo, Hit, StoreStats
from chaja.filters import Filters


#: every vector field a store may hold: e5 chunk and section-name vectors, aligned ones
VECTOR_FIELDS = ("chunk", "heading", "aligned", "aligned_heading")


def allowed_rows(cache: dict, key: tuple, read: Callable[[], list]) -> np.ndarray:
    """``cache[key]``: the rows a filter lets through (``read()``: one-column rows,
    ascending) as an int64 array, read once and kept until the key changes; the cache
    is emptied once it holds more than 32."""
    got = cache.get(key)
    if got is None:
        rows = read()
        got = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if len(cache) > 32:
            cache.clear()
        cache[key] = got
    return got


def sample_order(chunk_id: str) -> str:
    """The key :meth:`Store.vector_sample` orders by (md5 of the chunk id), the same in every store."""
    return hashlib.md5(chunk_id.encode("utf-8")).hexdigest()


def sample_digests(ids: Sequence[str]) -> np.ndarray:
    """The md5 digest of each id (:func:`sample_order`'s, as bytes), as a ``uint8 [N, 16]`` array."""
    raw = b"".join(hashlib.md5(c.encode("utf-8")).digest() for c in ids)
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(ids), 16)


def digest_of_sample(ids: Sequence[str], rows: Mapping[str, tuple]) -> str:
    """The digest :meth:`Store.sample_fingerprint` gives: md5 over each sampled chunk id, in
    sample order, and what ``rows`` holds for it (its language, section path, text length
    and document fingerprint; None for a chunk gone meanwhile)."""
    h = hashlib.md5()
    for cid in ids:
        h.update(json.dumps([cid, rows.get(cid)], ensure_ascii=False).encode("utf-8"))
    return h.hexdigest()


def first_by_digest(digests: np.ndarray, n: int) -> np.ndarray:
    """Positions of the first ``n`` rows of ``digests`` (:func:`sample_digests`) in
    :func:`sample_order`, equal ones in their order. The hex digests order as the digests'
    bytes do, so the rows are cut by one partition of the first 8 bytes and only those at or
    before the cut sorted by all 16, as two big-endian words (sorting a million ids by a
    Python key took 1.9 s a field, most of it the key calls)."""
    if n <= 0 or not len(digests):
        return np.zeros(0, np.int64)
    words = np.ascontiguousarray(digests).view(">u8").astype(np.uint64)     # [N, 2], big-endian halves
    inside = np.arange(len(digests))
    if n < len(digests):
        inside = np.flatnonzero(words[:, 0] <= np.partition(words[:, 0], n - 1)[n - 1])
    order = np.lexsort((inside, words[inside, 1], words[inside, 0]))
    return inside[order[:n]].astype(np.int64)


def staged_prefix(ordinals: list[int]) -> int:
    """How many chunks a run may resume after, given the ordinals staged for a document in
    ascending order: the length of the unbroken run 0, 1, 2, … (the same in both stores)."""
    done = 0
    while done < len(ordinals) and ordinals[done] == done:
        done += 1
    return done


def flat_vector(v) -> np.ndarray | None:
    """A vector as one flat float32 array (None stays None), as both stores write them."""
    if v is None or (type(v) is np.ndarray and v.dtype == np.float32 and v.ndim == 1):
        return v
    return np.asarray(v, dtype=np.float32).ravel()


def refuse_non_finite(named: Iterable[tuple[str, np.ndarray | None]],
                      given: list[np.ndarray] | None = None) -> None:
    """Refuse a write whose vectors hold NaN or infinity (``named``: chunk id, flat vector or
    None), naming the first such chunk. One such vector would make every score of its field
    NaN, and the int8 codes' range (:mod:`chaja.stores.quantized`) with it, for the whole
    store. Checked on the batch at once (about 1 ms per 1,000 chunks of four vectors), chunk
    by chunk only to name the one at fault. ``given``: the vectors alone, where the caller
    has them; ``named`` is then read only to name that chunk."""
    if given is None:
        named = list(named)
        given = [v for _, v in named if v is not None]
    if not given or np.isfinite(np.concatenate(given)).all():
        return
    chunk = next(cid for cid, v in named if v is not None and not np.isfinite(v).all())
    raise StoreError(f"chunk {chunk!r}: a vector holds NaN or infinity (the encoder's output?); "
                     "nothing of this write was stored")


class StoreError(RuntimeError):
    """A store cannot be opened or used as asked (wrong model, bad file, ...)."""


class StoreBusy(StoreError):
    """Another process held the store's write lock for longer than a write waits for it
    (``busy_timeout_s`` of :class:`~chaja.stores.sqlite.SqliteStore`); that write was
    not made, and may be tried again later. ``holder_pid``: the process
    holding the lock, where it could be told; ``retry_after_s``: when to try again (the
    hub's ``Retry-After``). The command line exits with status 75 (``EX_TEMPFAIL``)."""

    def __init__(self, message: str, *, holder_pid: int | None = None, retry_after_s: float = 5.0):
        super().__init__(message)
        self.holder_pid, self.retry_after_s = holder_pid, retry_after_s


@runtime_checkable
class Store(Protocol):
    def put_document(self, doc: Document, records: list[ChunkRecord]) -> None:
        """Insert or replace one document and its chunks in one transaction."""
        ...

    def delete_document(self, doc_id: str) -> bool: ...

    def documents(self, *, after: str | None = None, limit: int = 100,
                  ids: list[str] | None = None) -> list[DocumentInfo]:
        """Stored documents in id order: the first ``limit`` with an id after ``after``,
        or (with ``ids``) those of the listed ids that exist."""
        ...

    def fingerprints(self, ids: list[str] | None = None) -> dict[str, str]:
        """doc_id → content fingerprint of every stored document, or (``ids``) of those of
        the listed ids that exist (an index run of a few files need not read a million)."""
        ...

    def keyword(self, terms: list[str], n: int, *, title_weight: float = 2.0,
                heading_weight: float = 1.5, field: str = "all",
                lang: str | None = None, where: Filters | None = None) -> list[Hit]:
        """Best ``n`` chunks by the store's keyword ranking (BM25 in both stores) over any
        of ``terms`` (OR), best first; only ranks are used downstream. ``field="title"``
        searches titles alone; ``lang`` keeps chunks of one language, ``where`` those
        that pass a search filter (:mod:`chaja.filters`), before the top ``n``."""
        ...

    def vector(self, query: np.ndarray, n: int, *, lang: str | None = None,
               field: str = "chunk", where: Filters | None = None) -> list[Hit]:
        """Best ``n`` chunks by cosine similarity, best first (``lang`` and ``where`` as in
        :meth:`keyword`): of the chunk vectors, or
        with ``field="heading"`` of the heading vectors (chunks without one never match),
        ``"aligned"`` / ``"aligned_heading"`` of the aligned encoder's vectors."""
        ...

    def vector_scores(self, query: np.ndarray, ids: list[str], *, field: str = "chunk") -> dict[str, float]:
        """Cosine of ``query`` with the ``field`` vector of each listed chunk that has one
        (to score a candidate that another list found)."""
        ...

    def stored_vectors(self, ids: list[str], field: str = "chunk") -> dict[str, np.ndarray]:
        """The stored ``field`` vector of each listed chunk that has one (the feedback
        vectors of :mod:`chaja.search.feedback`)."""
        ...

    def vector_sample(self, n: int, *, field: str = "chunk") -> np.ndarray:
        """At most ``n`` stored vectors of ``field`` (all of them when there are fewer): the
        first ``n`` by :func:`sample_order`, for the background statistics of calibrated fusion."""
        ...

    def chunk_sample(self, n: int) -> list[Chunk]:
        """At most ``n`` stored chunks, the first ``n`` by :func:`sample_order` (the words of
        the translation lexicon, :mod:`chaja.search.lexicon`, are counted over them)."""
        ...

    def sample_fingerprint(self, n: int) -> str:
        """A digest of what :meth:`chunk_sample` of ``n`` would read, taken without reading
        the text: equal digests, the same sample (the lexicon it counts need not be built
        again: :func:`chaja.store_statistics.record_lexicon`)."""
        ...

    def chunk_languages(self, ids: list[str]) -> dict[str, str]:
        """The language of each listed chunk that exists (without reading its text)."""
        ...

    def language_means(self) -> dict[str, tuple[int, np.ndarray]]:
        """language → (chunk count, mean chunk vector), over every stored chunk."""
        ...

    def chunks(self, ids: list[str]) -> dict[str, Chunk]: ...

    def doc_ids(self, ids: list[str]) -> dict[str, str]:
        """The document of each listed chunk that exists (without reading its text)."""
        ...

    def chunk_terms(self, ids: list[str]) -> dict[str, set[str]]:
        """The indexed terms (title, heading, body) of each chunk."""
        ...

    def reading(self) -> ContextManager:
        """Reads in the block see the store as of its start (:mod:`chaja.stores.one_view`)."""
        ...

    def get_meta(self, key: str) -> str | bytes | None:
        """The value recorded under ``key``: text, or bytes where the store keeps them
        (``binary_meta``, :func:`chaja.meta_arrays.stores_bytes`)."""
        ...

    def set_meta(self, key: str, value: str | bytes) -> None: ...

    def stats(self) -> StoreStats: ...

    def close(self) -> None: ...
