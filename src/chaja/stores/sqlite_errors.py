"""The SQLite store's failures as sentences a person can act on, the real cause kept,
and the bounded wait for another process's write lock.

- **Busy** (another process holds the write lock: ``chaja optimize``, the hub's writer):
  a write waits with SQLite's busy timeout, then tries again a few times with backoff,
  :data:`BUSY_TIMEOUT_S` in all (``busy_timeout_s`` of the store, ``$CHAJA_BUSY_TIMEOUT_S``
  for every store a process opens), then raises :class:`~chaja.stores.base.StoreBusy`
  naming the process that holds the lock where Linux's ``/proc/locks`` tells it.
- **Disk full**, **read-only** file or file system, **disk I/O error**, a store that
  **cannot be opened or created** (a path through a file, a folder it may not write):
  :class:`~chaja.stores.base.StoreError` with one sentence, SQLite's own words in it.
- **Read-only stores** (:func:`read_only_reason`): a store whose file, or folder with no
  ``-wal``/``-shm`` beside it, cannot be written is opened read-only (:func:`connect_read_only`)
  and can be searched; a write to it is refused before SQLite is asked.
"""
from __future__ import annotations

import errno
import math
import os
import shutil
import sqlite3
import time
import urllib.parse
from pathlib import Path

from chaja.stores.base import StoreBusy, StoreError

#: seconds a write waits for another process's write lock before it gives up
BUSY_TIMEOUT_S = 30.0
#: the environment variable that sets it for every store a process opens
BUSY_ENV = "CHAJA_BUSY_TIMEOUT_S"
#: tries of ``BEGIN IMMEDIATE`` within the wait, each with SQLite's busy handler for its share
BUSY_TRIES = 4

# SQLite's primary result codes
_BUSY, _LOCKED, _READONLY, _IOERR, _FULL, _CANTOPEN = 5, 6, 8, 10, 13, 14
_KINDS = {_BUSY: "busy", _LOCKED: "busy", _READONLY: "readonly", _IOERR: "ioerr", _FULL: "full",
          _CANTOPEN: "cantopen"}
_WORDS = (("database is locked", "busy"), ("database table is locked", "busy"),
          ("database or disk is full", "full"), ("readonly database", "readonly"),
          ("disk i/o error", "ioerr"), ("unable to open database file", "cantopen"))

#: operating system errors of those kinds
_OS_KINDS = {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EROFS: "readonly", errno.EIO: "ioerr"}

#: the byte of the ``-shm`` file whose POSIX write lock is the WAL write lock (SQLite's unix VFS)
_WAL_WRITE_LOCK = 120


def default_busy_timeout() -> float:
    """:data:`BUSY_TIMEOUT_S`, or ``$CHAJA_BUSY_TIMEOUT_S`` where it is set."""
    raw = os.environ.get(BUSY_ENV, "").strip()
    if not raw:
        return BUSY_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not (math.isfinite(value) and value >= 0):
        raise StoreError(f"${BUSY_ENV} must be a number of seconds, 0 or more, not {raw!r}")
    return value


def kind(exc: BaseException) -> str | None:
    """``"busy"``, ``"full"``, ``"readonly"``, ``"ioerr"`` or ``"cantopen"`` for an SQLite
    error of that kind, or an operating system error of one of the first four (a file beside
    the store written in the same write: a vector spool or file), else None."""
    if isinstance(exc, OSError):
        return _OS_KINDS.get(exc.errno)
    if not isinstance(exc, sqlite3.Error):
        return None
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and (code & 0xFF) in _KINDS:
        return _KINDS[code & 0xFF]
    text = str(exc).lower()
    return next((k for words, k in _WORDS if words in text), None)


# ---- waiting for the write lock ---------------------------------------------------
def rollback(db: sqlite3.Connection | None, cause: BaseException, what: str = "the write") -> None:
    """Roll back the open write transaction, unless SQLite already has (it does on a full
    disk, among others); a failure here is noted on ``cause``, never raised in its place
    (a transaction not committed is never seen: SQLite drops it at the latest when the
    store is next opened)."""
    if db is None or not db.in_transaction:
        return
    try:
        db.execute("ROLLBACK")
    except sqlite3.Error as exc:
        cause.add_note(f"(rolling {what} back also failed: {exc}; SQLite drops it when the store is next opened)")


