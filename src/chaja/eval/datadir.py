"""Where the public evaluation data lives.

The data sets are read at run time, never copied into the project: by default
from ``../shared/data`` next to the repository root, or from the folder named by
the environment variable ``CHAJA_DATA_DIR``.
"""
from __future__ import annotations

import os
from pathlib import Path

ENV = "CHAJA_DATA_DIR"


def repo_root() -> Path:
    """The repository root when running from a checkout (``src/chaja/eval`` → three up)."""
    return Path(__file__).resolve().parents[3]


def data_dir() -> Path:
    """``$CHAJA_DATA_DIR`` if set, else ``<repo root>/../shared/data``."""
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    return repo_root().parent / "shared" / "data"


def data_set(name: str) -> Path | None:
    """The folder of one data set (``react-docs``, ``korquad-v1-dev``, ``scifact``), or None if absent."""
    path = data_dir() / name
    return path if path.is_dir() else None


def missing_message(name: str) -> str:
    return (f"data set {name!r} not found under {data_dir()} "
            f"(set {ENV} to the folder that holds it)")
