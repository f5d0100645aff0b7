"""The HWP 5 reader: on real HWP files from public repositories (../shared/data/documents)
and, since no library here writes HWP 5, on record streams the tests build byte by byte
after the format spec (record headers, paragraph text with controls, tables, notes,
the 배포용 encryption)."""
from __future__ import annotations

import os
import shutil
import struct
import zlib
from pathlib import Path

import pytest

from chaja.documents import Location
from chaja.readers import hwp
from chaja.readers.base import ReadContext, ReadError
from tests.readers import shared_files
from tests.readers.shared_files import shared_file as shared, where
from chaja.readers.registry import format_of

olefile = pytest.importorskip("olefile", reason="the HWP reader needs olefile (the 'documents' extra)")

SHARED = ["tika-intro-ko.hwp", "regulatory-impact-urban-complex-dev.hwp", "nts-tax-ruling-rnd-credit-2009.hwp",
          "distribution-bid-notice-2024.hwp"]


_read_cache: dict[str, object] = {}


def read(path: Path):
    key = str(path)
    if key not in _read_cache:
        ctx = ReadContext(path, path.stem)
        docs = list(hwp.read(ctx))
        assert len(docs) == 1
        _read_cache[key] = (docs[0], ctx)
    return _read_cache[key]


def assert_clean(doc) -> None:
    shared_files.assert_clean(doc)
    assert all(s.marks and s.marks[0][0] == 0 for s in doc.sections)


def raw_text_chars(path: Path) -> int:
    """Non-space characters of every paragraph text record in the body, however nested."""
    body = hwp.open_hwp(path).sections
    return sum(len("".join(piece.split())) for data in body for rec in hwp.iter_records(data)
               if rec.tag == hwp.TAG_PARA_TEXT for piece in hwp.decode_para_text(rec.data) if isinstance(piece, str))


# -- real files ------------------------------------------------------------------


@pytest.mark.parametrize("name", SHARED)
def test_shared_files_read_clean_without_doubled_text(name):
    path = shared(name)
    assert format_of(path).name == "hwp"
    doc, ctx = read(path)
    assert doc.id == path.stem and doc.path == str(path)
    assert_clean(doc)
    cells = doc.text.replace(" | ", " ")                   # the separators the reader puts between cells
    squeezed = len("".join(cells.split())) + sum(len("".join(h.split())) for h in
                                                 {h for s in doc.sections for h in s.heading_path})
    assert squeezed <= raw_text_chars(path), "no text read twice"
    assert squeezed >= 0.95 * raw_text_chars(path) - 200, "no text lost"


def test_tika_intro():
    doc, _ = read(shared("tika-intro-ko.hwp"))
    assert doc.title == "Apache Tika"          # the summary information's title, found in the text
    assert where(doc, "Apache Tika - 컨텐츠 분석 툴킷") == ((), Location("paragraph", 1, 1))
    assert where(doc, "2019 년 5 월 20 일 : Apache Tika 출시")[1] == Location("paragraph", 7, 7)
    assert where(doc, "Apache Tika 1.19.1이 출시되었습니다!")[1] == Location("paragraph", 12, 12)
    assert "a) MP3Parser (TIKA-2730) 수정 및 b) SAX 구문 분석 (TIKA-2727)의 엔티티 확장 제한" in doc.text


