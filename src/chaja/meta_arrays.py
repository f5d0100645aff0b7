"""Arrays kept in a store's meta as bytes: a JSON header, then each array's raw bytes.

Layout: :data:`MAGIC` (8 bytes), the header's length (uint32, little-endian), the header
(UTF-8 JSON: ``{"meta": what the caller keeps, "arrays": {name: [dtype, shape, offset]}}``),
then the arrays, each at an offset from the start that is a multiple of 8. Reading makes
no copy: each array is a read-only view of the value (``np.frombuffer``).

Base64 inside JSON, as the translation lexicon was kept before, takes 4/3 of the bytes
and a decode: at 100,000 chunks 35 MB of text and 0.15 s before the first search that
translates a word, against 26 MB here and views. A store keeps such a value where it
can hold bytes (:func:`stores_bytes`: the SQLite store; PostgreSQL's meta holds text, so
callers keep their text form there).
"""
from __future__ import annotations

import json
import struct

import numpy as np

MAGIC = b"chaja-a1"
_LENGTH = struct.Struct("<I")
_ALIGN = 8


def stores_bytes(store) -> bool:
    """Whether ``store.set_meta`` keeps a ``bytes`` value as it is (``binary_meta``)."""
    return bool(getattr(store, "binary_meta", False))


def is_packed(value) -> bool:
    """Whether ``value`` is what :func:`pack` writes (by its first bytes)."""
    return isinstance(value, (bytes, bytearray, memoryview)) and bytes(value[:len(MAGIC)]) == MAGIC


def pack(meta: dict, arrays: dict[str, np.ndarray]) -> bytes:
    """``meta`` (JSON-serialisable) and ``arrays`` (name → array, any shape, a fixed-size
    dtype) as one value."""
    specs, parts, at = {}, [], 0
    for name, a in arrays.items():
        a = np.ascontiguousarray(a)
        if a.dtype.hasobject:
            raise ValueError(f"array {name!r} holds objects, not numbers")
        specs[name] = [a.dtype.str, list(a.shape), at]
        raw = a.tobytes()
        pad = -len(raw) % _ALIGN
        parts.append(raw + b"\0" * pad)
        at += len(raw) + pad
    header = json.dumps({"meta": meta, "arrays": specs}, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    header += b" " * (-(len(MAGIC) + _LENGTH.size + len(header)) % _ALIGN)
    return b"".join([MAGIC, _LENGTH.pack(len(header)), header, *parts])


def unpack(value: bytes) -> tuple[dict, dict[str, np.ndarray]]:
    """(meta, arrays) of a value :func:`pack` wrote; ValueError where it is not one or is
    cut short (every array must lie inside it)."""
    if not is_packed(value):
        raise ValueError("not a packed meta value")
    value = bytes(value) if not isinstance(value, bytes) else value
    start = len(MAGIC) + _LENGTH.size
    if len(value) < start:
        raise ValueError("packed meta value cut short")
    (length,) = _LENGTH.unpack_from(value, len(MAGIC))
    try:
        header = json.loads(value[start:start + length].decode("utf-8"))
        meta, specs = header["meta"], header["arrays"]
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"packed meta value with a damaged header ({exc})") from None
    body = start + length
    arrays = {}
    for name, (dtype, shape, offset) in specs.items():
        dt = np.dtype(dtype)
        count = int(np.prod(shape, dtype=np.int64))
        if offset < 0 or body + offset + count * dt.itemsize > len(value):
            raise ValueError(f"packed meta value cut short (array {name!r})")
        arrays[name] = np.frombuffer(value, dtype=dt, count=count, offset=body + offset).reshape(shape)
    return meta, arrays
