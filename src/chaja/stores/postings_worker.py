"""The helper process of :mod:`chaja.stores.postings_helper`: ``python -m chaja.stores.postings_worker``
reads pickled pages of ``(rowid, lang, title, heading, body)`` rows on standard input and
answers each with ``("ok", segment)`` (:func:`chaja.stores.postings.build`) or
``("error", message)``, until its input ends."""
from __future__ import annotations

import pickle
import sys

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
    serve(sys.stdin.buffer, sys.stdout.buffer)
