import pytest

from chaja.chunking import chunk_document, split_text
from chaja.documents import Document, Section


def test_every_chunk_keeps_its_context():
    doc = Document(id="d", title="T", lang="ko", source="DART",
                   sections=[Section((), "intro"), Section(("A", "B"), "body")])
    chunks = chunk_document(doc)
    assert [(c.id, c.heading_path, c.title, c.lang, c.source) for c in chunks] == [
        ("d#0", (), "T", "ko", "DART"), ("d#1", ("A", "B"), "T", "ko", "DART")]
    assert chunks[1].passage_text() == "T > A > B\nbody"


def test_long_sections_split_at_natural_breaks_within_bound():
    paras = [f"문단 {i}입니다. " + "가나다라 " * 40 for i in range(10)]
    pieces = split_text("\n\n".join(paras), 500)
    assert all(len(p) <= 500 for p in pieces)
    assert len(pieces) > 1
    assert "".join(pieces).replace("\n", "").replace(" ", "") == "".join(paras).replace(" ", "")


def test_unbreakable_text_is_cut_hard():
    pieces = split_text("x" * 1000, 300)
    assert [len(p) for p in pieces] == [300, 300, 300, 100]


def test_title_only_document_gets_one_chunk():
    assert len(chunk_document(Document(id="e", title="Only a title", sections=[]))) == 1


def test_tiny_bound_rejected():
    with pytest.raises(ValueError):
        chunk_document(Document(id="e", title="t", sections=[]), 10)


def test_a_chunk_cites_every_page_its_text_touches():
    from chaja.documents import Location, locate
    from chaja.readers.base import located_section

    pages = [(Location("page", n, n), f"page {n} " + "word " * 20) for n in (3, 4, 5)]
    section = located_section(("Costs",), pages)
    doc = Document(id="r", title="Report", sections=[section])
    chunks = chunk_document(doc, max_chars=400)
    assert len(chunks) > 1 and any(c.location.first < c.location.last for c in chunks)
    for c in chunks:
        numbers = {int(w) for w in c.text.split() if w.isdigit()}
        assert (c.location.first, c.location.last) == (min(numbers), max(numbers))
    whole = chunk_document(doc, max_chars=5000)     # two short pages fill a chunk; the third starts one
    assert [c.location.label for c in whole] == ["pp. 3–4", "p. 5"]
    assert locate(section.marks, 0, 1) == Location("page", 3, 3)


def test_rows_of_one_sheet_merge_into_a_range():
    from chaja.documents import Location

    a, b = Location("row", 2, 2, "Prices"), Location("row", 41, 41, "Prices")
    assert a.merge(b).label == "sheet 'Prices', rows 2–41"
    assert a.merge(Location("row", 5, 5, "Other")) == a
    assert Location.decode(a.merge(b).encode()) == a.merge(b)
    assert Location.decode("row:2:41:단가: 2024") == Location("row", 2, 41, "단가: 2024")


def test_a_long_enough_chunk_ends_where_a_page_ends():
    from chaja.documents import Location
    from chaja.readers.base import located_section

    long_pages = [(Location("page", n, n), f"page {n} " + "word " * 50) for n in (1, 2, 3)]
    doc = Document(id="r", title="Report", sections=[located_section((), long_pages)])
    assert [c.location.label for c in chunk_document(doc, max_chars=1200)] == ["p. 1", "p. 2", "p. 3"]
    short_pages = [(Location("page", n, n), f"page {n} " + "word " * 3) for n in (1, 2, 3)]
    doc = Document(id="r", title="Report", sections=[located_section((), short_pages)])
    assert [c.location.label for c in chunk_document(doc, max_chars=1200)] == ["pp. 1–3"]


def test_a_section_refuses_marks_out_of_order_or_past_its_text():
    from chaja.documents import Location

    p1, p2 = Location("page", 1, 1), Location("page", 2, 2)
    assert Section((), "abcdef", ((0, p1), (3, p2))).marks[1][0] == 3
    for bad in (((3, p1), (0, p2)), ((0, p1), (7, p2))):
        with pytest.raises(ValueError, match="sorted by offset"):
            Section((), "abcdef", bad)