def test_regulatory_impact_analysis_tables_and_headings():
    doc, _ = read(shared("regulatory-impact-urban-complex-dev.hwp"))
    assert doc.title == "규제영향분석서"
    # a table row, its cells in order
    assert where(doc, "국장 | 김배성 | 연락처 | 044-201-4386") == ((), Location("paragraph", 16, 16))
    assert "2.규제조문 | 도심 복합개발 지원에 관한 법률 시행령 제4조" in doc.text
    # the numbered headings of the report, under the Roman ones
    paths = {s.heading_path for s in doc.sections}
    assert ("Ⅰ. 규제의 필요성 및 대안선택", "1. 추진배경 및 정부개입 필요성") in paths
    assert ("Ⅳ. 추진계획 및 종합결론", "3. 종합결론") in paths
    # the table of contents is a list, not ten headings
    assert where(doc, "1.사업시행자의 결정·변경") == ((), Location("paragraph", 4, 4))
    section = next(s for s in doc.sections if s.heading_path == ("Ⅰ. 규제의 필요성 및 대안선택", "3. 규제목표"))
    assert section.text.startswith("ㅇ 동의자의 본인여부를 표시토록 하여 차후 동의서의 진위 여부와 관련한 다툼이")


def test_tax_ruling_form_layout():
    doc, _ = read(shared("nts-tax-ruling-rnd-credit-2009.hwp"))
    assert doc.title == "연구 및 인력개발비와 창업벤처기업에 대한 세액감면 여부"   # the paragraph after "[ 제 목 ]"
    assert where(doc, "[ 문서번호 ] | 법인세과 - 566 (2009. 05. 12) | 세목 | 조특") == ((), Location("paragraph", 1, 1))
    assert where(doc, "갑) 2008년 연구개발비 지출분으로 세액공제한다") == (("1. 질의내용 요약",), Location("paragraph", 16, 16))
    path, _ = where(doc, "100분의 3의 비율 + 해당 과세연도의 수입금액에서")
    assert path == ("2. 질의내용에 대한 자료", "가. 관련조세법령(법, 시행령, 시행규칙)")


def test_distribution_document_is_decrypted():
    path = shared("distribution-bid-notice-2024.hwp")
    assert hwp.open_hwp(path).flags & hwp.F_DISTRIBUTION
    doc, _ = read(path)
    assert "배포용 문서" not in doc.text and "상위 버전" not in doc.text      # not the placeholder
    assert doc.title == "2025년 강남세움센터 시설관리원 용역업체 선정 입찰공고"
    assert where(doc, "강남세움복지관 공고 제 2024-08호") == ((), Location("paragraph", 1, 1))
    assert where(doc, "②기초금액 : 금72,300,000원(금칠천이백삼십만원)(※부가가치세 포함)") == (
        ("1. 입찰에 부치는 사항",), Location("paragraph", 5, 5))
    assert where(doc, "⑤전자입찰 이용 관련 문의 : 조달청 콜센터 (☎ 1588-0800)")[0] == ("10. 기타사항",)
    assert doc.text.endswith("강남세움복지관장")


# -- damaged and refused files ---------------------------------------------------


