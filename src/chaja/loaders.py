"""Files and folders → :class:`Document` objects, each file read by the reader its
content and extension call for (:mod:`chaja.readers.registry`): Markdown/MDX, plain
text, HTML, JSON Lines, CSV/TSV, PDF (scanned pages through OCR), DOCX, PPTX,
XLSX, HWPX and HWP, and images through OCR.

A file's document id is its path relative to the folder given, without extension
(``learn__rendering-lists.md`` → ``learn__rendering-lists``; ``guide/intro.md`` →
``guide/intro``); a workbook's sheets are ``<id>#<sheet>`` and a JSON Lines file's
records take their own ``id`` (``<id>#<line>`` without one).

Nothing is skipped in silence: a file that is not read is named in
:attr:`LoadReport.skipped` with the reason (a type chaja does not read, an
executable, a PDF that needs OCR, a reader's library not installed, a malformed
file, a reader that overran its time budget), and what a reader noticed in a file
it did read is in :attr:`LoadReport.problems`. One bad file never stops the others:
each is read in a child process within ``read_timeout_s`` per page
(:mod:`chaja.reading_process`).
"""
from __future__ import annotations

import os
import stat
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from chaja.config import IndexConfig
from chaja.documents import Document, source_file
from chaja.language import detect_language
from chaja.readers.base import ReadContext, ReadError
from chaja.readers.encoding import UTF8
from chaja.readers.registry import format_of
from chaja.reading_process import AVAILABLE, ReadingProcess

#: a reader's default budget per page, slide or sheet, in seconds (``index.read_timeout_s``)
READ_TIMEOUT_S = IndexConfig.read_timeout_s


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


def assign_language(doc: Document, language: str = "auto") -> Document:
    """Force ``language``, or with ``"auto"`` detect it when the document does not say."""
    if language != "auto":
        doc.lang, doc.lang_detected = language, False
    elif not doc.lang:
        doc.lang, doc.lang_detected = detect_language(doc.title + "\n" + doc.text), True
    return doc


def _doc_id(path: Path, root: Path) -> str:
    rel = path.relative_to(root) if root != path else Path(path.name)
    return rel.with_suffix("").as_posix()


def _has_text(doc: Document, where: str, report: LoadReport) -> bool:
    """A document with nothing but blanks would be stored without a chunk: reported, skipped."""
    if any(not s.text.isspace() and s.text for s in doc.sections):
        return True
    report.problems.append(f"{where}: no text; skipped")
    return False


def _readable(p: Path, root: Path, report: LoadReport) -> bool:
    """A regular file, inside ``root`` even when reached through a link; else reported."""
    try:
        mode = p.stat().st_mode          # stat does not block on a FIFO, opening it would
    except OSError as exc:
        report.skip(p, f"cannot be read ({exc.strerror or exc})")
        return False
    if not stat.S_ISREG(mode):
        report.skip(p, "not a regular file (a FIFO, device or socket)")
        return False
    if p.is_symlink() and not p.resolve().is_relative_to(root.resolve()):
        report.skip(p, f"a link to {p.resolve()}, outside {root}")
        return False
    return True


def _walk(root: Path, report: LoadReport) -> Iterator[Path]:
    if not root.is_dir():
        if _readable(root, root.parent, report):
            yield root
        return
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and _readable(p := Path(dirpath) / name, root, report):
                yield p


def _note(path: Path, note: str) -> str:
    """A reader's note with its file: ``a.jsonl:3: …`` for a line's note (``:3: …``), else ``a.pdf: …``."""
    return f"{path}{note}" if note.startswith(":") else f"{path}: {note}"


def read_file(path: Path, doc_id: str, report: LoadReport, *, ocr: str = "auto",
              progress: ReadProgress | None = None, reading: ReadingProcess | None = None) -> Iterator[Document]:
    """The documents of one file, by the reader its content calls for, in ``reading``'s
    process within its budget (in this process without one); a file that is not read
    is added to ``report.skipped`` with the reason, and yields nothing."""
    if reading is not None:
        yield from reading.read(path, doc_id, report, ocr=ocr,
                                progress=None if progress is None else (lambda d, t: progress(str(path), d, t)))
        return
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


def reading_process(read_timeout_s: float) -> ReadingProcess | None:
    """A process to read files in within ``read_timeout_s`` a page; None for 0, or where
    files cannot be read in a child (:data:`chaja.reading_process.AVAILABLE`): read here."""
    return ReadingProcess(read_timeout_s) if read_timeout_s and AVAILABLE else None


def load_paths(paths: list[str | os.PathLike], report: LoadReport | None = None,
               language: str = "auto", *, ocr: str = "auto",
               progress: ReadProgress | None = None, read_timeout_s: float = READ_TIMEOUT_S) -> Iterator[Document]:
    """Every document under ``paths`` (files or folders, walked recursively, sorted),
    each file read in a child process within ``read_timeout_s`` seconds a page (0: in
    this process, without a budget)."""
    report = report if report is not None else LoadReport()
    reading = reading_process(read_timeout_s)
    try:
        yield from _load(paths, report, language, ocr, progress, reading)
    finally:
        if reading is not None:
            reading.close()


def _load(paths: list[str | os.PathLike], report: LoadReport, language: str, ocr: str,
          progress: ReadProgress | None, reading: ReadingProcess | None) -> Iterator[Document]:
    for given in paths:
        root = Path(given)
        if not root.exists():
            report.problems.append(f"{root}: no such file or folder")
            report.missing.append(str(root))
            continue
        base = root if root.is_dir() else root.parent
        taken: dict[str, Path] = {}
        for path in _walk(root, report):
            doc_id = _doc_id(path, base)
            if doc_id in taken:            # good.txt and good.html: the second keeps its extension
                other = taken[doc_id]
                doc_id = (path.relative_to(base) if root != path else Path(path.name)).as_posix()
                report.problems.append(f"{path}: the id {_doc_id(path, base)!r} is taken by {other.name}; "
                                       f"indexed as {doc_id!r}")
            taken[doc_id] = path
            yield from file_documents(path, doc_id, report, language, ocr=ocr, progress=progress, reading=reading)


def file_documents(path: Path, doc_id: str, report: LoadReport, language: str = "auto", *,
                   ocr: str = "auto", progress: ReadProgress | None = None,
                   reading: ReadingProcess | None = None) -> Iterator[Document]:
    """One file's documents with text, their language assigned (:func:`read_file`, in
    ``reading``'s process when given; a document without text is reported and left out)."""
    for doc in read_file(path, doc_id, report, ocr=ocr, progress=progress, reading=reading):
        if _has_text(doc, doc.path or str(path), report):
            yield assign_language(doc, language)
