"""One file of named numpy arrays that maps back without copying.

Layout: an 8-byte magic, the header's length (8 bytes, little-endian), a JSON header
(the caller's fields and, per array, dtype, shape and offset), then the arrays, each
64-byte aligned. :func:`save` writes atomically (a temporary file beside the target,
fsync, rename); :func:`load` maps the file read-only and returns plain arrays over the
mapping (``ValueError`` for a file that is not one, or is truncated or damaged).
"""
from __future__ import annotations

import json
import mmap
import os
from pathlib import Path

import numpy as np

_ALIGN = 64


def _start(header_len: int, magic: bytes) -> int:
    return -(-(len(magic) + 8 + header_len) // _ALIGN) * _ALIGN


def save(path: Path, magic: bytes, arrays: dict[str, np.ndarray], header: dict) -> None:
    arrays = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    meta = {**header, "arrays": {}}
    offset = 0
    for name, arr in arrays.items():
        meta["arrays"][name] = [arr.dtype.str, list(arr.shape), offset]
        offset += -(-arr.nbytes // _ALIGN) * _ALIGN
    blob = json.dumps(meta).encode("utf-8")
    start = _start(len(blob), magic)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(magic + len(blob).to_bytes(8, "little") + blob)
            f.write(b"\0" * (start - f.tell()))
            for arr in arrays.values():
                f.write(arr.tobytes())
                f.write(b"\0" * (-arr.nbytes % _ALIGN))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def load(path: Path, magic: bytes) -> tuple[dict[str, np.ndarray], dict]:
    with open(path, "rb") as f:
        head = f.read(len(magic) + 8)
        if len(head) < len(magic) + 8 or head[: len(magic)] != magic:
            raise ValueError(f"{path} is not a chaja {magic[:5].decode(errors='replace')} file")
        n = int.from_bytes(head[len(magic):], "little")
        try:
            meta = json.loads(f.read(n))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ValueError(f"{path} has a damaged header") from None
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    start = _start(n, magic)
    arrays = {}
    try:
        for name, (dtype, shape, offset) in meta.pop("arrays").items():
            count = int(np.prod(shape))
            nbytes = count * np.dtype(dtype).itemsize
            if start + offset + nbytes > len(mapped):
                raise ValueError(f"{path} is truncated")
            # plain read-only arrays over the mapping (np.memmap's subclass costs per slice)
            arrays[name] = (np.frombuffer(mapped, dtype=dtype, count=count, offset=start + offset).reshape(shape)
                            if count else np.zeros(shape, dtype))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    return arrays, meta
