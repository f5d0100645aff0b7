"""CSV and TSV files → one document, a line a row (:mod:`chaja.readers.rows`).

The encoding is found from the file's first megabyte as the text reader finds it
(:func:`chaja.readers.encoding.detect`); one that is not UTF-8 is reported (``ctx.encoding``).
The delimiter is :class:`csv.Sniffer`'s when the first 64 KB bear it out, else the
one of comma, tab, semicolon and pipe that splits those rows most evenly. The file
is then streamed, so its size bounds only the document it makes; one whose quotes
do not pair up is read again with quotes as plain characters.
"""
from __future__ import annotations

import codecs
import csv
import io
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from chaja.documents import Document
from chaja.readers.base import ReadContext, ReadError
from chaja.readers.encoding import detect
from chaja.readers.rows import row_sections, table_lines

HEAD_BYTES = 1 << 20          # bytes the encoding is judged on
SNIFF_CHARS = 64 * 1024       # characters the delimiter is judged on
DELIMITERS = (",", "\t", ";", "|")


def _split_evenly(sample: str, delimiter: str) -> float:
    """How well ``delimiter`` splits the sample's rows: the share of rows with the most
    common field count, when that count is above one (0 otherwise)."""
    counts = Counter(len(row) for row in csv.reader(io.StringIO(sample), delimiter=delimiter) if row)
    if not counts:
        return 0.0
    fields, rows = counts.most_common(1)[0]
    return rows / sum(counts.values()) if fields > 1 else 0.0


def detect_dialect(sample: str, suffix: str) -> type[csv.Dialect]:
    """The dialect of a file whose text begins with ``sample`` (cut at a line end):
    Excel's quoting, with the delimiter found. Only the Sniffer's delimiter and
    spacing are taken; its guess at quoting, made on a sample, could misread the rest."""
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters="".join(DELIMITERS))
        if _split_evenly(sample, sniffed.delimiter) >= 0.8:
            return _dialect(sniffed.delimiter, bool(sniffed.skipinitialspace))
    except csv.Error:
        pass
    order = ("\t", ",", ";", "|") if suffix == ".tsv" else DELIMITERS
    best = max(order, key=lambda d: _split_evenly(sample, d))    # max keeps the first of equals
    return _dialect(best if _split_evenly(sample, best) > 0 else order[0], False)


def _dialect(delimiter: str, skipinitialspace: bool) -> type[csv.Dialect]:
    return type("Dialect", (csv.excel,), {"delimiter": delimiter, "skipinitialspace": skipinitialspace})


def _sample(stream: io.TextIOBase) -> str:
    """The first :data:`SNIFF_CHARS` of the stream, cut after its last whole line; the
    stream is rewound."""
    text = stream.read(SNIFF_CHARS)
    stream.seek(0)
    cut = text.rfind("\n")
    return text[:cut + 1] if len(text) == SNIFF_CHARS and cut > 0 else text


def _records(reader) -> Iterator[tuple[int, list[str]]]:
    n = 0
    try:
        for n, row in enumerate(reader, 1):
            yield n, row
    except csv.Error as exc:
        raise ReadError(f"is not a readable CSV file: {exc} (record {n + 1})") from exc


def _name(encoding: str) -> str:
    return codecs.lookup(encoding).name.upper().replace("_", "-")


def _sections(path: Path, encoding: str, dialect: type[csv.Dialect]) -> list:
    with open(path, encoding=encoding, errors="replace", newline="") as stream:
        return list(row_sections(table_lines(_records(csv.reader(stream, dialect)))))


def read(ctx: ReadContext) -> Iterator[Document]:
    path = Path(ctx.path)
    with open(path, "rb") as f:
        head = f.read(HEAD_BYTES)
        whole = not f.read(1)
    encoding = ctx.encoding or detect(head, whole)      # the text reader may have found it already
    ctx.encoding = encoding               # the loader reports one that is not UTF-8
    with open(path, encoding=encoding, errors="replace", newline="") as stream:
        dialect = detect_dialect(_sample(stream), path.suffix.lower())
    try:
        sections = _sections(path, encoding, dialect)
    except ReadError:               # an unpaired quote swallowed the rest of the file into one field
        dialect = type("Dialect", (dialect,), {"quoting": csv.QUOTE_NONE, "escapechar": None})
        sections = _sections(path, encoding, dialect)
        ctx.notes.append("its quotes do not pair up, so they were read as plain characters")
    head_text = codecs.getincrementaldecoder(encoding)("replace").decode(head, whole)
    if "\ufffd" not in head_text and any("\ufffd" in s.text for s in sections):
        ctx.notes.append(f"some bytes past the first megabyte are not valid {_name(encoding)}; they were replaced")
    ctx.tell(1, 1)
    yield Document(id=ctx.doc_id, title=path.stem, sections=sections, path=str(path))
