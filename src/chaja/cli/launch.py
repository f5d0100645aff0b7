"""The ``chaja`` command's entry point: a search a resident process can answer is sent
there (:mod:`chaja.cli.resident`: standard library only, so asking costs milliseconds);
anything else runs here, and a search that ran here starts a resident for the next."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from chaja.cli import resident

    args = list(sys.argv[1:] if argv is None else argv)
    status = resident.answer(args)
    if status is not None:
        return status
    from chaja.cli.app import main as run

    status = run(args)
    if status == 0:
        resident.start(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
