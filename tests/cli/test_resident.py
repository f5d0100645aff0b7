"""The resident search process: after one ``chaja search`` (the command, in a new process
each time, as a person runs it), the next ones on that store are answered by a resident
that holds the index; its answers are the command's own (text, JSON, settings, errors),
it sees writes made since, it exits when idle, and a dead one is never waited for."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chaja.cli import main, resident

DOCS = Path(__file__).parent.parent / "fixtures" / "small-store" / "docs"


@pytest.fixture(scope="module")
def small_store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("resident")
    store = folder / "small.chaja"
    assert main(["index", str(DOCS), "--store", str(store), "--quiet"]) == 0
    return store


@pytest.fixture
def runtime(tmp_path, monkeypatch):
    """Each test's own socket folder and idle time; its resident stopped afterwards."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv(resident.ENV, "60")
    stores: list[Path] = []
    yield stores
    for store in stores:
        got = resident.status(str(store))
        if got is not None:
            os.kill(got["pid"], signal.SIGTERM)


def chaja(*args: str, **env: str) -> subprocess.CompletedProcess:
    """The ``chaja`` command in a new process (its entry point, as the console script runs it)."""
    return subprocess.run([sys.executable, "-m", "chaja.cli.launch", *args], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)


def wait_for(store: Path, served: int | None = None, budget_s: float = 120.0) -> dict:
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        got = resident.status(str(store))
        if got is not None and (served is None or got["served"] >= served):
            return got
        time.sleep(0.2)
    pytest.fail(f"no resident answered for {store} within {budget_s:.0f} s")


def test_the_next_searches_are_answered_by_the_resident_as_the_command_would(small_store, runtime):
    runtime.append(small_store)
    first = chaja("search", "how long is the warranty", "--store", str(small_store), "-k", "3")
    assert first.returncode == 0 and "kettle-manual" in first.stdout
    assert wait_for(small_store)["served"] == 0                      # started, warmed, nothing asked yet
    again = chaja("search", "how long is the warranty", "--store", str(small_store), "-k", "3")
    assert (again.returncode, again.stdout, again.stderr) == (0, first.stdout, first.stderr)
    assert resident.status(str(small_store))["served"] == 1

    asked = ("search", "보증 기간", "--store", str(small_store), "--json", "--set", "search.mode=keyword")
    there = chaja(*asked)
    here = chaja(*asked, **{resident.ENV: "0"})                       # the same command in its own process
    assert resident.status(str(small_store))["served"] == 2
    assert there.returncode == here.returncode == 0
    got, want = json.loads(there.stdout), json.loads(here.stdout)
    assert got["lists"] == want["lists"] == ["keyword"]
    assert [d["doc_id"] for d in got["results"]] == [d["doc_id"] for d in want["results"]]
    assert got["results"] and got == want

    bad = chaja("search", "   ", "--store", str(small_store))
    assert bad.returncode == 2 and bad.stderr == chaja("search", "   ", "--store", str(small_store),
                                                       **{resident.ENV: "0"}).stderr
    assert resident.status(str(small_store))["served"] == 3


def test_the_resident_sees_a_document_written_since(tmp_path, small_store, runtime):
    store = tmp_path / "grows.chaja"
    for f in small_store.parent.glob(small_store.name + "*"):
        try:
            shutil.copy2(f, tmp_path / f.name.replace(small_store.name, store.name))
        except FileNotFoundError:      # (-shm or -wal, gone as the last process that held the store closed it)
            continue
    runtime.append(store)
    assert chaja("search", "warranty", "--store", str(store)).returncode == 0
    wait_for(store)
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "parking.md").write_text("# Parking permits\n\nZeppelin hangar permits renew every March.\n",
                                      encoding="utf-8")
    assert main(["index", str(extra), "--store", str(store), "--quiet"]) == 0
    found = chaja("search", "zeppelin hangar permits", "--store", str(store), "-k", "1")
    assert found.returncode == 0 and "parking" in found.stdout
    assert resident.status(str(store))["served"] == 1


def test_no_resident_when_turned_off_and_a_dead_one_is_not_waited_for(small_store, runtime, monkeypatch):
    runtime.append(small_store)
    off = chaja("search", "warranty", "--store", str(small_store), **{resident.ENV: "0"})
    assert off.returncode == 0
    time.sleep(1.0)
    assert resident.status(str(small_store)) is None and not resident.socket_path(str(small_store)).exists()
    path = resident.socket_path(str(small_store))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("not a socket")                                   # as a killed resident can leave it
    stale = chaja("search", "warranty", "--store", str(small_store), "-k", "1")
    assert stale.returncode == 0 and "kettle-manual" in stale.stdout
    wait_for(small_store)                                             # a new one took the place


def test_an_idle_resident_exits(small_store, runtime, monkeypatch):
    monkeypatch.setenv(resident.ENV, "1")
    assert chaja("search", "warranty", "--store", str(small_store)).returncode == 0
    path = resident.socket_path(str(small_store))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not path.exists():
        time.sleep(0.1)
    while time.monotonic() < deadline and path.exists():
        time.sleep(0.2)
    assert not path.exists()


def test_a_socket_folder_of_another_user_is_neither_asked_nor_served_in(small_store, runtime):
    if os.geteuid() != 0:
        pytest.skip("giving the socket folder to another user needs root")
    path = resident.socket_path(str(small_store))
    path.parent.mkdir(parents=True)
    os.chown(path.parent, 65534, 65534)            # another user's folder where ours would be
    runtime.append(small_store)
    first = chaja("search", "warranty", "--store", str(small_store), "-k", "1")
    assert first.returncode == 0 and "kettle-manual" in first.stdout
    time.sleep(3.0)
    assert not path.exists() and resident.status(str(small_store)) is None


def test_an_open_socket_folder_of_ours_is_closed_and_what_it_held_not_trusted(small_store, runtime):
    path = resident.socket_path(str(small_store))
    path.parent.mkdir(parents=True)
    path.parent.chmod(0o777)                       # others could have put a socket there
    planted = path.parent / "planted.sock"
    planted.write_text("")
    runtime.append(small_store)
    assert chaja("search", "warranty", "--store", str(small_store)).returncode == 0
    wait_for(small_store)
    assert (path.parent.stat().st_mode & 0o777) == 0o700 and not planted.exists()
