"""Freed heap handed back to the system after a large one-time decode.

A store's translation lexicon is read once per process from 33 MB of text (1,000,000
chunks): the text, the JSON parse's strings and the decoded bytes pass through the heap
at once, about three times what is kept. glibc's allocator raises its threshold for
``mmap`` after the first large free (up to 32 MB), so the next large buffers come from
the heap proper and, once freed, stay there, counted in the process's memory
(``RssAnon``): 47 MB after the 1M peer store's lexicon. ``malloc_trim(0)`` gives the
freed pages back. Elsewhere (another C library, another system) this does nothing.

The same drift keeps a searching process's freed buffers: after a large free, the
buffers of each search (hundreds of kilobytes to megabytes) come from the heap and stay
there. At 100,000 chunks a serving process held 144 MiB of its own after 400 searches,
of which 53 MiB were free heap that ``malloc_trim`` gave back. :func:`map_large_buffers`
fixes the threshold instead (``mallopt(M_MMAP_THRESHOLD)``, which turns the drift off):
buffers of :data:`LARGE_BUFFER` (4 MiB) and up are mapped and given back as they are
freed. The serving peak at 100,000 chunks went from 404 to 383 MiB, with the encoders
from 706 to 689, hybrid and end-to-end times unchanged (two runs each); 1 MiB gave 374
MiB but 3–6% slower searches, each mapping paid in page faults. ``CHAJA_MMAP_THRESHOLD``
sets another size in bytes; 0 leaves the allocator as it is.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

#: buffers of this many bytes and up are mapped from the system and given back when freed
LARGE_BUFFER = 4 << 20
_M_MMAP_THRESHOLD = -3


@functools.cache
def _libc_function(name: str):
    try:
        return getattr(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"), name)
    except (OSError, AttributeError):
        return None


def _malloc_trim():
    trim = _libc_function("malloc_trim")
    if trim is not None:
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


@functools.cache
def map_large_buffers() -> int:
    """Fix the C library's mmap threshold for this process, once: buffers of
    :data:`LARGE_BUFFER` bytes and up (``CHAJA_MMAP_THRESHOLD`` bytes where set; 0: none)
    are mapped and given back when freed. The threshold set, or 0 where it was not
    (another C library, or turned off)."""
    try:
        threshold = int(os.environ.get("CHAJA_MMAP_THRESHOLD", LARGE_BUFFER))
    except ValueError:
        threshold = LARGE_BUFFER
    mallopt = _libc_function("mallopt") if threshold > 0 else None
    if mallopt is None:
        return 0
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return threshold if mallopt(_M_MMAP_THRESHOLD, min(threshold, 1 << 30)) == 1 else 0
