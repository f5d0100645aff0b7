"""Opening an Office (OOXML) package: what can go wrong, in one sentence each."""
from __future__ import annotations

import zipfile
import zlib
from collections.abc import Callable
from typing import TypeVar

from chaja.readers.base import ReadError

T = TypeVar("T")


def _not_a_package() -> tuple[type[BaseException], ...]:
    """The "no Office package" errors of python-docx, python-pptx and openpyxl, those installed."""
    found = []
    for module, name in (("docx.opc.exceptions", "PackageNotFoundError"), ("pptx.exc", "PackageNotFoundError"),
                         ("openpyxl.utils.exceptions", "InvalidFileException")):
        try:
            found.append(getattr(__import__(module, fromlist=[name]), name))
        except ImportError:
            pass
    return tuple(found)


def open_package(what: str, opener: Callable[[], T]) -> T:
    """``opener()``, its failures as :class:`ReadError`: "is not a readable ``what``: …"
    (no Office package, a damaged zip, a missing part, broken XML)."""
    try:
        return opener()
    except _not_a_package() as exc:
        raise ReadError(f"is not a readable {what}: it is no Office package (a zip archive)") from exc
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise ReadError(f"is not a readable {what}: the zip archive is damaged ({exc})") from exc
    except KeyError as exc:
        raise ReadError(f"is not a readable {what}: a part it needs is missing ({exc})") from exc
    except (ValueError, SyntaxError, OSError) as exc:   # lxml's XMLSyntaxError is a SyntaxError; openpyxl
                                                         # says "no valid workbook part" as an OSError
        raise ReadError(f"is not a readable {what}: {exc}") from exc
