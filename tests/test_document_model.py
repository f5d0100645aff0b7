"""The document model's content hash."""
from __future__ import annotations

import hashlib

from chaja.documents import Document, Location, Section


def _fed_part_by_part(doc: Document) -> str:
    """The digest as stores written before kept it: each part fed to SHA-256 on its own,
    each followed by a NUL byte."""
    h = hashlib.sha256()
    for part in (doc.title, doc.lang, doc.source, doc.doc_type, doc.date or ""):
        h.update(part.encode("utf-8") + b"\x00")
    for s in doc.sections:
        h.update("\x1f".join(s.heading_path).encode("utf-8") + b"\x00")
        h.update(s.text.encode("utf-8") + b"\x00")
        if s.marks:
            h.update(";".join(f"{at}={loc.encode()}" for at, loc in s.marks).encode("utf-8") + b"\x00")
    return h.hexdigest()


def test_fingerprint_is_the_digest_stores_already_hold():
    docs = [
        Document("a", "제목 Title", [Section(("장", "절"), "본문 text"), Section((), "둘째")], lang="ko",
                 source="DART", doc_type="filing", date="2026-01-02"),
        Document("b", "", []),
        Document("c", "pages", [Section(("p",), "one\ntwo", ((0, Location("page", 1, 1)),
                                                              (4, Location("page", 2, 3)))),
                                Section((), "")]),
    ]
    for doc in docs:
        assert doc.fingerprint() == _fed_part_by_part(doc)


def test_fingerprint_changes_with_each_part():
    base = Document("a", "t", [Section(("h",), "x")], lang="en", source="s", doc_type="d", date="2026-01-01")
    changed = [Document("a", "u", base.sections, "en", "s", "d", "2026-01-01"),
               Document("a", "t", [Section(("h",), "y")], "en", "s", "d", "2026-01-01"),
               Document("a", "t", [Section(("g",), "x")], "en", "s", "d", "2026-01-01"),
               Document("a", "t", [Section((), "hx")], "en", "s", "d", "2026-01-01"),
               Document("a", "t", base.sections, "en", "s", "d", None),
               Document("a", "t", [Section(("h",), "x", ((0, Location("page", 1, 1)),))], "en", "s", "d",
                        "2026-01-01")]
    assert len({d.fingerprint() for d in changed} | {base.fingerprint()}) == len(changed) + 1
