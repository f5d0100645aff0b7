"""A child process that ends when its parent does, however the parent ends.

A helper process (the hub's writer, a file's reader) must not outlive the process
that started it: a SIGKILLed parent cannot stop it, and an orphan blocks forever on a
pipe whose other end it holds itself. On Linux the kernel sends the child a signal
when the parent *thread* that started it ends (prctl ``PR_SET_PDEATHSIG``), so start
such a child from a thread that lives as long as the parent; everywhere, a watchdog
thread looks twice a second at whether the parent is still the parent.

:func:`python_child` starts such a child as a fresh interpreter of this Python.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

#: prctl(2)'s option that sets the signal a process gets when its parent ends
PR_SET_PDEATHSIG = 1

#: how often the watchdog looks at the parent, in seconds
WATCH_S = 0.5


def parent_death_signal(sig: int) -> bool:
    """Ask Linux for ``sig`` when the thread that started this process ends; False
    where there is no prctl (another system) or it refused."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(ctypes.c_int(PR_SET_PDEATHSIG), ctypes.c_ulong(int(sig)), ctypes.c_ulong(0),
                          ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while True:
        time.sleep(WATCH_S)
        if os.getppid() != parent:        # the parent has ended: this process now belongs to another
            os._exit(1)


def die_with(parent: int, *, death_signal: bool = True) -> None:
    """End this process when ``parent`` (a pid) ends: the parent-death signal on Linux
    (unless ``death_signal`` is False: a child that outlives the thread that started
    it), a watchdog thread everywhere, and a look now in case it ended already."""
    if death_signal:
        parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(1)
    threading.Thread(target=_watch, args=(parent,), name="chaja-lifeline", daemon=True).start()


def python_child(args: list[str], **popen) -> subprocess.Popen:
    """A fresh interpreter of this Python (``args`` after the executable) that imports the
    chaja this process imports (this process's ``sys.path`` as its ``PYTHONPATH``). Not a
    fork, which copies whatever lock another thread held at that moment, nor
    multiprocessing's spawn, which imports the caller's ``__main__`` again (a script without
    a ``__main__`` guard would run twice)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.Popen([sys.executable, *args], env=env, **popen)
