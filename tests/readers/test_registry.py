"""Which reader reads a file: content first, extension second, refusals by name."""
from __future__ import annotations

import io
import re
import zipfile

import pytest

from chaja.readers.base import ReadError
from chaja.readers.registry import FORMATS, format_of


def _zip(path, members: dict[str, bytes]):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    path.write_bytes(buf.getvalue())
    return path


@pytest.mark.parametrize("member, fmt", [("word/document.xml", "docx"), ("ppt/presentation.xml", "pptx"),
                                         ("xl/workbook.xml", "xlsx"), ("Contents/section0.xml", "hwpx")])
def test_an_office_file_under_any_name_is_read_as_what_it_is(tmp_path, member, fmt):
    assert format_of(_zip(tmp_path / "notes.md", {member: b"<x/>"})).name == fmt
    assert format_of(_zip(tmp_path / "a.bin", {member: b"<x/>"})).name == fmt


def test_hwpx_is_known_by_its_mimetype(tmp_path):
    assert format_of(_zip(tmp_path / "x.zip", {"mimetype": b"application/hwp+zip"})).name == "hwpx"


def test_a_pdf_named_md_is_a_pdf(tmp_path):
    (tmp_path / "report.md").write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj")
    assert format_of(tmp_path / "report.md") is FORMATS["pdf"]


@pytest.mark.parametrize("head, what", [
    (b"\x7fELF\x02\x01\x01\x00\x00\x00", "an executable (ELF)"),
    (b"MZ\x90\x00\x03\x00\x00\x00", "a Windows executable"),
    (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", "a gzip archive"),
    (b"SQLite format 3\x00\x10\x00", "an SQLite database"),
])
def test_binaries_are_refused_by_name_whatever_their_extension(tmp_path, head, what):
    for name in ("tool.md", "tool.txt", "tool"):
        (tmp_path / name).write_bytes(head + bytes(64))
        with pytest.raises(ReadError, match=re.escape(f"looks like {what}")):
            format_of(tmp_path / name)


def test_text_that_starts_like_a_magic_number_is_still_text(tmp_path):
    (tmp_path / "mz.txt").write_text("MZ is a band from Seoul.\n", encoding="utf-8")
    (tmp_path / "id3.md").write_text("ID3 tags hold a song's title.\n", encoding="utf-8")
    assert format_of(tmp_path / "mz.txt").name == "text"
    assert format_of(tmp_path / "id3.md").name == "markdown"


def test_binary_data_named_as_text_is_refused(tmp_path):
    (tmp_path / "data.txt").write_bytes(b"abc\x00\x01\x02\x03def" * 10)
    with pytest.raises(ReadError, match="binary data"):
        format_of(tmp_path / "data.txt")


def test_utf16_text_without_a_mark_is_not_binary(tmp_path):
    (tmp_path / "w.txt").write_bytes("plain words in UTF-16".encode("utf-16-le"))
    assert format_of(tmp_path / "w.txt").name == "text"


def test_a_name_that_promises_a_format_the_bytes_do_not_hold(tmp_path):
    (tmp_path / "fake.docx").write_text("just text", encoding="utf-8")
    with pytest.raises(ReadError, match="is named .docx but is not a DOCX file"):
        format_of(tmp_path / "fake.docx")
    (tmp_path / "old.doc").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    with pytest.raises(ReadError, match=r"Word 97-2003 file \(.doc\): save it as .docx"):
        format_of(tmp_path / "old.doc")


def test_an_unknown_type_is_none(tmp_path):
    (tmp_path / "script.py").write_text("print(1)\n", encoding="utf-8")
    assert format_of(tmp_path / "script.py") is None


def test_every_format_names_a_module_with_a_reader():
    import importlib.util

    for fmt in FORMATS.values():
        assert importlib.util.find_spec(fmt.module) is not None, fmt.module


def test_a_reader_whose_library_is_missing_names_the_extra():
    from chaja.readers.base import MissingExtra
    from chaja.readers.registry import Format

    fmt = Format("pdf", (".pdf",), "chaja.readers.pdf", "documents", ("no_such_library_for_chaja",))
    with pytest.raises(MissingExtra, match=re.escape("pip install 'chaja[documents]'")):
        fmt.reader()