def begin_immediate(db: sqlite3.Connection, budget_s: float, path: Path | str) -> None:
    """``BEGIN IMMEDIATE`` on ``db``, waiting up to ``budget_s`` in all for another
    process's write lock: :data:`BUSY_TRIES` tries, each with SQLite's busy handler for
    its share of the wait, with a short, growing pause between them; then
    :class:`StoreBusy`. The connection's busy timeout is put back as it was."""
    began = time.monotonic()
    deadline = began + budget_s
    share = budget_s / BUSY_TRIES
    pause = 0.05
    before = db.execute("PRAGMA busy_timeout").fetchone()[0]
    try:
        while True:
            left = deadline - time.monotonic()
            db.execute(f"PRAGMA busy_timeout = {int(max(0.0, min(left, share)) * 1000)}")
            try:
                db.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if kind(exc) != "busy":
                    raise
                left = deadline - time.monotonic()
                if left <= 0:
                    raise busy_error(path, time.monotonic() - began, exc) from exc
            time.sleep(min(pause, left))
            pause = min(pause * 2, 1.0)
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(before)}")


def busy_error(path: Path | str, waited_s: float, exc: BaseException) -> StoreBusy:
    """The sentence for a write that waited ``waited_s`` for the lock and gave up."""
    pid = lock_holder(path)
    if pid is None:
        who = "another chaja process is writing it"
    elif pid == os.getpid():
        who = f"another connection of this process (pid {pid}) is writing it"
    else:
        who = f"another process is writing it ({describe(pid)}, pid {pid})"
    return StoreBusy(f"{path}: the store is busy: {who}; waited {_seconds(waited_s)} for it to finish, "
                     f"and this write was not made. Try again when it has finished ({exc})",
                     holder_pid=pid, retry_after_s=5.0)


def _seconds(s: float) -> str:
    return f"{s:.1f} s" if s < 10 else f"{s:.0f} s"


def lock_holder(path: Path | str) -> int | None:
    """The process that holds the write lock of the store at ``path``, as Linux's
    ``/proc/locks`` shows it (a POSIX lock on byte 120 of the ``-shm`` file, the WAL
    write lock, or a write lock on the file itself); None where it cannot be told."""
    wanted: dict[int, tuple[tuple[int, int] | None, bool]] = {}
    for name, shm in ((f"{path}-shm", True), (str(path), False)):
        try:
            st = os.stat(name)
        except OSError:
            continue
        wanted[st.st_ino] = ((os.major(st.st_dev), os.minor(st.st_dev)), shm)
    if not wanted:
        return None
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if "->" in fields or len(fields) < 8:       # a process waiting for a lock, not holding it
            continue
        access, where, start = fields[3], fields[5], fields[6]
        if access != "WRITE":
            continue
        try:
            pid = int(fields[4])
            major, minor, inode = where.split(":")
            inode_no, device = int(inode), (int(major, 16), int(minor, 16))
        except ValueError:
            continue
        got = wanted.get(inode_no)
        if got is None or got[0] != device or pid <= 0:
            continue
        if not got[1] or start == str(_WAL_WRITE_LOCK):
            return pid
    return None


def _cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return []
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def chaja_command(argv: list[str]) -> str | None:
    """``chaja optimize`` for the command line of a ``chaja optimize …`` process (the
    console script, or ``python -m chaja[.cli]``), else None."""
    for i, arg in enumerate(argv[:3]):
        if Path(arg).name == "chaja" or (arg in ("chaja", "chaja.cli") and i > 0 and argv[i - 1] == "-m"):
            sub = next((a for a in argv[i + 1:] if not a.startswith("-")), "")
            sub = "".join(ch for ch in sub if ch.isalnum() or ch in "-_")[:30]
            return f"chaja {sub}".rstrip()
    return None


def describe(pid: int) -> str:
    """What process ``pid`` is, for a person: ``chaja optimize``, ``a helper of chaja
    serve`` (the hub's writer process), else its program's name."""
    argv = _cmdline(pid)
    command = chaja_command(argv)
    if command:
        return command
    if any("multiprocessing" in a for a in argv[:4]):
        parent = _parent(pid)
        command = chaja_command(_cmdline(parent)) if parent else None
        if command:
            return f"a helper of {command}"
    name = "".join(ch for ch in Path(argv[0]).name if ch.isprintable())[:40] if argv else ""
    return name or "a process"


# ---- read-only stores and the errors of a write ------------------------------------
def read_only_reason(path: Path) -> str | None:
    """Why the existing store file ``path`` cannot be written, or None when it can:
    a read-only file system, a file without write permission (or immutable), or a
    folder that cannot be written while the ``-wal`` and ``-shm`` files SQLite needs
    beside the store are not there (writable) already."""
    folder = path.parent
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return "it lies on a read-only file system"
    except OSError:
        pass
    if not os.access(path, os.W_OK):
        return "the file is read-only (its permissions, or the immutable attribute)"
    if not os.access(folder, os.W_OK | os.X_OK):
        sides = [Path(f"{path}{s}") for s in ("-wal", "-shm")]
        if not all(p.exists() and os.access(p, os.R_OK | os.W_OK) for p in sides):
            return "its folder cannot be written (SQLite keeps its -wal and -shm files there)"
    return None


