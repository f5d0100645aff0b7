"""A resident search process: after one ``chaja search`` on a store, the next ones are
answered by a process that already holds the store and the encoders.

A new process pays about 0.9 s before its first result (Python and the libraries, the
e5 tokenizer's tables and session, the aligned encoder): more than the search itself. So
``chaja search`` (the command, not :func:`chaja.cli.main` called from Python) first asks a
resident process for the store over a Unix socket; where none answers, it searches in
its own process as always and then starts one in the background, which keeps the index
open and answers each later search as the command would (the same arguments, working
folder, config files and output), one at a time, until it has been idle for
:data:`IDLE_S` seconds. The socket lives in a folder only its user may enter
(``$XDG_RUNTIME_DIR/chaja``, else ``<tmp>/chaja-<uid>``; a folder another user owns or
may write to is neither asked nor served in) and is named by the store's
real path, the Python that runs chaja and the stamp of chaja's code, so a changed
install never answers with old code. A resident sees every write to its store, as a
hub does (:meth:`chaja.index.Index.searcher`).

``CHAJA_RESIDENT=0`` turns it off; ``CHAJA_RESIDENT=<seconds>`` sets the idle time.
This module imports only the standard library until it serves, so asking costs a few
milliseconds.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ENV = "CHAJA_RESIDENT"
#: seconds a resident waits for its next search before it exits
IDLE_S = 600.0
#: seconds a command waits for a resident's answer (a first search loads the models)
ANSWER_S = 300.0
#: the environment a command's config depends on, sent with each request
PASSED_ENV = ("CHAJA_CONFIG", "XDG_CONFIG_HOME", "HOME", "CHAJA_BUSY_TIMEOUT_S", "CHAJA_CACHE_DIR")


def idle_seconds() -> float:
    """The idle time ``CHAJA_RESIDENT`` sets (0: no resident)."""
    value = os.environ.get(ENV, "")
    try:
        return max(0.0, float(value)) if value else IDLE_S
    except ValueError:
        return IDLE_S


def _code_stamp() -> str:
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        st = path.stat()
        h.update(f"{path}:{st.st_mtime_ns}:{st.st_size};".encode())
    return h.hexdigest()


def socket_path(store: str) -> Path:
    """Where the resident of ``store`` listens."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    folder = Path(runtime) / "chaja" if runtime else Path(tempfile.gettempdir()) / f"chaja-{os.getuid()}"
    key = hashlib.sha256(json.dumps([os.path.realpath(store), sys.executable, _code_stamp()]).encode())
    return folder / f"{key.hexdigest()[:24]}.sock"


def _private(folder: Path) -> bool:
    """Whether ``folder`` is this user's alone (owned by them, no access for others): a
    socket in a folder another user could write to is never asked nor served."""
    try:
        st = folder.lstat()
    except OSError:
        return False
    return st.st_uid == os.getuid() and (st.st_mode & 0o077) == 0 and not folder.is_symlink()


def _store_of(argv: list[str]) -> str | None:
    """The ``--store`` of a ``chaja search`` command line, None for any other command."""
    if not argv or argv[0] != "search" or "--hub" in argv or any(a.startswith("--hub=") for a in argv):
        return None
    for i, a in enumerate(argv):
        if a == "--store" and i + 1 < len(argv):
            store = argv[i + 1]
            return None if store.startswith(("postgresql://", "postgres://")) else store
        if a.startswith("--store="):
            return a.split("=", 1)[1]
    return None


