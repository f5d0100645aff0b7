"""Files → :class:`Document` objects.

Markdown/MDX (front matter ``title:``, ``lang``, ``source``, ``doc_type``/``type``,
``date``), plain text, HTML and JSON Lines (one document a line: ``id, title, text,
lang, source, doc_type, date``; ``text`` is plain text, read as Markdown only when
the record says ``"format": "markdown"``, so a hashtag line such as ``# 비용절감``
stays text). A file's document id is its path relative to the
folder given, without extension (``learn__rendering-lists.md`` →
``learn__rendering-lists``; ``guide/intro.md`` → ``guide/intro``).

A file that cannot be read is reported in :class:`LoadReport` and skipped; broken
UTF-8 is replaced (U+FFFD) and reported, so one bad byte never loses a document.
"""
from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from chaja.documents import Document, Section
from chaja.language import detect_language
from chaja.markup import html_sections, markdown_sections, prose, split_front_matter

MARKDOWN = {".md", ".mdx", ".markdown"}
TEXT = {".txt", ".text"}
HTML = {".html", ".htm"}
JSONL = {".jsonl", ".ndjson"}
SUPPORTED = MARKDOWN | TEXT | HTML | JSONL
MARKUP_FORMATS = {"text": False, "plain": False, "markdown": True, "md": True}   # JSONL 'format' → Markdown?


@dataclass
class LoadReport:
    files: int = 0
    problems: list[str] = field(default_factory=list)   # "path: what went wrong"
    skipped: list[str] = field(default_factory=list)    # unsupported files met while walking


def _read_text(path: Path, report: LoadReport) -> str:
    data = path.read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):       # a UTF-16 byte-order mark
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            report.problems.append(f"{path}: invalid UTF-16 at byte {exc.start}; bad bytes replaced")
            return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        report.problems.append(f"{path}: invalid UTF-8 at byte {exc.start}; bad bytes replaced")
        return data.decode("utf-8", errors="replace")


def _date(value: str | None) -> str | None:
    if not value:
        return None
    m = re.match(r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})", str(value))
    return f"{m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d}" if m else None


def assign_language(doc: Document, language: str = "auto") -> Document:
    """Force ``language``, or with ``"auto"`` detect it when the document does not say."""
    if language != "auto":
        doc.lang = language
    elif not doc.lang:
        doc.lang = detect_language(doc.title + "\n" + doc.text)
    return doc


def load_markdown(path: Path, doc_id: str, report: LoadReport) -> Document:
    meta, body = split_front_matter(_read_text(path, report))
    h1, sections = markdown_sections(body)
    description = meta.get("description", "").strip()
    if description:
        sections.insert(0, Section((), description))
    title = meta.get("title") or h1 or path.stem
    return Document(
        id=doc_id, title=title, sections=sections,
        lang=_language(meta.get("lang", "").strip(), report.problems, f"{path}: ")
        or detect_language(title + "\n" + prose(body)), source=meta.get("source", ""),
        doc_type=meta.get("doc_type") or meta.get("type", ""), date=_date(meta.get("date")), path=str(path),
    )


def load_text(path: Path, doc_id: str, report: LoadReport) -> Document:
    text = _read_text(path, report).strip()
    first = text.split("\n", 1)[0].strip() if text else ""
    if 0 < len(first) <= 100:  # a short first line is the title, not body text ...
        title, rest = first, text[len(first):]
        text = rest if rest.strip() else text        # ... unless it is all there is
    else:
        title = path.stem
    return Document(id=doc_id, title=title, sections=text_sections(text), path=str(path))


