"""Failures a person meets with a SQLite store, each one sentence with its real cause, an
exit status and no traceback, the store left whole (issue 41, items 6-10): another process
writing the store, a full disk, a read-only file, a path through a file, a store on a
read-only file system (which opens for searching).

The conditions are real: a second process holding SQLite's write lock (a real ``chaja
optimize`` among them, its work replaced by holding the lock until the test lets go), a
small tmpfs filled to its last byte, ``chattr +i``, a read-only bind mount. The last three
need root with the capabilities to mount and to set the immutable attribute; where those
are missing the tests are skipped and say so.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from chaja.analysis import bigram_terms
from chaja.cli import EX_TEMPFAIL, main
from chaja.documents import Chunk, ChunkRecord, Document, Section
from chaja.stores import StoreBusy, StoreError
from chaja.stores.sqlite import SqliteStore



# ---- builders ------------------------------------------------------------------------
def unit(seed: str, dim: int = 8) -> np.ndarray:
    v = np.random.default_rng(int(hashlib.md5(seed.encode()).hexdigest()[:8], 16)).standard_normal(dim)
    return (v / np.linalg.norm(v)).astype(np.float32)


def make_doc(doc_id: str, body: str = "본문 하나", n: int = 1) -> tuple[Document, list[ChunkRecord]]:
    title = f"문서 {doc_id}"
    doc = Document(id=doc_id, title=title, sections=[Section((), body)] * n, lang="ko", path=f"{doc_id}.txt")
    records = [ChunkRecord(Chunk(id=f"{doc_id}#{i}", doc_id=doc_id, ordinal=i, title=title, heading_path=(),
                                 text=body, lang="ko"),
                           bigram_terms(title), [], bigram_terms(body), unit(f"{doc_id}#{i}"))
               for i in range(n)]
    return doc, records


def small_store(path: Path, n: int = 3) -> dict[str, str]:
    """A closed store of ``n`` documents; their fingerprints."""
    with SqliteStore(path) as s:
        for i in range(n):
            s.put_document(*make_doc(f"d{i}"))
        s.compact(force=True)
        return s.fingerprints()


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def no_traceback(err: str) -> None:
    assert "Traceback" not in err and "During handling" not in err, err


# ---- a second process holding the write lock -------------------------------------------
_HOLD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("INSERT OR REPLACE INTO meta VALUES ('held by a test', '1')")
print("holding", flush=True)
sys.stdin.read()
db.execute("ROLLBACK")
"""

#: loaded by ``python -m chaja.cli optimize`` through PYTHONPATH: the command's work is
#: holding the store's write lock (through the store itself) until stdin closes
_OPTIMIZE_HOOK = """
import os
if os.environ.get("CHAJA_TEST_HOLD_WRITE_LOCK"):
    import sys
    import chaja.index

    def build_graphs(self, progress=None):
        with self.store._writing():
            print("holding", flush=True)
            sys.stdin.read()
        return []

    chaja.index.Index.build_graphs = build_graphs
"""


@contextmanager
def holding_lock(store: Path, tmp: Path, *, as_optimize: bool = False, release_after: float | None = None):
    """A second process holding ``store``'s write lock (``chaja optimize`` with
    ``as_optimize``) until the block ends, or ``release_after`` seconds."""
    env = dict(os.environ)
    if as_optimize:
        hook = tmp / "hook"
        hook.mkdir(exist_ok=True)
        (hook / "sitecustomize.py").write_text(_OPTIMIZE_HOOK)
        env["PYTHONPATH"] = os.pathsep.join([str(hook), *filter(None, [env.get("PYTHONPATH")])])
        env["CHAJA_TEST_HOLD_WRITE_LOCK"] = "1"
        args = [sys.executable, "-m", "chaja.cli", "optimize", "--store", str(store), "--quiet"]
    else:
        args = [sys.executable, "-c", _HOLD, str(store)]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    timer = None
    try:
        line = proc.stdout.readline()
        if line.strip() != "holding":
            proc.kill()
            raise RuntimeError(f"the holder did not take the lock: {line!r} {proc.stderr.read()}")
        if release_after is not None:
            timer = threading.Timer(release_after, proc.stdin.close)
            timer.start()
        yield proc
    finally:
        if timer is not None:
            timer.cancel()
        if not proc.stdin.closed:
            proc.stdin.close()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