def connect_read_only(path: Path, timeout: float, *, shm: bool = True) -> sqlite3.Connection:
    """A read-only connection to the WAL store at ``path``: ``mode=ro``, which reads the
    ``-wal`` beside it (and so sees what any writer has committed) where its ``-shm`` can
    be opened; where it cannot (a read-only folder the store was closed cleanly in, so
    neither file is there), ``immutable=1``, which reads the file alone. A ``-wal`` holding
    commits that cannot be read that way is refused (the store would look older than it is).
    ``shm=False``: the ``-shm`` cannot be used (a full disk), so ``immutable=1`` at once."""
    uri = "file:" + urllib.parse.quote(str(path.absolute()))
    cause: BaseException | str = "no -shm file can be made"
    if shm:
        try:
            db = sqlite3.connect(uri + "?mode=ro", uri=True, isolation_level=None, check_same_thread=False,
                                 timeout=timeout)
            db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
            return db
        except sqlite3.OperationalError as exc:
            if kind(exc) != "cantopen":
                raise
            cause = exc
    wal = Path(f"{path}-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreError(f"{path} cannot be opened read-only: its {wal.name} holds writes that cannot be read "
                         f"without a {path.name}-shm beside it ({cause}); open it once where it can be written")
    db = sqlite3.connect(uri + "?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False,
                         timeout=timeout)
    db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    return db


def make_folder(path: Path) -> None:
    """Create the folders a new store file at ``path`` goes in, or say in one sentence
    why they cannot be (a path through a file, no permission, a read-only file system)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        through = next((p for p in [path.parent, *path.parent.parents] if p.is_file()), None)
        where = f"{through} is a file, not a folder" if through else f"{path.parent} is not a folder"
        raise StoreError(f"cannot create the store {path}: {where} ({exc.strerror})") from exc
    except OSError as exc:
        raise StoreError(f"cannot create the store {path}: cannot create its folder {path.parent} "
                         f"({exc.strerror or exc})") from exc
    reason = _folder_not_writable(path.parent)
    if reason:
        raise StoreError(f"cannot create the store {path}: {reason}")


def _folder_not_writable(folder: Path) -> str | None:
    """Why no file can be created in ``folder``, or None."""
    try:
        if os.statvfs(folder).f_flag & os.ST_RDONLY:
            return f"{folder} lies on a read-only file system"
    except OSError:
        pass
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"its folder {folder} cannot be written (no permission)"
    return None


def _disk_nearly_full(path: Path | str) -> bool:
    try:
        return shutil.disk_usage(Path(path).parent).free < (1 << 20)
    except OSError:
        return False


def disk_full(exc: BaseException, path: Path | str) -> bool:
    """Whether ``exc`` says the disk the store lies on is full (SQLite says "disk I/O error"
    where it cannot make its ``-shm`` file on a full disk)."""
    got = kind(exc)
    return got == "full" or (got == "ioerr" and _disk_nearly_full(path))


def explain(exc: BaseException, path: Path | str, waited_s: float = 0.0, *,
            opening: bool = False) -> StoreError | None:
    """One sentence for an SQLite error of a kind a person can act on (:func:`kind`),
    with SQLite's own words in it; None for any other error. ``opening``: the error came
    while the store was being opened (SQLite creates its ``-shm`` file then)."""
    got = kind(exc)
    if got == "busy":
        return busy_error(path, waited_s, exc)
    doing, after = (("open", "nothing was changed") if opening else
                    ("write", "the unfinished write was rolled back and what the store held before it is whole"))
    if disk_full(exc, path):
        return StoreError(f"cannot {doing} {path}: the disk is full ({exc}); {after}. Free some space and "
                          "run again")
    if got == "readonly":
        reason = read_only_reason(Path(path)) if Path(path).exists() else None
        return StoreError(f"cannot write {path}: {reason or 'the store is read-only'} ({exc}); "
                          "it can be searched, not written. Nothing was written")
    if got == "ioerr":
        return StoreError(f"cannot {doing} {path}: the disk failed ({exc}); {after}")
    if got == "cantopen":
        p = Path(path)
        if not p.exists():
            reason = (_folder_not_writable(p.parent) or "SQLite cannot create it") if p.parent.is_dir() \
                else f"{p.parent} is not a folder"
            return StoreError(f"cannot create the store {path}: {reason} ({exc})")
        reason = "the file cannot be read (no permission)" if not os.access(p, os.R_OK) else read_only_reason(p)
        return StoreError(f"cannot open {path}: {reason or 'SQLite cannot open it'} ({exc})")
    return None
