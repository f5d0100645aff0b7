"""Named numpy arrays in one file, or one bytes value, that read back without copying.

Layout: an 8-byte magic, the header's length (8 bytes, little-endian), a JSON header
(the caller's fields and, per array, dtype, shape and offset), then the arrays, each
64-byte aligned in a file; a value from :func:`to_bytes` aligns to 8 by default (a small
value is not mostly padding), and :func:`from_buffer` is told the same. :func:`save`
writes a file atomically (a temporary file beside the target, fsync, rename) and
:func:`load` maps it read-only; :func:`to_bytes` and :func:`from_buffer` do the same for
a value kept elsewhere (a store's meta: :mod:`chaja.meta_arrays`). What they read are
plain read-only arrays over the mapping or the value; ``ValueError`` for data that is not
one, or is cut short or damaged.
"""
from __future__ import annotations

import json
import mmap
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

_ALIGN = 64


def _start(header_len: int, magic: bytes, align: int = _ALIGN) -> int:
    return -(-(len(magic) + 8 + header_len) // align) * align


def _layout(magic: bytes, arrays: dict[str, np.ndarray], header: dict,
            align: int) -> tuple[bytes, list[np.ndarray]]:
    """(the magic, length and header padded to the first array, the arrays made contiguous)."""
    arrays = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    meta = {**header, "arrays": {}}
    offset = 0
    for name, arr in arrays.items():
        if arr.dtype.hasobject:
            raise ValueError(f"array {name!r} holds objects, not numbers")
        meta["arrays"][name] = [arr.dtype.str, list(arr.shape), offset]
        offset += -(-arr.nbytes // align) * align
    blob = json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    prefix = magic + len(blob).to_bytes(8, "little") + blob
    return prefix + b"\0" * (_start(len(blob), magic, align) - len(prefix)), list(arrays.values())


def _padded(arrays: list[np.ndarray], align: int) -> Iterator[bytes]:
    """Each array's bytes, padded to ``align`` before the next (none after the last)."""
    for i, arr in enumerate(arrays):
        yield arr.tobytes()
        if i + 1 < len(arrays):
            yield b"\0" * (-arr.nbytes % align)


def save(path: Path, magic: bytes, arrays: dict[str, np.ndarray], header: dict) -> None:
    prefix, arrays = _layout(magic, arrays, header, _ALIGN)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(prefix)
            for part in _padded(arrays, _ALIGN):
                f.write(part)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def to_bytes(magic: bytes, arrays: dict[str, np.ndarray], header: dict, align: int = 8) -> bytes:
    """The layout :func:`save` writes, as one value, its arrays aligned to ``align`` bytes."""
    prefix, arrays = _layout(magic, arrays, header, align)
    return b"".join([prefix, *_padded(arrays, align)])


def load(path: Path, magic: bytes) -> tuple[dict[str, np.ndarray], dict]:
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size < len(magic) + 8:
            raise ValueError(f"{path} is not a chaja {magic[:5].decode(errors='replace')} file")
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return from_buffer(mapped, magic, str(path))


def from_buffer(buffer, magic: bytes, where: str, align: int = _ALIGN) -> tuple[dict[str, np.ndarray], dict]:
    """(arrays, the caller's header) of a mapping or value laid out as :func:`save` (or
    :func:`to_bytes`, with the same ``align``) writes; ``where`` names it in errors."""
    if buffer[:len(magic)] != magic:
        raise ValueError(f"{where} is not a chaja {magic[:5].decode(errors='replace')} file")
    if len(buffer) < len(magic) + 8:
        raise ValueError(f"{where} is cut short")
    n = int.from_bytes(buffer[len(magic):len(magic) + 8], "little")
    try:
        meta = json.loads(bytes(buffer[len(magic) + 8:len(magic) + 8 + n]))
        specs = meta.pop("arrays")
    except (UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError):
        raise ValueError(f"{where} has a damaged header") from None
    start = _start(n, magic, align)
    arrays = {}
    try:
        for name, (dtype, shape, offset) in specs.items():
            count = int(np.prod(shape))
            nbytes = count * np.dtype(dtype).itemsize
            if offset < 0 or start + offset + nbytes > len(buffer):
                raise ValueError(f"{where} is cut short")
            # plain read-only arrays over the buffer (np.memmap's subclass costs per slice)
            arrays[name] = np.frombuffer(buffer, dtype=dtype, count=count, offset=start + offset).reshape(shape) \
                if count else np.zeros(shape, dtype)
            arrays[name].flags.writeable = False
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(str(exc) if str(exc).startswith(where) else f"{where}: {exc}") from None
    return arrays, meta
