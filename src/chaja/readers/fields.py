"""Metadata fields as the readers accept them: an ISO date, a language code, and a
title that names its document."""
from __future__ import annotations

import re
import unicodedata

_LANG = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")


def iso_date(value: str | None) -> str | None:
    """``2024/3/5`` or ``2024.03.05 …`` → ``2024-03-05``; None when it is no date."""
    if not value:
        return None
    m = re.match(r"^\s*(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})", str(value))
    return f"{m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d}" if m else None


def language_code(value: str, problems: list[str] | None, where: str) -> str:
    """A language code as given, or "" (detect it) with a note when it is not one."""
    if value and not _LANG.match(value):
        if problems is not None:
            problems.append(f"{where}'lang' {value!r} is not a language code; detected instead")
        return ""
    return value


# a file's name, or what an application fills in until someone gives a title
_FILE_TITLE = re.compile(
    r"(?:microsoft\s+\w+\s*-\s*.*|.*\.(?:docx?|pdf|hwpx?|pptx?|xlsx?|rtf|txt|odt|indd|qxd|tex|dvi|ps|eps|html?)"
    r"|untitled.*|제목\s*없음|무제|document\s*\d*|문서\s*\d*|\s*)", re.IGNORECASE)


def meaningful_title(title: str | None, placeholders: re.Pattern | None = None) -> str:
    """A file's own title (its metadata) when it names the document; "" for an empty one,
    a file's name (``Microsoft Word - x.doc``, ``report.pdf``, ``scan_0001``), ``Untitled``,
    one without letters, or one of a format's own ``placeholders`` (``Slide 1``, ``Book1``)."""
    title = " ".join(unicodedata.normalize("NFC", title or "").split())
    title = "".join(ch for ch in title if ch.isprintable()).strip()
    if (not title or _FILE_TITLE.fullmatch(title) or (placeholders is not None and placeholders.fullmatch(title))
            or not any(ch.isalpha() for ch in title)):
        return ""
    if re.fullmatch(r"[\w.-]+", title) and ("_" in title or re.search(r"\d{3,}", title)):
        return ""           # "scan_0001", "report-2020-final_v2": a file's name
    return title