def writable_copy(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    shutil.copyfile(shared(name), out)
    os.chmod(out, 0o644)
    return out


def read_error(path: Path) -> str:
    with pytest.raises(ReadError) as caught:
        list(hwp.read(ReadContext(path, "x")))
    message = str(caught.value)
    assert message[0].islower() and len(message.split()) >= 4, f"not a sentence: {message!r}"
    return message


@pytest.mark.parametrize("keep", [100, 4096, 40_000, -600])
def test_truncated_file(tmp_path, keep):
    data = shared("tika-intro-ko.hwp").read_bytes()
    path = tmp_path / "cut.hwp"
    path.write_bytes(data[:keep])
    assert "damaged" in read_error(path)


def test_corrupted_deflate(tmp_path):
    path = writable_copy(tmp_path, "tika-intro-ko.hwp")
    with olefile.OleFileIO(str(path), write_mode=True) as ole:
        body = ole.openstream("BodyText/Section0").read()
        ole.write_stream("BodyText/Section0", bytes(b ^ 0x5A for b in body))
    assert "BodyText/Section0 does not decompress" in read_error(path)


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
    header[36] |= hwp.F_PASSWORD
    _set_header(path, bytes(header))
    assert "is protected with a password" in read_error(path)


def test_ole_file_that_is_not_hwp(tmp_path):
    path = writable_copy(tmp_path, "tika-intro-ko.hwp")
    _set_header(path, b"Not a Hangul file".ljust(256, b"\0"))
    assert read_error(path) == "is an OLE compound file but not an HWP document"


def test_hwp3_is_named(tmp_path):
    path = tmp_path / "old.hwp"
    path.write_bytes(b"HWP Document File V3.00 \x1a\x01\x02\x03\x04\x05" + bytes(200))
    assert "HWP 3.00" in read_error(path)


def test_not_a_compound_file(tmp_path):
    path = tmp_path / "plain.hwp"
    path.write_bytes("그냥 글입니다".encode() * 100)
    assert "no OLE compound file" in read_error(path)


def test_zip_bomb_is_refused():
    bomb = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = bomb.compress(bytes(3 << 20)) + bomb.flush()
    with pytest.raises(ReadError, match="zip bomb"):
        hwp.inflate(data, "BodyText/Section0", limit=1 << 20)
    assert len(hwp.inflate(data, "BodyText/Section0")) == 3 << 20


# -- records built by the test -----------------------------------------------------


def rec(tag: int, level: int, data: bytes = b"") -> bytes:
    """A record: tag in bits 0-9, level 10-19, size 20-31 (0xFFF and a DWORD when larger)."""
    if len(data) >= 0xFFF:
        return struct.pack("<II", tag | level << 10 | 0xFFF << 20, len(data)) + data
    return struct.pack("<I", tag | level << 10 | len(data) << 20) + data


def ctrl_id(name: str) -> int:
    return int.from_bytes(name.encode("latin-1"), "big")


def text(*parts: str | tuple) -> bytes:
    """PARA_TEXT: strings as UTF-16LE; ("ext", code, id) an extended control (8 units);
    ("inline", code) an inline control (8 units); ("char", code) one unit."""
    out = b""
    for part in parts:
        if isinstance(part, str):
            out += part.encode("utf-16-le")
        elif part[0] == "ext":
            cid = ctrl_id(part[2])
            out += struct.pack("<8H", part[1], cid & 0xFFFF, cid >> 16, 0, 0, 0, 0, part[1])
        elif part[0] == "inline":
            out += struct.pack("<8H", part[1], 0, 0, 0, 0, 0, 0, part[1])
        else:
            out += struct.pack("<H", part[1])
    return out + struct.pack("<H", 13)


def para(level: int, body: bytes | None, shape: int = 0, extra: bytes = b"") -> bytes:
    """A paragraph: PARA_HEADER (shape id at byte 8), its PARA_TEXT, then ``extra`` records."""
    header = struct.pack("<IIHBBHHHI", 1, 0, shape, 0, 0, 1, 0, 1, 0)
    out = rec(hwp.TAG_PARA_HEADER, level, header)
    if body is not None:
        out += rec(hwp.TAG_PARA_TEXT, level + 1, body)
    return out + extra


def ctrl(level: int, name: str) -> bytes:
    return rec(hwp.TAG_CTRL_HEADER, level, struct.pack("<I", ctrl_id(name)) + bytes(40))


def cell(level: int, col: int, row: int, *paragraphs: bytes) -> bytes:
    header = struct.pack("<HIHHHHH", len(paragraphs), 0, 0, col, row, 1, 1) + bytes(20)
    return rec(hwp.TAG_LIST_HEADER, level, header) + b"".join(paragraphs)


def table(level: int, rows: list[list[str]]) -> bytes:
    """A 'tbl ' control at ``level`` with its TABLE record and one list header per cell."""
    shape = struct.pack("<IHH", 0, len(rows), len(rows[0])) + bytes(30)
    out = ctrl(level, "tbl ") + rec(hwp.TAG_TABLE, level + 1, shape)
    for r, cells in enumerate(rows):
        for c, value in enumerate(cells):
            out += cell(level + 1, c, r, para(level + 1, text(value)))
    return out


def test_record_headers_with_long_sizes():
    long = "가" * 3000                               # 6,000 bytes: past 0xFFF, so a DWORD size
    data = rec(1, 0, b"ab") + rec(hwp.TAG_PARA_TEXT, 3, long.encode("utf-16-le")) + rec(1023, 1023)
    got = list(hwp.iter_records(data, "test"))
    assert [(r.tag, r.level, len(r.data)) for r in got] == [(1, 0, 2), (67, 3, 6000), (1023, 1023, 0)]
    with pytest.raises(ReadError, match="runs past the end"):
        list(hwp.iter_records(data[:-1 - 6000], "test"))
    with pytest.raises(ReadError, match="inside a record header"):
        list(hwp.iter_records(b"\x01\x00", "test"))


def test_para_text_controls():
    data = text("가", ("ext", 2, "secd"), ("ext", 3, "%clk"), "누름틀", ("inline", 4), ("inline", 9), "끝",
                ("char", 10), "둘째 줄😀", ("char", 24), ("char", 30), ("char", 0), "x")
    got = hwp.decode_para_text(data)
    assert got == ["가", hwp.Control(2, "secd"), hwp.Control(3, "%clk"), "누름틀\t끝\n둘째 줄😀- x"]


def test_tables_notes_and_boxes_become_blocks():
    section = (
        para(0, text("표 앞 문장", ("ext", 11, "tbl "), "표 뒤 문장"),
             extra=table(1, [["이름", "값"], ["가격", "1,000원"], ["", ""]]))
        + para(0, text("본문", ("ext", 17, "fn  "), " 계속", ("ext", 16, "head")),
               extra=ctrl(1, "fn  ") + cell(2, 0, 0, para(2, text("각주 내용")))
               + ctrl(1, "head") + cell(2, 0, 0, para(2, text("머리말은 빠진다"))))
        + para(0, text(("ext", 11, "tbl ")), extra=table(1, [["상자 속 문단"]]))
        + para(0, None)
    )
    blocks = [b for b in hwp.section_blocks(section) if b.text.strip()]
    assert [(b.text, b.row, b.note) for b in blocks] == [
        ("표 앞 문장", False, False), ("이름 | 값", True, False), ("가격 | 1,000원", True, False),
        ("표 뒤 문장", False, False), ("본문 계속", False, False), ("각주 내용", False, True),
        ("상자 속 문단", False, False)]


def test_text_box_paragraphs_follow_their_anchor():
    """A 'gso ' drawing object keeps a text box's list under its shape component records."""
    box = (ctrl(1, "gso ") + rec(76, 2, bytes(40))
           + rec(hwp.TAG_LIST_HEADER, 3, bytes(30)) + para(3, text("글상자 첫 줄")) + para(3, text("글상자 둘째 줄")))
    blocks = hwp.section_blocks(para(0, text("그림 옆 문장", ("ext", 11, "gso ")), extra=box))
    assert [b.text for b in blocks if b.text] == ["그림 옆 문장", "글상자 첫 줄", "글상자 둘째 줄"]


def test_table_caption_follows_its_rows():
    caption = rec(hwp.TAG_LIST_HEADER, 2, struct.pack("<HIH", 1, 0, 0) + bytes(30)) + para(2, text("<표 1> 예산"))
    captioned = table(1, [["항목", "금액"], ["인건비", "300"]])
    at = captioned.index(struct.pack("<I", hwp.TAG_TABLE | 2 << 10 | 38 << 20))   # the caption goes before TABLE
    section = para(0, text(("ext", 11, "tbl ")), extra=captioned[:at] + caption + captioned[at:])
    assert [b.text for b in hwp.section_blocks(section) if b.text] == ["항목 | 금액", "인건비 | 300", "<표 1> 예산"]


def test_nested_tables_keep_their_cells_in_the_outer_row():
    inner = table(3, [["a", "b"], ["c", "d"]])
    outer = (ctrl(1, "tbl ") + rec(hwp.TAG_TABLE, 2, bytes(40))
             + cell(2, 0, 0, para(2, text(("ext", 11, "tbl ")), extra=inner))
             + cell(2, 1, 0, para(2, text("오른쪽"))))
    blocks = hwp.section_blocks(para(0, text(("ext", 11, "tbl ")), extra=outer))
    assert [b.text for b in blocks if b.text] == ["a | b c | d | 오른쪽"]


def test_outline_paragraph_shapes_make_headings():
    shapes = (rec(hwp.TAG_PARA_SHAPE, 1, struct.pack("<I", 0) + bytes(50))                # 0: body
              + rec(hwp.TAG_PARA_SHAPE, 1, struct.pack("<I", 1 << 23) + bytes(50))        # 1: 개요 1
              + rec(hwp.TAG_PARA_SHAPE, 1, struct.pack("<I", 1 << 23 | 2 << 25) + bytes(50))  # 2: 개요 3
              + rec(hwp.TAG_PARA_SHAPE, 1, struct.pack("<I", 2 << 23) + bytes(50)))       # 3: 번호, no heading
    outline = hwp._outline_shapes(rec(16, 0, bytes(26)) + shapes)
    assert outline == {1: 1, 2: 3}
    section = (para(0, text("사업 개요"), shape=1) + para(0, text("1. 번호 붙은 본문"), shape=3)
               + para(0, text("세부 사항"), shape=2) + para(0, text("내용이다."), shape=0))
    sections, headings = hwp.block_sections(hwp.section_blocks(section, outline), marked=True)
    assert headings == ["사업 개요", "세부 사항"]
    assert [(s.heading_path, s.text, s.marks) for s in sections] == [
        (("사업 개요",), "1. 번호 붙은 본문", ((0, Location("paragraph", 2, 2)),)),
        (("사업 개요", "세부 사항"), "내용이다.", ((0, Location("paragraph", 4, 4)),))]


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
    assert hwp.distribution_key(bytes(coded)) == key

    records = para(0, text("배포용 본문입니다")) + para(0, text(("ext", 11, "tbl ")), extra=table(1, [["가", "나"], ["다", "라"]]))
    squeeze = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = squeeze.compress(records) + squeeze.flush()
    packed += bytes(-len(packed) % 16)
    encrypt = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    stream = rec(hwp.TAG_DISTRIBUTE_DOC_DATA, 0, bytes(coded)) + encrypt.update(packed) + encrypt.finalize()
    body = hwp.inflate(hwp.decrypt_view_text(stream, "ViewText/Section0"), "ViewText/Section0")
    assert [b.text for b in hwp.section_blocks(body) if b.text] == ["배포용 본문입니다", "가 | 나", "다 | 라"]
    with pytest.raises(ReadError, match="no key record"):
        hwp.decrypt_view_text(stream[:100], "ViewText/Section0")


def test_summary_title_property():
    """\\x05HwpSummaryInformation as an OLE property set with PIDSI_TITLE (2) a VT_LPWSTR."""
    title = "보고서 제목".encode("utf-16-le") + b"\0\0"
    prop = struct.pack("<HHI", 0x1F, 0, len(title) // 2) + title
    section = struct.pack("<II", 8 + 16 + len(prop), 2) + struct.pack("<II", 1, 24) + struct.pack("<II", 2, 32)
    section += struct.pack("<HHI", 2, 0, 949)[:8] + prop    # PID 1 (code page) at 24, the title at 32
    header = struct.pack("<HHI16sI", 0xFFFE, 0, 0, bytes(16), 1) + bytes(16) + struct.pack("<I", 48)
    assert hwp.property_string(header + section, 2) == "보고서 제목"
    assert hwp.property_string(header + section, 5) == ""