def text_sections(text: str) -> list[Section]:
    """Plain text → one heading-less section per paragraph (blank lines separate them)."""
    return [Section((), p.strip()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def load_html(path: Path, doc_id: str, report: LoadReport) -> Document:
    title, sections = html_sections(_read_text(path, report))
    return Document(id=doc_id, title=title or path.stem, sections=sections, path=str(path))


_LANG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")


def _language(value: str, problems: list[str] | None, where: str) -> str:
    """A language code as given, or "" (detect it) with a note when it is not one."""
    if value and not _LANG.match(value):
        if problems is not None:
            problems.append(f"{where}'lang' {value!r} is not a language code; detected instead")
        return ""
    return value


def document_from_record(rec: dict, default_id: str, problems: list[str] | None = None) -> Document:
    """One JSON object → Document. ``text`` is plain text unless ``format`` is ``"markdown"``.
    A field of the wrong type is an error; a date or language that cannot be read is
    dropped with a note in ``problems``."""
    if not isinstance(rec, dict):
        raise ValueError("a line must be a JSON object")
    text = rec.get("text")
    if not isinstance(text, str):
        raise ValueError("missing string field 'text'")
    doc_id = rec.get("id")
    if doc_id is not None and (isinstance(doc_id, bool) or not isinstance(doc_id, (str, int))):
        raise ValueError(f"'id' must be a string or a whole number, not {type(doc_id).__name__}")
    for key in ("title", "lang", "source", "doc_type", "date", "format"):
        value = rec.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{key!r} must be a string, not {type(value).__name__}")
    fmt = str(rec.get("format") or "text").lower()
    if fmt not in MARKUP_FORMATS:
        raise ValueError(f"'format' must be one of {', '.join(sorted(MARKUP_FORMATS))}, not {fmt!r}")
    sections = markdown_sections(text)[1] if MARKUP_FORMATS[fmt] else text_sections(text)
    date = _date(rec.get("date"))
    if rec.get("date") and date is None and problems is not None:
        problems.append(f"'date' {rec['date']!r} is not a date (YYYY-MM-DD); stored without one")
    return Document(
        id=str(doc_id or default_id), title=rec.get("title") or "", sections=sections,
        lang=_language((rec.get("lang") or "").strip(), problems, ""), source=rec.get("source") or "",
        doc_type=rec.get("doc_type") or "", date=date,
    )


def load_jsonl(path: Path, stem_id: str, report: LoadReport) -> Iterator[Document]:
    for lineno, line in enumerate(_read_text(path, report).split("\n"), 1):
        if not line.strip():
            continue
        notes: list[str] = []
        try:
            doc = document_from_record(json.loads(line), f"{stem_id}#{lineno}", notes)
        except (json.JSONDecodeError, ValueError) as exc:
            report.problems.append(f"{path}:{lineno}: {exc}")
            continue
        except RecursionError:
            report.problems.append(f"{path}:{lineno}: JSON nested too deeply; line skipped")
            continue
        report.problems += [f"{path}:{lineno}: {n}" for n in notes]
        doc.path = f"{path}:{lineno}"
        yield doc


def _doc_id(path: Path, root: Path) -> str:
    rel = path.relative_to(root) if root != path else Path(path.name)
    return rel.with_suffix("").as_posix()


def _has_text(doc: Document, where: str, report: LoadReport) -> bool:
    """A document with nothing but blanks would be stored without a chunk: reported, skipped."""
    if doc.text.strip():
        return True
    report.problems.append(f"{where}: no text; skipped")
    return False


def _readable(p: Path, root: Path, report: LoadReport) -> bool:
    """A regular file, inside ``root`` even when reached through a link; else reported."""
    try:
        mode = p.stat().st_mode          # stat does not block on a FIFO, opening it would
    except OSError as exc:
        report.problems.append(f"{p}: cannot read ({exc.strerror or exc})")
        return False
    if not stat.S_ISREG(mode):
        report.problems.append(f"{p}: not a regular file (a FIFO, device or socket); skipped")
        return False
    if p.is_symlink() and not p.resolve().is_relative_to(root.resolve()):
        report.problems.append(f"{p}: a link to {p.resolve()}, outside {root}; skipped")
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
            p = Path(dirpath) / name
            if name.startswith("."):
                continue
            if p.suffix.lower() in SUPPORTED:
                if _readable(p, root, report):
                    yield p
            else:
                report.skipped.append(str(p))


def load_paths(paths: list[str | os.PathLike], report: LoadReport | None = None,
               language: str = "auto") -> Iterator[Document]:
    """Every document under ``paths`` (files or folders, walked recursively, sorted)."""
    report = report if report is not None else LoadReport()
    for given in paths:
        root = Path(given)
        if not root.exists():
            report.problems.append(f"{root}: no such file or folder")
            continue
        base = root if root.is_dir() else root.parent
        taken: dict[str, Path] = {}
        for path in _walk(root, report):
            report.files += 1
            suffix = path.suffix.lower()
            doc_id = _doc_id(path, base)
            if doc_id in taken:            # good.txt and good.html: the second keeps its extension
                other = taken[doc_id]
                doc_id = (path.relative_to(base) if root != path else Path(path.name)).as_posix()
                report.problems.append(f"{path}: the id {_doc_id(path, base)!r} is taken by {other.name}; "
                                       f"indexed as {doc_id!r}")
            taken[doc_id] = path
            try:
                if suffix in JSONL:
                    for doc in load_jsonl(path, doc_id, report):
                        if _has_text(doc, doc.path, report):
                            yield assign_language(doc, language)
                    continue
                if suffix in MARKDOWN:
                    doc = load_markdown(path, doc_id, report)
                elif suffix in HTML:
                    doc = load_html(path, doc_id, report)
                elif suffix in TEXT:
                    doc = load_text(path, doc_id, report)
                else:
                    report.problems.append(f"{path}: unsupported file type {suffix!r}")
                    continue
            except OSError as exc:
                report.problems.append(f"{path}: cannot read ({exc.strerror or exc})")
                continue
            if _has_text(doc, str(path), report):
                yield assign_language(doc, language)