# ---- root-only conditions ----------------------------------------------------------------
def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), check=False, capture_output=True, text=True)


@pytest.fixture
def tmpfs(tmp_path):
    """A 3 MB tmpfs, filled to its last byte by ``fill(root)``."""
    root = tmp_path / "small-disk"
    root.mkdir()
    if os.geteuid() != 0 or _run("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(root)).returncode:
        pytest.skip("a full disk needs a small tmpfs, and mounting one needs root (CAP_SYS_ADMIN)")
    try:
        yield root
    finally:
        _run("umount", "-l", str(root))


def fill(root: Path) -> Path:
    filler = root / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError:
        pass
    finally:
        os.close(fd)
    assert shutil.disk_usage(root).free == 0
    return filler


@pytest.fixture
def read_only_view(tmp_path):
    """(folder, the same folder through a read-only bind mount)."""
    source, view = tmp_path / "rw", tmp_path / "ro"
    source.mkdir()
    view.mkdir()
    if (os.geteuid() != 0 or _run("mount", "--bind", str(source), str(view)).returncode):
        pytest.skip("a read-only file system needs a bind mount, which needs root (CAP_SYS_ADMIN)")
    try:
        if _run("mount", "-o", "remount,bind,ro", str(view)).returncode:
            pytest.skip("cannot remount the bind mount read-only here")
        yield source, view
    finally:
        _run("umount", "-l", str(view))


@contextmanager
def immutable(path: Path):
    if os.geteuid() != 0 or shutil.which("chattr") is None or _run("chattr", "+i", str(path)).returncode:
        pytest.skip("an immutable file needs chattr and root (CAP_LINUX_IMMUTABLE); as root a mode of 0444 "
                    "does not stop writes")
    try:
        yield path
    finally:
        _run("chattr", "-i", str(path))


@pytest.fixture(scope="module")
def indexed(tmp_path_factory, corpus) -> Path:
    """The fixture corpus indexed with the real model, once; tests copy it."""
    path = tmp_path_factory.mktemp("indexed") / "s.chaja"
    assert main(["index", str(corpus), "--store", str(path), "--quiet"]) == 0
    return path


def copy_store(store: Path, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for p in store.parent.glob(store.name + "*"):
        shutil.copy2(p, folder / p.name)
    return folder / store.name


# ---- 6: another process writing ------------------------------------------------------------
def test_a_write_beside_another_writer_waits_a_bounded_time_then_says_who(tmp_path, monkeypatch):
    monkeypatch.setenv("CHAJA_BUSY_TIMEOUT_S", "1")        # (30 s unless told)
    path = tmp_path / "s.chaja"
    before = small_store(path)
    with SqliteStore(path) as s, holding_lock(path, tmp_path) as holder:
        with pytest.raises(StoreBusy) as caught:
            s.put_document(*make_doc("new"))
        assert s.fingerprints() == before          # searches still read beside the writer
    message = str(caught.value)
    assert "waited 1.0 s for it to finish" in message
    assert message.startswith(f"{path}: the store is busy: another process is writing it (")
    assert f"pid {holder.pid})" in message and "(database is locked)" in message
    assert caught.value.holder_pid == holder.pid and caught.value.retry_after_s > 0
    assert isinstance(caught.value.__cause__, sqlite3.OperationalError)
    with SqliteStore(path) as s:                  # the lock is free: the same write goes through
        assert s.fingerprints() == before and s.check() == []
        s.put_document(*make_doc("new"))
        assert set(s.fingerprints()) == {*before, "new"}


def test_a_write_outwaits_a_writer_that_finishes_within_the_bound(tmp_path, monkeypatch):
    # SQLite's default wait (5 s in Python) gave up on a writer holding the lock for 6 s
    monkeypatch.setenv("CHAJA_BUSY_TIMEOUT_S", "20")
    path = tmp_path / "s.chaja"
    small_store(path)
    with SqliteStore(path) as s, holding_lock(path, tmp_path, release_after=6.0):
        s.put_document(*make_doc("new"))           # past SQLite's own 5 s, within the bound
        assert "new" in s.fingerprints()


def test_index_during_chaja_optimize_exits_75_naming_it(indexed, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("CHAJA_BUSY_TIMEOUT_S", "1")
    store = copy_store(indexed, tmp_path / "store")
    (tmp_path / "new").mkdir()
    (tmp_path / "new" / "note.md").write_text("# 새 문서\n\n낙관적 잠금과 비관적 잠금의 차이를 설명한다.\n", encoding="utf-8")
    capsys.readouterr()
    with holding_lock(store, tmp_path, as_optimize=True) as holder:
        status = main(["index", str(tmp_path / "new"), "--store", str(store), "--quiet"])
        err = capsys.readouterr().err
        assert status == EX_TEMPFAIL, err
        assert (f"error: {store}: the store is busy: another process is writing it "
                f"(chaja optimize, pid {holder.pid}); waited 1.0 s") in err
        assert "(database is locked)" in err
        no_traceback(err)
        assert main(["search", "wireless password", "--store", str(store), "-k", "3"]) == 0   # reads go on
        assert "manuals/router" in capsys.readouterr().out
    assert main(["stats", "--store", str(store), "--json"]) == 0
    assert '"documents": 9' in capsys.readouterr().out            # nothing written, nothing lost
    assert main(["check", "--store", str(store)]) == 0


def test_the_hub_answers_503_with_retry_after_while_another_process_writes(tmp_path, monkeypatch):
    pytest.importorskip("fastapi", reason="the hub needs the server extra: pip install 'chaja[server]'")
    pytest.importorskip("uvicorn", reason="the hub needs the server extra: pip install 'chaja[server]'")
    monkeypatch.syspath_prepend(str(Path(__file__).parent / "hub"))
    from hubs import READ_KEY, WRITE_KEY, start_hub, stop_hub
    from raw import call

    monkeypatch.setenv("CHAJA_BUSY_TIMEOUT_S", "1")          # the hub's writer process inherits it
    store = tmp_path / "hub.chaja"
    hub = start_hub(store, tmp_path / "hub.log", [f"hub.api_keys={READ_KEY}", f"hub.write_keys={WRITE_KEY}"])
    try:
        def post(doc_id: str):
            return call(hub.url, "POST", "/v1/documents",
                        {"documents": [{"id": doc_id, "title": "잠금", "text": f"문서 {doc_id}의 본문입니다."}]},
                        key=WRITE_KEY)

        assert post("first")[0] == 200
        with holding_lock(store, tmp_path, as_optimize=True) as holder:
            status, body, headers = post("second")
            assert status == 503, body
            retry = {k.lower(): v for k, v in headers.items()}.get("retry-after")
            assert retry is not None and int(retry) >= 1
            assert "the store is busy: another process is writing it" in body["detail"]
            assert f"chaja optimize, pid {holder.pid}" in body["detail"]
            status, body, _ = call(hub.url, "GET", "/v1/stats", key=READ_KEY)
            assert status == 200 and body["documents"] == 1
            (tmp_path / "notes").mkdir()
            (tmp_path / "notes" / "n.md").write_text("# 메모\n\n잠금이 풀리면 다시 보낸다.\n", encoding="utf-8")
            assert main(["index", str(tmp_path / "notes"), "--hub", hub.url, "--api-key", WRITE_KEY]) == EX_TEMPFAIL
        status, body, _ = post("second")
        assert status == 200, body
    finally:
        stop_hub(hub)


# ---- 7: a full disk ------------------------------------------------------------------------
@pytest.mark.parametrize("spooling", [False, True], ids=["vectors-in-rows", "vectors-spooled"])
def test_a_full_disk_is_one_sentence_and_the_store_stays_whole(tmpfs, monkeypatch, spooling):
    # spooling: the store is past a vector file's minimum, so its new vectors are appended to
    # a spool beside it (chaja.stores.sqlite_spool), where the disk may fill first
    if spooling:
        from chaja.stores import sqlite_vectors

        monkeypatch.setattr(sqlite_vectors, "FILE_THRESHOLD", 1)
    path = tmpfs / "s.chaja"
    small_store(path)
    with SqliteStore(path) as s:
        before = s.fingerprints()
        filler = fill(tmpfs)
        with pytest.raises(StoreError) as caught:
            for i in range(200):
                s.put_document(*make_doc(f"big{i}", "본문 하나 " * 300, n=5))
        err = caught.value
        assert str(err).startswith(f"cannot write {path}: the disk is full (")
        assert "the unfinished write was rolled back" in str(err)
        chain = [str(err), *getattr(err, "__notes__", []), str(err.__cause__), str(err.__context__)]
        assert not any("cannot rollback" in c for c in chain), chain
        # (spooling, the disk may fill in the spool's append or in SQLite's own write first)
        assert isinstance(err.__cause__, (OSError, sqlite3.OperationalError) if spooling else sqlite3.OperationalError)
        filler.unlink()
        written = {f"big{j}" for j in range(i)}
        assert s.fingerprints().keys() == before.keys() | written and s.check() == []
        s.put_document(*make_doc("after"))                    # space again: writes go on
    with SqliteStore(path) as s:
        assert s.check() == [] and "after" in s.fingerprints()


@pytest.mark.parametrize("open_beside", [False, True], ids=["store-closed", "hub-style-reader-open"])
def test_cli_on_a_full_disk_says_so(tmpfs, capsys, open_beside):
    path = tmpfs / "s.chaja"
    before = small_store(path)
    reader = SqliteStore(path) if open_beside else None       # keeps its -wal and -shm in place
    try:
        filler = fill(tmpfs)
        assert main(["delete", "d1", "--store", str(path)]) == 2
        err = capsys.readouterr().err
        no_traceback(err)
        assert err.startswith(f"error: cannot write {path}: the disk is full ("), err
        assert "cannot rollback" not in err
        with SqliteStore(path) as s:          # a full disk still lets the store be searched
            assert s.fingerprints() == before and s.vector(unit("d1#0"), 1)[0].chunk_id == "d1#0"
            assert open_beside or s.read_only == "the disk is full (disk I/O error)"
        filler.unlink()
    finally:
        if reader is not None:
            reader.close()
    with SqliteStore(path) as s:
        assert s.fingerprints() == before and s.check() == []


# ---- 8: a read-only store file -------------------------------------------------------------
def test_an_immutable_store_file_is_searched_and_refuses_writes_in_a_sentence(tmp_path):
    path = tmp_path / "s.chaja"
    before = small_store(path)
    digest_before = digest(path)
    with immutable(path):
        with SqliteStore(path) as s:
            assert s.fingerprints() == before
            assert s.vector(unit("d1#0"), 1)[0].chunk_id == "d1#0"
            assert s.keyword(bigram_terms("본문"), 3)
            for write in (lambda: s.put_document(*make_doc("new")), lambda: s.delete_document("d1"),
                          lambda: s.set_meta("k", "v"), lambda: s.compact(force=True)):
                with pytest.raises(StoreError, match=rf"^cannot write {path}: the file is read-only \("):
                    write()
            assert s.read_only == "the file is read-only (its permissions, or the immutable attribute)"
        assert digest(path) == digest_before


def test_cli_on_an_immutable_store_file(indexed, tmp_path, capsys):
    store = copy_store(indexed, tmp_path / "store")
    digest_before = digest(store)
    capsys.readouterr()
    with immutable(store):
        assert main(["delete", "news-rates", "--store", str(store)]) == 2
        err = capsys.readouterr().err
        no_traceback(err)
        assert err.startswith(f"error: cannot write {store}: the file is read-only (its permissions, or the "
                              "immutable attribute); it was opened read-only, for searching. Nothing was written")
        assert main(["search", "wireless password", "--store", str(store), "-k", "3"]) == 0
        assert "manuals/router" in capsys.readouterr().out
    assert digest(store) == digest_before


# ---- 9: a path through a file ----------------------------------------------------------------
@pytest.mark.parametrize("below", ["x.chaja", "deeper/x.chaja"])
def test_a_store_path_through_a_file_is_one_sentence(tmp_path, capsys, corpus, below):
    blocker = tmp_path / "some_file.md"
    blocker.write_text("# a file, not a folder\n")
    store = f"{blocker}/{below}"
    assert main(["index", str(corpus), "--store", store, "--quiet"]) == 2
    err = capsys.readouterr().err
    no_traceback(err)
    assert err.startswith(f"error: cannot create the store {store}: {blocker} is a file, not a folder ("), err
    assert blocker.read_text() == "# a file, not a folder\n"
    with pytest.raises(StoreError, match="is a file, not a folder"):
        SqliteStore(store)


# ---- 10: a store on a read-only file system ----------------------------------------------------
def test_a_store_on_a_read_only_file_system_opens_for_search(read_only_view):
    source, view = read_only_view
    before = small_store(source / "s.chaja")
    assert sorted(p.name for p in source.iterdir()) == ["s.chaja", "s.chaja-keywords"]   # no -wal, no -shm
    path = view / "s.chaja"
    with SqliteStore(path) as s:
        assert s.read_only == "it lies on a read-only file system"
        assert s.fingerprints() == before and s.check() == []
        assert s.vector(unit("d2#0"), 1)[0].chunk_id == "d2#0"
        assert s.keyword(bigram_terms("본문"), 3)
        with pytest.raises(StoreError, match=rf"^cannot write {path}: it lies on a read-only file system; it "
                                             "was opened read-only, for searching"):
            s.put_document(*make_doc("new"))
    with pytest.raises(StoreError, match=rf"^cannot create the store {view}/new.chaja: {view} lies on a "
                                         "read-only file system"):
        SqliteStore(view / "new.chaja")


def test_a_read_only_view_of_a_store_being_written_sees_its_commits(read_only_view):
    # WAL: the writer's -wal and -shm are there, so the read-only side reads through them
    source, view = read_only_view
    small_store(source / "s.chaja")
    with SqliteStore(source / "s.chaja") as writer:
        writer.put_document(*make_doc("while-open"))
        with SqliteStore(view / "s.chaja") as reader:
            assert "while-open" in reader.fingerprints()
            writer.put_document(*make_doc("later"))
            assert "later" in reader.fingerprints()
            assert reader.vector(unit("later#0"), 1)[0].chunk_id == "later#0"
            with pytest.raises(StoreError, match=r"it lies on a read-only file system; it was opened read-only"):
                reader.delete_document("later")
        assert "later" in writer.fingerprints()


def test_cli_on_a_read_only_file_system(indexed, read_only_view, capsys):
    source, view = read_only_view
    copy_store(indexed, source)
    store = view / indexed.name
    capsys.readouterr()
    assert main(["search", "wireless password", "--store", str(store), "-k", "3"]) == 0
    assert "manuals/router" in capsys.readouterr().out
    assert main(["stats", "--store", str(store)]) == 0
    assert "documents: 9" in capsys.readouterr().out
    assert main(["delete", "news-rates", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    no_traceback(err)
    assert err.startswith(f"error: cannot write {store}: it lies on a read-only file system; it was opened "
                          "read-only, for searching. Nothing was written")
