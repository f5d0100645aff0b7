"""Arrays kept in a store's meta as bytes, laid out as an array file is
(:mod:`chaja.stores.array_file`: a magic, a JSON header, the arrays' raw bytes), read as
read-only views of the value without a copy.

Base64 inside JSON, as the translation lexicon was kept before, takes 4/3 of the bytes
and a decode: at 100,000 chunks 35 MB of text and 0.15 s before the first search that
translates a word, against 26 MB here and views. A store keeps such a value where it
can hold bytes (:func:`stores_bytes`: the SQLite store; PostgreSQL's meta holds text, so
callers keep their text form there).
"""
from __future__ import annotations

import numpy as np

from chaja.stores import array_file

MAGIC = b"chaja-m2"


def stores_bytes(store) -> bool:
    """Whether ``store.set_meta`` keeps a ``bytes`` value as it is (``binary_meta``)."""
    return bool(getattr(store, "binary_meta", False))


def is_packed(value) -> bool:
    """Whether ``value`` is what :func:`pack` writes (by its first bytes)."""
    return isinstance(value, (bytes, bytearray, memoryview)) and bytes(value[:len(MAGIC)]) == MAGIC


def pack(meta: dict, arrays: dict[str, np.ndarray]) -> bytes:
    """``meta`` (JSON-serialisable) and ``arrays`` (name → array, any shape, a fixed-size
    dtype) as one value."""
    return array_file.to_bytes(MAGIC, arrays, {"meta": meta}, align=8)


def unpack(value: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """(meta, arrays) of a value :func:`pack` wrote; ValueError where it is not one, is cut
    short (every array must lie inside it) or its header is damaged."""
    if not is_packed(value):
        raise ValueError("not a packed meta value")
    arrays, header = array_file.from_buffer(bytes(value), MAGIC, "packed meta value", align=8)
    if "meta" not in header:
        raise ValueError("packed meta value has a damaged header")
    return header["meta"], arrays
