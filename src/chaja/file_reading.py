"""One file read in this process, and the report of what a run read: the reader its
content calls for (:mod:`chaja.readers.registry`), the file's notes, the files skipped
with the reason. :mod:`chaja.loaders` walks folders and gives each file to
:func:`read_here`, in a child process within a time budget
(:mod:`chaja.reading_process`) or here.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from chaja.documents import Document, source_file
from chaja.readers.base import ReadContext, ReadError
from chaja.readers.encoding import UTF8
from chaja.readers.registry import format_of


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str          # a sentence without the path: "looks like an executable (ELF), not a document"
    failed: bool = True  # a file chaja tried to read (False: a type it does not read)

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"

    def as_dict(self) -> dict:
        return {"path": self.path, "reason": self.reason}


@dataclass
class LoadReport:
    files: int = 0                                      # files read (each gave documents or a note)
    problems: list[str] = field(default_factory=list)   # "path: what a reader noticed" in files it read
    skipped: list[SkippedFile] = field(default_factory=list)   # files not read, with the reason
    formats: Counter = field(default_factory=Counter)   # format name → files read
    missing: list[str] = field(default_factory=list)    # paths given that do not exist
    partial: list[str] = field(default_factory=list)    # files read but for parts that could not be (a bad line)
    encodings: dict[str, str] = field(default_factory=dict)  # text files not in UTF-8 → the encoding read

    def skip(self, path: Path | str, reason: str, failed: bool = True) -> None:
        self.skipped.append(SkippedFile(str(path), reason, failed))

    def merge(self, other: LoadReport) -> None:
        """Add what ``other`` (a report of the same run's files) found."""
        self.files += other.files
        self.problems.extend(other.problems)
        self.skipped.extend(other.skipped)
        self.formats.update(other.formats)
        self.missing.extend(other.missing)
        self.partial.extend(other.partial)
        self.encodings.update(other.encodings)

    def prune_veto(self) -> str:
        """Why removing the stored documents this run did not see would be unsafe, or "":
        a path given was missing, or nothing was read."""
        if self.missing:
            return f"{self.missing[0]} does not exist"
        if not self.files:
            return "no file under the paths given could be read"
        return ""

    @property
    def unreadable(self) -> set[str]:
        """The files that are there but could not be read whole: a reader failed on them,
        or read them only in part (a bad line)."""
        return {s.path for s in self.skipped if s.failed} | set(self.partial)

    def still_there(self, infos: list) -> set[str]:
        """The ids, among stored documents this run did not see (``DocumentInfo``), whose
        file is still there but could not be read whole (:attr:`unreadable`)."""
        kept = self.unreadable
        return {d.id for d in infos if d.path and source_file(d.path) in kept}


#: ``progress(path, done, total)``: how many pages (slides, sheets) of ``path`` are read
ReadProgress = Callable[[str, int, int], None]


def _note(path: Path, note: str) -> str:
    """A reader's note with its file: ``a.jsonl:3: …`` for a line's note (``:3: …``), else ``a.pdf: …``."""
    return f"{path}{note}" if note.startswith(":") else f"{path}: {note}"


def read_here(path: Path, doc_id: str, report: LoadReport, *, ocr: str = "auto",
              progress: ReadProgress | None = None) -> Iterator[Document]:
    """The documents of one file, by the reader its content calls for, read in this
    process; a file that is not read is added to ``report.skipped`` with the reason,
    and yields nothing."""
    try:
        fmt = format_of(path)
    except ReadError as exc:
        report.skip(path, str(exc))
        return
    except OSError as exc:
        report.skip(path, f"cannot be read ({exc.strerror or exc})")
        return
    if fmt is None:
        report.skip(path, f"a type chaja does not read ({path.suffix.lower() or 'no extension'})", failed=False)
        return
    ctx = ReadContext(path, doc_id, ocr=ocr,
                      progress=None if progress is None else (lambda done, total: progress(str(path), done, total)))
    docs: list[Document] = []
    try:
        reader = fmt.reader()
        for doc in reader(ctx):
            docs.append(doc)
    except ReadError as exc:
        report.problems.extend(_note(path, n) for n in ctx.notes)
        report.skip(path, str(exc))
        return
    except (OSError, MemoryError) as exc:
        report.skip(path, f"cannot be read ({getattr(exc, 'strerror', None) or exc})")
        return
    except Exception as exc:          # a reader's library failing on a malformed file
        report.skip(path, f"could not be read as {fmt.name.upper()} ({type(exc).__name__}: {exc})")
        return
    report.files += 1
    report.formats[fmt.name] += 1
    if ctx.partial:
        report.partial.append(str(path))
    if ctx.encoding and ctx.encoding not in UTF8:
        report.encodings[str(path)] = ctx.encoding
    report.problems.extend(_note(path, n) for n in ctx.notes)
    yield from docs
