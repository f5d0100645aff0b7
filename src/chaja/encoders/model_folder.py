"""A model folder's identity: the same weights give the same name wherever they lie.

A store remembers its encoder's name and refuses another model (:class:`chaja.Index`),
so a name built from a folder's path would refuse the same model copied elsewhere and
accept different weights saved over the old ones. The identity is instead the folder's
last path component and a digest of what defines the model: every small file (config,
tokenizer, pooling) in full, and of each large file (the weights) its size with its
first and last mebibyte, which is enough to tell two checkpoints apart without reading
gigabytes on every start.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

SMALL = 4 * 1024 * 1024     # files up to this size are hashed whole
EDGE = 1024 * 1024          # of larger ones, this much from each end


def folder_digest(folder: Path) -> str:
    """12 hex digits that change when any file of the model folder changes."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")):
        size = path.stat().st_size
        h.update(f"{path.relative_to(folder).as_posix()}\0{size}\0".encode())
        with open(path, "rb") as f:
            if size <= SMALL:
                h.update(f.read())
            else:
                h.update(f.read(EDGE))
                f.seek(size - EDGE)
                h.update(f.read(EDGE))
    return h.hexdigest()[:12]


def model_identity(folder: Path) -> str:
    """``<folder name>-<digest>``, the model part of an encoder name."""
    return f"{folder.resolve().name}-{folder_digest(folder)}"
