"""Opening an HWP 5 file (chaja.readers.hwp_file): damaged and refused files, on copies
of real files from public repositories (../shared/data/documents) and files the tests
write; the zip-bomb limit; the 배포용 (distribution) stream's key and decryption and the
summary information's title, on streams built byte by byte after the format spec."""
from __future__ import annotations

import os
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from chaja.readers import hwp, hwp_file, hwp_records
from chaja.readers.base import ReadContext, ReadError
from tests.readers.hwp_build import para, rec, table, text
from tests.readers.shared_files import read_error, shared_file as shared

olefile = pytest.importorskip("olefile", reason="the HWP reader needs olefile (the 'documents' extra)")


# -- damaged and refused files ---------------------------------------------------


def writable_copy(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    shutil.copyfile(shared(name), out)
    os.chmod(out, 0o644)
    return out


@pytest.mark.parametrize("keep", [100, 4096, 40_000, -600])
def test_truncated_file(tmp_path, keep):
    data = shared("tika-intro-ko.hwp").read_bytes()
    path = tmp_path / "cut.hwp"
    path.write_bytes(data[:keep])
    assert "damaged" in read_error(hwp, path)


def test_corrupted_deflate(tmp_path):
    path = writable_copy(tmp_path, "tika-intro-ko.hwp")
    with olefile.OleFileIO(str(path), write_mode=True) as ole:
        body = ole.openstream("BodyText/Section0").read()
        ole.write_stream("BodyText/Section0", bytes(b ^ 0x5A for b in body))
    assert "BodyText/Section0 does not decompress" in read_error(hwp, path)


def test_damaged_doc_info_is_read_around(tmp_path):
    path = writable_copy(tmp_path, "tika-intro-ko.hwp")
    with olefile.OleFileIO(str(path), write_mode=True) as ole:
        info = ole.openstream("DocInfo").read()
        ole.write_stream("DocInfo", bytes(len(info)))
    ctx = ReadContext(path, "x")
    doc = next(iter(hwp.read(ctx)))
    assert "Apache Tika - 컨텐츠 분석 툴킷" in doc.text
    assert ctx.notes and "DocInfo" in ctx.notes[0] and "outline headings are not known" in ctx.notes[0]


def _set_header(path: Path, header: bytes) -> None:
    with olefile.OleFileIO(str(path), write_mode=True) as ole:
        ole.write_stream("FileHeader", header)


def test_password_protected(tmp_path):
    path = writable_copy(tmp_path, "tika-intro-ko.hwp")
    with olefile.OleFileIO(str(path)) as ole:
        header = bytearray(ole.openstream("FileHeader").read())
    header[36] |= hwp_file.F_PASSWORD
    _set_header(path, bytes(header))
    assert "is protected with a password" in read_error(hwp, path)


def test_ole_file_that_is_not_hwp(tmp_path):
    path = writable_copy(tmp_path, "tika-intro-ko.hwp")
    _set_header(path, b"Not a Hangul file".ljust(256, b"\0"))
    assert read_error(hwp, path) == "is an OLE compound file but not an HWP document"


def test_hwp3_is_named(tmp_path):
    path = tmp_path / "old.hwp"
    path.write_bytes(b"HWP Document File V3.00 \x1a\x01\x02\x03\x04\x05" + bytes(200))
    assert "HWP 3.00" in read_error(hwp, path)


def test_not_a_compound_file(tmp_path):
    path = tmp_path / "plain.hwp"
    path.write_bytes("그냥 글입니다".encode() * 100)
    assert "no OLE compound file" in read_error(hwp, path)


def test_zip_bomb_is_refused():
    bomb = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = bomb.compress(bytes(3 << 20)) + bomb.flush()
    with pytest.raises(ReadError, match="zip bomb"):
        hwp_file.inflate(data, "BodyText/Section0", limit=1 << 20)
    assert len(hwp_file.inflate(data, "BodyText/Section0")) == 3 << 20


# -- streams built by the test ---------------------------------------------------


def _ms_rand(seed: int):
    while True:
        seed = (seed * 214013 + 2531011) & 0xFFFFFFFF
        yield (seed >> 16) & 0x7FFF


def test_distribution_stream_round_trip():
    """A ViewText stream made as the spec says: key record (XOR-coded with the MS
    rand() stream seeded by its first 4 bytes), then AES-128-ECB of the deflated records."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    seed, key = 0x2B7E1516, bytes(range(100, 116))
    plain = bytearray((i * 37 + 11) % 256 for i in range(256))       # fixed filler: the same every run
    plain[:4] = seed.to_bytes(4, "little")
    plain[4 + (seed & 0xF):4 + (seed & 0xF) + 16] = key
    coded, rand, left, mask = bytearray(plain), _ms_rand(seed), 0, 0
    for i in range(256):
        if left == 0:
            mask, left = next(rand) & 0xFF, (next(rand) & 0xF) + 1
        if i >= 4:
            coded[i] ^= mask
        left -= 1
    assert hwp_file.distribution_key(bytes(coded)) == key

    records = para(0, text("배포용 본문입니다")) + para(0, text(("ext", 11, "tbl ")), extra=table(1, [["가", "나"], ["다", "라"]]))
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = squeeze.compress(records) + squeeze.flush()
    packed += bytes(-len(packed) % 16)
    encrypt = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    stream = rec(hwp_records.TAG_DISTRIBUTE_DOC_DATA, 0, bytes(coded)) + encrypt.update(packed) + encrypt.finalize()
    body = hwp_file.inflate(hwp_file.decrypt_view_text(stream, "ViewText/Section0"), "ViewText/Section0")
    assert [b.text for b in hwp.section_blocks(body) if b.text] == ["배포용 본문입니다", "가 | 나", "다 | 라"]
    with pytest.raises(ReadError, match="no key record"):
        hwp_file.decrypt_view_text(stream[:100], "ViewText/Section0")


def test_summary_title_property():
    """\\x05HwpSummaryInformation as an OLE property set with PIDSI_TITLE (2) a VT_LPWSTR."""
    title = "보고서 제목".encode("utf-16-le") + b"\0\0"
    prop = struct.pack("<HHI", 0x1F, 0, len(title) // 2) + title
    section = struct.pack("<II", 8 + 16 + len(prop), 2) + struct.pack("<II", 1, 24) + struct.pack("<II", 2, 32)
    section += struct.pack("<HHI", 2, 0, 949)[:8] + prop    # PID 1 (code page) at 24, the title at 32
    header = struct.pack("<HHI16sI", 0xFFFE, 0, 0, bytes(16), 1) + bytes(16) + struct.pack("<I", 48)
    assert hwp_file.property_string(header + section, 2) == "보고서 제목"
    assert hwp_file.property_string(header + section, 5) == ""
