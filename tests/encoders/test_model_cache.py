"""The model cache: built once, reused, rebuilt for a new key, safe against a kill mid-build."""
from __future__ import annotations

import dataclasses
import filecmp
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from chaja.encoders.model_cache import cache_dir, cached_file

SLOW_BUILDER = """
import sys, time
from chaja.encoders.model_cache import cached_file

def build(tmp):
    with open(tmp, "wb") as fh:
        fh.write(b"the first half of a model")
        fh.flush()
        time.sleep(120)

cached_file("m.onnx", build, "a slow model", sys.argv[1])
"""


def dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(proc.stdout)


def test_cache_location(monkeypatch, tmp_path):
    monkeypatch.setenv("CHAJA_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    assert cache_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.delenv("CHAJA_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert cache_dir() == tmp_path / ".cache" / "chaja" / "models"


def test_second_construction_reuses_the_file(onnx_encoder, model_cache, capfd):
    pytest.importorskip("onnxruntime")
    from chaja.encoders.onnx_e5 import OnnxE5Encoder

    path = onnx_encoder.model_path
    assert path.parent == model_cache and ".fp32." in path.name
    before = os.stat(path)
    capfd.readouterr()
    again = OnnxE5Encoder("fp32", cache_dir=model_cache)
    after = os.stat(again.model_path)
    assert again.model_path == path
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (before.st_ino, before.st_mtime_ns, before.st_size)
    assert "building" not in capfd.readouterr().err


def test_new_version_key_rebuilds_and_ignores_leftovers(onnx_encoder, weights, model_cache, capfd):
    pytest.importorskip("onnxruntime")
    from chaja.encoders.onnx_e5 import ensure_model, model_key

    changed = dataclasses.replace(weights, version=weights.version + "+next")
    key = model_key(changed, "fp32")
    assert key != onnx_encoder.model_path.name and "+next" in key
    orphan = model_cache / f".{key}.{dead_pid()}-deadbeef.tmp"
    orphan.write_bytes(b"not a model: left by a killed build")
    capfd.readouterr()
    path = ensure_model(changed, "fp32", model_cache)
    err = capfd.readouterr().err
    assert "building the fp32 ONNX graph" in err and str(path) in err
    assert path.name == key and not orphan.exists()
    assert filecmp.cmp(path, onnx_encoder.model_path, shallow=False)   # same weights, same graph
    assert os.stat(onnx_encoder.model_path).st_size > 0                 # the old key is untouched
    assert not list(model_cache.glob(".*.tmp"))


def test_kill_mid_build_leaves_no_model(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", SLOW_BUILDER, str(tmp_path)], stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob(".m.onnx.*.tmp")):
            assert proc.poll() is None and time.monotonic() < deadline, "builder never started"
            time.sleep(0.02)
    finally:
        proc.kill()
        proc.wait()
    (tmp,) = tmp_path.glob(".m.onnx.*.tmp")
    assert not (tmp_path / "m.onnx").exists()

    path = cached_file("m.onnx", lambda p: p.write_bytes(b"a whole model"), "a model", tmp_path)
    assert path.read_bytes() == b"a whole model"
    assert not tmp.exists()                       # the dead build's leftover is cleaned up


def test_a_running_builders_temp_file_is_left_alone(tmp_path):
    live = tmp_path / f".m.onnx.{os.getpid()}-0000.tmp"
    live.write_bytes(b"someone is writing this")
    cached_file("m.onnx", lambda p: p.write_bytes(b"x"), "a model", tmp_path)
    assert live.exists()


def test_failed_build_leaves_nothing(tmp_path):
    def broken(p: Path) -> None:
        p.write_bytes(b"partial")
        raise RuntimeError("out of disk")

    with pytest.raises(RuntimeError, match="out of disk"):
        cached_file("m.onnx", broken, "a model", tmp_path)
    assert list(tmp_path.iterdir()) == []
