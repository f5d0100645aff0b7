"""The wall time of a search's stages, for benchmarks (``benchmarks/bench_stages.py``).

Off unless :func:`recording` is active in the searching thread; then each :func:`timed`
call adds its seconds to the recorder under its name. Stages nest (``context`` holds
``context: encode``); a name is summed over the calls of one search (a multipart
question searches three times). Off, a stage costs one attribute read.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
_local = threading.local()


@contextmanager
def recording() -> Iterator[dict[str, float]]:
    """Record the stages of the searches run in this block: name → seconds."""
    costs: dict[str, float] = {}
    before = getattr(_local, "costs", None)
    _local.costs = costs
    try:
        yield costs
    finally:
        _local.costs = before


def timed(name: str, fn: Callable[..., T], *args, **kwargs) -> T:
    """``fn(*args, **kwargs)``, its seconds added to ``name`` while :func:`recording`."""
    costs = getattr(_local, "costs", None)
    if costs is None:
        return fn(*args, **kwargs)
    t0 = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        costs[name] = costs.get(name, 0.0) + time.perf_counter() - t0
