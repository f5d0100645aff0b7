"""Metadata fields as the readers accept them: an ISO date and a language code."""
from __future__ import annotations

import re

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
