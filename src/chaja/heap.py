"""Freed heap handed back to the system after a large one-time decode.

A store's translation lexicon is read once per process from 33 MB of text (1,000,000
chunks): the text, the JSON parse's strings and the decoded bytes pass through the heap
at once, about three times what is kept. glibc's allocator raises its threshold for
``mmap`` after the first large free (up to 32 MB), so the next large buffers come from
the heap proper and, once freed, stay there, counted in the process's memory
(``RssAnon``): 47 MB after the 1M peer store's lexicon. ``malloc_trim(0)`` gives the
freed pages back. Elsewhere (another C library, another system) this does nothing.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools


@functools.cache
def _malloc_trim():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return trim


def give_back() -> bool:
    """Return the heap's free pages to the system where the C library can (glibc's
    ``malloc_trim``); True when it could."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