def _ask(path: Path, request: dict, timeout: float = ANSWER_S) -> dict | None:
    """The resident's answer to ``request``, None where none answers."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(timeout)
            s.connect(str(path))
            s.sendall(json.dumps(request).encode("utf-8"))
            s.shutdown(socket.SHUT_WR)
            parts = []
            while chunk := s.recv(1 << 16):
                parts.append(chunk)
        return json.loads(b"".join(parts)) if parts else None
    except (OSError, ValueError):
        return None


def answer(argv: list[str]) -> int | None:
    """Run ``chaja search`` on the store's resident: its exit status, or None where no
    resident answers (the command then runs here)."""
    store = _store_of(argv)
    if store is None or idle_seconds() == 0:
        return None
    path = socket_path(store)
    if not path.exists() or not _private(path.parent):
        return None
    got = _ask(path, {"argv": argv, "cwd": os.getcwd(), "tty": sys.stdout.isatty(),
                      "env": {k: os.environ[k] for k in PASSED_ENV if k in os.environ}})
    if got is None:
        return None
    sys.stdout.write(got["stdout"])
    sys.stderr.write(got["stderr"])
    return int(got["status"])


def start(argv: list[str]) -> None:
    """Start the store's resident in the background after a search ran here (none when
    ``CHAJA_RESIDENT=0``, or for another command); it first runs the same search, unseen,
    so its models are loaded before the next command asks."""
    store = _store_of(argv)
    if store is None or idle_seconds() == 0 or not Path(store).is_file():
        return
    request = json.dumps({"argv": argv, "cwd": os.getcwd(), "tty": False,
                          "env": {k: os.environ[k] for k in PASSED_ENV if k in os.environ}})
    try:
        subprocess.Popen([sys.executable, "-m", "chaja.cli.resident", os.path.abspath(store), request],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, cwd="/")
    except OSError:
        pass


class _Out(io.StringIO):
    """A command's captured output, a terminal or not as the asking command's is."""

    def __init__(self, tty: bool):
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def _run(request: dict) -> dict:
    """Run one command line as the asking process would, its output captured."""
    from contextlib import redirect_stderr, redirect_stdout

    from chaja.cli.app import main

    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    out, err = _Out(bool(request.get("tty"))), _Out(False)
    try:
        for k in PASSED_ENV:
            os.environ.pop(k, None)
        os.environ.update(request.get("env", {}))
        os.chdir(request["cwd"])
        with redirect_stdout(out), redirect_stderr(err):
            try:
                status = main(list(request["argv"]))
            except SystemExit as exc:               # argparse: a usage error, said on stderr
                status = exc.code if isinstance(exc.code, int) else 2
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "status": int(status or 0)}


def _listen(path: Path) -> socket.socket | None:
    """A socket bound at ``path``, or None where another resident holds it."""
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if folder.is_symlink() or folder.lstat().st_uid != os.getuid():
        return None                                  # another user's: not ours to serve in
    if not _private(folder):                         # ours, but others could write there: closed, and
        os.chmod(folder, 0o700)                      # any socket left in it is not trusted
        for old in folder.glob("*.sock"):
            old.unlink(missing_ok=True)
    if path.exists() and _ask(path, {"status": True}, timeout=5) is not None:
        return None                                  # one is there already
    path.unlink(missing_ok=True)                     # left by a resident that died
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        srv.bind(str(path))
    except OSError:
        srv.close()
        return None                                  # another resident bound it first
    srv.listen(16)
    return srv


def _ours(path: Path, inode: int) -> bool:
    try:
        return path.stat().st_ino == inode
    except OSError:
        return False


def serve(store: str, first: str | None = None) -> None:
    """The resident of ``store``: answer searches until idle for :func:`idle_seconds`."""
    from chaja.cli import common

    path = socket_path(store)
    srv = _listen(path)
    if srv is None:
        return
    inode = path.stat().st_ino
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))    # (the socket removed on the way out)
    common.held = {}                                 # indexes stay open between searches
    served = 0
    try:
        if first:
            _run(json.loads(first))
        srv.settimeout(idle_seconds())
        while Path(store).is_file():
            try:
                conn, _ = srv.accept()
            except socket.timeout:
                break
            with conn:
                conn.settimeout(60)
                parts = []
                while chunk := conn.recv(1 << 16):
                    parts.append(chunk)
                try:
                    request = json.loads(b"".join(parts))
                    if request.get("status"):
                        reply = {"served": served, "pid": os.getpid()}
                    else:
                        reply = _run(request)
                        served += 1
                except Exception as exc:             # never the resident's end: the command is told
                    reply = {"stdout": "", "stderr": f"error: the resident search failed: {exc}\n", "status": 2}
                try:
                    conn.sendall(json.dumps(reply).encode("utf-8"))
                except OSError:
                    pass                             # the asking command went away
    finally:
        srv.close()
        if _ours(path, inode):                       # (not a socket a later resident bound there)
            path.unlink(missing_ok=True)
        for idx in (common.held or {}).values():
            idx.close()


def status(store: str) -> dict | None:
    """``{"served": n, "pid": p}`` of the store's resident, None where none answers."""
    return _ask(socket_path(store), {"status": True}, timeout=5)


if __name__ == "__main__":
    serve(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
