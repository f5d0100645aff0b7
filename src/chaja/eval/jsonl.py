"""JSON Lines files of the harness (records, pools, grades, references), read one way:
blank lines skipped, a line that is not JSON named by file and line number."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path


def read_jsonl(path: str | Path, error: type[Exception] = ValueError) -> Iterator[tuple[int, object]]:
    """(line number, parsed value) of each non-blank line; ``error`` for a line that is not JSON."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
