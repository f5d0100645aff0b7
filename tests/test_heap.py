"""Freed heap handed back after a large one-time decode (glibc's malloc_trim)."""
from __future__ import annotations

import platform
import subprocess
import sys
import textwrap

import pytest

from chaja import heap

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

#: after one large free, glibc serves the next large buffers from the heap proper, and
#: freed there, with a live object above them, they stay in the process's memory
PROGRAM = textwrap.dedent("""
    import re
    from chaja import heap

    def private_mb():
        return int(re.search(r"RssAnon:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) // 1024

    first = b"x" * (20 * 2**20)
    del first
    held = [b"y" * (8 * 2**20) for _ in range(8)]
    above = [bytes([i % 256]) * 600 for i in range(2000)]
    del held
    before = private_mb()
    print(heap.give_back(), before, private_mb())
""")


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_freed_heap_goes_back_to_the_system():
    out = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True, check=True).stdout.split()
    gave, before, after = out[0] == "True", int(out[1]), int(out[2])
    assert gave and before - after >= 40, (before, after)



#: the same drift, with the threshold fixed first: the large buffers are mapped, and freed
#: they leave the process at once, with no trim; CHAJA_MMAP_THRESHOLD=0 leaves the drift
FIXED = textwrap.dedent("""
    import re
    from chaja import heap

    def private_mb():
        return int(re.search(r"RssAnon:\\s+(\\d+)", open("/proc/self/status").read()).group(1)) // 1024

    threshold = heap.map_large_buffers()
    first = b"x" * (20 * 2**20)
    del first
    held = [b"y" * (8 * 2**20) for _ in range(8)]
    above = [bytes([i % 256]) * 600 for i in range(2000)]
    start = private_mb()
    del held
    print(threshold, start, private_mb())
""")


@pytest.mark.skipif(not GLIBC, reason="mallopt is glibc's")
@pytest.mark.parametrize("setting, fixed", [(None, True), ("0", False), ("not a number", True)])
def test_a_fixed_threshold_gives_large_buffers_back_as_they_are_freed(setting, fixed, monkeypatch):
    import os
    env = {k: v for k, v in os.environ.items() if k != "CHAJA_MMAP_THRESHOLD"}
    if setting is not None:
        env["CHAJA_MMAP_THRESHOLD"] = setting
    out = subprocess.run([sys.executable, "-c", FIXED], capture_output=True, text=True, check=True,
                         env=env).stdout.split()
    threshold, start, after = int(out[0]), int(out[1]), int(out[2])
    assert (threshold == heap.LARGE_BUFFER) == fixed and (threshold == 0) != fixed
    if fixed:
        assert start - after >= 56, (start, after)         # the eight 8 MiB buffers left at their free
    else:
        assert start - after < 16, (start, after)          # the drift: freed, but kept in the heap
