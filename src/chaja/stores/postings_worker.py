"""The helper process of :mod:`chaja.stores.postings_helper`: ``python -m chaja.stores.postings_worker
PARENT`` reads pickled pages of ``(rowid, lang, title, heading, body)`` rows on standard input
and answers each with ``("ok", segment)`` (:func:`chaja.stores.postings.build`) or
``("error", message)``, until its input ends; it ignores SIGINT (the process that started it
decides what an interrupt means) and ends with that process (:mod:`chaja.lifeline`)."""
from __future__ import annotations

import pickle
import signal
import sys

from chaja.lifeline import die_with
from chaja.stores import postings


def serve(stdin, stdout) -> None:
    """The helper's loop: a pickled page in, its pickled answer out."""
    while True:
        try:
            rows = pickle.load(stdin)
        except EOFError:
            return
        try:
            answer = ("ok", postings.build(rows))
        except Exception as exc:          # the caller builds the page itself
            answer = ("error", f"{type(exc).__name__}: {exc}")
        pickle.dump(answer, stdout, protocol=pickle.HIGHEST_PROTOCOL)
        stdout.flush()


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with(int(sys.argv[1]), death_signal=False)      # started from any thread of its parent
    serve(sys.stdin.buffer, sys.stdout.buffer)
