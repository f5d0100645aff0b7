"""Plain data that flows through chaja: documents, chunks and search hits.

A :class:`Document` is what a loader produces; :func:`chaja.chunking.chunk_document`
turns it into :class:`Chunk` objects, the unit that is indexed and retrieved.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


#: the units a location counts in, with their one and many labels ("p. 3", "pp. 3–4")
UNITS = {"page": ("p.", "pp."), "slide": ("slide", "slides"), "row": ("row", "rows"),
         "paragraph": ("¶", "¶¶")}


@dataclass(frozen=True, slots=True)
class Location:
    """Where a piece of text sits in its file, so a result can cite it: a ``unit``
    (``page``, ``slide``, ``row``, ``paragraph``), the ``first`` and ``last`` of them it
    covers (1-based, as a reader of the file would count them) and ``part``, the sheet
    a row belongs to (``""`` elsewhere)."""

    unit: str
    first: int
    last: int
    part: str = ""

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"location unit must be one of {', '.join(UNITS)}, not {self.unit!r}")
        if not 0 < self.first <= self.last:
            raise ValueError(f"location range {self.first}..{self.last} is not 1 <= first <= last")

    def merge(self, other: "Location") -> "Location":
        """The smallest location that covers both; ``self`` where they count different things."""
        if (other.unit, other.part) != (self.unit, self.part):
            return self
        return Location(self.unit, min(self.first, other.first), max(self.last, other.last), self.part)

    @property
    def label(self) -> str:
        """``p. 12``, ``pp. 3–4``, ``slide 5``, ``sheet 'Prices', rows 2–41``, ``¶ 7``."""
        one, many = UNITS[self.unit]
        at = f"{one} {self.first}" if self.first == self.last else f"{many} {self.first}–{self.last}"
        return f"sheet {self.part!r}, {at}" if self.part else at

    def as_dict(self) -> dict:
        return {"unit": self.unit, "first": self.first, "last": self.last, "part": self.part, "label": self.label}

    def encode(self) -> str:
        """The compact form the stores keep: ``page:3:4`` (``row:2:41:Prices`` with a part)."""
        return ":".join((self.unit, str(self.first), str(self.last))) + (f":{self.part}" if self.part else "")

    @classmethod
    def decode(cls, value: str | None) -> "Location | None":
        if not value:
            return None
        unit, first, last, *part = value.split(":", 3)
        return cls(unit, int(first), int(last), part[0] if part else "")


def storable_id(doc_id: str) -> bool:
    """Whether every store can keep ``doc_id`` whole: not blank, no NUL (PostgreSQL
    cannot store one, and would make ``a\\x00b`` the same document as ``ab``)."""
    return bool(doc_id.strip()) and "\x00" not in doc_id


def source_file(path: str) -> str:
    """The file a document's ``path`` names: ``docs.jsonl:3`` (a JSON Lines record's
    path, file and line) is ``docs.jsonl``."""
    head, _, tail = path.rpartition(":")
    return head if head and tail.isdigit() else path


def locate(marks: tuple[tuple[int, Location], ...], start: int, end: int) -> Location | None:
    """The location of ``text[start:end]`` in a section whose units begin at the
    ``marks`` offsets (sorted): the merge of every unit the span touches."""
    out: Location | None = None
    end = max(end, start + 1)
    for i, (at, loc) in enumerate(marks):
        if at >= end:
            break
        upto = marks[i + 1][0] if i + 1 < len(marks) else None
        if upto is None or upto > start:        # the unit [at, upto) overlaps [start, end)
            out = loc if out is None else out.merge(loc)
    return out if out is not None or not marks else marks[0][1]


@dataclass(frozen=True)
class Section:
    """A run of body text under one heading path (empty path = before any heading).

    ``marks`` say where the text came from: ``(offset, Location)`` pairs, sorted by
    offset, each unit (a page, slide, row or paragraph) starting at its offset in
    ``text``; a chunk cut from the section cites every unit it touches
    (:func:`locate`). A section with one mark at 0 lies wholly in that location."""

    heading_path: tuple[str, ...]
    text: str
    marks: tuple[tuple[int, Location], ...] = ()

    def __post_init__(self) -> None:
        offsets = [at for at, _ in self.marks]
        if offsets != sorted(offsets) or (offsets and not (0 <= offsets[0] and offsets[-1] <= len(self.text))):
            raise ValueError("a section's marks must be sorted by offset and lie inside its text")


@dataclass
class Document:
    """One source document.

    ``date`` is an ISO date (``YYYY-MM-DD``) or ``None``; ``lang`` is ``"ko"``,
    ``"en"`` or another code, detected from the text when the loader is not told
    (``lang_detected``; its chunks may then differ: :func:`chaja.chunking.chunk_language`).
    """

    id: str
    title: str
    sections: list[Section]
    lang: str = ""
    source: str = ""
    doc_type: str = ""
    date: str | None = None
    path: str = ""
    lang_detected: bool = False

    @property
    def text(self) -> str:
        return "\n\n".join(s.text for s in self.sections)

    def fingerprint(self) -> str:
        """Content hash: re-indexing skips a document whose fingerprint is unchanged."""
        # every part ends in NUL, hashed as one string (the digest of the parts fed one by one)
        parts = [self.title, self.lang, self.source, self.doc_type, self.date or ""]
        for s in self.sections:
            parts += ("\x1f".join(s.heading_path), s.text)
            if s.marks:    # only where a reader gave them: older stores' fingerprints stay
                parts.append(";".join(f"{at}={loc.encode()}" for at, loc in s.marks))
        parts.append("")
        return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


@dataclass
class Chunk:
    """A bounded piece of one document, with the context needed to show and rank it."""

    id: str
    doc_id: str
    ordinal: int
    title: str
    heading_path: tuple[str, ...]
    text: str
    lang: str = ""
    source: str = ""
    doc_type: str = ""
    date: str | None = None
    location: Location | None = None    # where in its file the chunk came from (a PDF page, ...)

    @property
    def heading(self) -> str:
        return " > ".join(self.heading_path)

    @property
    def section_name(self) -> str:
        """Title and heading path, ``useState > Parameters``."""
        return " > ".join(p for p in (self.title, *self.heading_path) if p)

    def passage_text(self) -> str:
        """What the encoder sees: the section name and the body, one per line."""
        head = self.section_name
        return f"{head}\n{self.text}" if head else self.text

    def heading_passage(self) -> str | None:
        """What the heading vector encodes: the section name alone; None for a chunk
        before the first heading, which gets no heading vector (a title alone is the
        same for every such chunk)."""
        return self.section_name if any(h.strip() for h in self.heading_path) else None

    def aligned_name(self) -> str | None:
        """What the aligned section-name vector encodes: the section name, which is the
        title alone for a chunk before any heading; None when there is neither."""
        return self.section_name.strip() or None


@dataclass
class ChunkRecord:
    """A chunk ready to store: its analysed terms per field, its vector and, when
    it has a heading and the index keeps heading vectors, its heading's vector; with
    an aligned encoder (:mod:`chaja.encoders.aligned`), that encoder's vectors of the
    passage and of its section name."""

    chunk: Chunk
    title_terms: list[str]
    heading_terms: list[str]
    body_terms: list[str]
    vector: "np.ndarray"
    heading_vector: "np.ndarray | None" = None
    aligned_vector: "np.ndarray | None" = None          # the aligned encoder's vector of the passage
    aligned_heading_vector: "np.ndarray | None" = None  # ... and of the section name (or title)
    #: the built-in analyser (by name) whose output the terms are, of the chunk's title, heading
    #: path and text, so that a store may derive them again rather than keep them
    #: (:mod:`chaja.stores.derived_terms`); None: terms made any other way, kept as given
    terms_from: str | None = None


@dataclass(frozen=True)
class Hit:
    """One candidate from one retrieval path: a chunk id and the path's raw score."""

    chunk_id: str
    score: float


@dataclass(frozen=True)
class DocumentInfo:
    """What a store keeps of one document besides its chunks."""

    id: str
    title: str
    lang: str
    source: str
    doc_type: str
    date: str | None
    path: str
    fingerprint: str
    chunks: int

    @property
    def chunk_ids(self) -> list[str]:
        return [f"{self.id}#{i}" for i in range(self.chunks)]


def doc_id_of(chunk_id: str) -> str:
    """The document of a chunk, from its id (``<doc id>#<n>``; a document id may hold ``#``)."""
    return chunk_id.rpartition("#")[0]


@dataclass
class StoreStats:
    documents: int
    chunks: int
    by_lang: dict[str, int] = field(default_factory=dict)
    by_source: dict[str, int] = field(default_factory=dict)
    by_doc_type: dict[str, int] = field(default_factory=dict)
    size_bytes: int = 0
