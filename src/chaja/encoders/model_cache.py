"""A per-user cache of built model files, written atomically.

Location: ``$CHAJA_CACHE_DIR`` if set, else ``~/.cache/chaja/models``.  A file is named
by its key (which encodes everything it was built from), built once into a temporary
file ``.<key>.<pid>-<random>.tmp`` in the same folder and renamed into place, so a process
killed mid-build leaves at most a temporary file, which is never read and is removed
by a later build once its process is gone.
"""
from __future__ import annotations

import os
import sys
import uuid
from pathlib import Path
from typing import Callable

ENV_VAR = "CHAJA_CACHE_DIR"


def cache_dir(override: str | Path | None = None) -> Path:
    if override is not None:
        return Path(override)
    env = os.environ.get(ENV_VAR)
    return Path(env) if env else Path.home() / ".cache" / "chaja" / "models"


def cached_file(key: str, build: Callable[[Path], None], what: str, folder: str | Path | None = None,
                *, announce: bool = True) -> Path:
    """Path of ``folder/key``, calling ``build(tmp_path)`` first if it is not there yet
    (said on stderr with ``announce``: a build that takes long enough to be noticed)."""
    root = cache_dir(folder)
    path = root / key
    if path.is_file():
        return path
    root.mkdir(parents=True, exist_ok=True)
    _remove_orphans(root, key)
    tmp = root / f".{key}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"
    if announce:
        print(f"chaja: building {what} once into {path} ...", file=sys.stderr, flush=True)
    try:
        build(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    if announce:
        print(f"chaja: built {path.name}", file=sys.stderr, flush=True)
    return path


def _remove_orphans(root: Path, key: str) -> None:
    """Delete temporary files of ``key`` left by processes that no longer run."""
    for tmp in root.glob(f".{key}.*.tmp"):
        pid = tmp.name[len(key) + 2 : -len(".tmp")].split("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            tmp.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
