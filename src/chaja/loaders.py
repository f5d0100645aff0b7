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
from collections.abc import Iterator
from pathlib import Path

from chaja.config import IndexConfig
from chaja.documents import Document
from chaja.file_reading import LoadReport, ReadProgress, SkippedFile, read_here
from chaja.language import detect_language
from chaja.reading_process import AVAILABLE, ReadingProcess

__all__ = ["LoadReport", "ReadProgress", "SkippedFile", "assign_language", "file_documents", "load_paths",
           "read_file", "reading_process"]

#: a reader's default budget per page, slide or sheet, in seconds (``index.read_timeout_s``)
READ_TIMEOUT_S = IndexConfig.read_timeout_s


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


def read_file(path: Path, doc_id: str, report: LoadReport, *, ocr: str = "auto",
              progress: ReadProgress | None = None, reading: ReadingProcess | None = None) -> Iterator[Document]:
    """The documents of one file (:func:`chaja.file_reading.read_here`), in ``reading``'s
    process within its budget, or in this process without one."""
    if reading is None:
        yield from read_here(path, doc_id, report, ocr=ocr, progress=progress)
        return
    yield from reading.read(path, doc_id, report, ocr=ocr,
                            progress=None if progress is None else (lambda d, t: progress(str(path), d, t)))


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
