"""Question files: JSON Lines, one question per line, in one of two forms.

Single gold (the production evaluation's sets)::

    {"id": "q1", "text": "useState 초기값", "lang": "ko", "kind": "ko-en", "gold": ["reference__react__useState"]}

``gold`` lists the documents that answer the question; scoring uses the best
ranked of them. ``lang`` defaults to the language detected from ``text``;
``kind`` defaults to ``""``.

Unanswerable (no document in the store answers it; for abstention)::

    {"id": "u1", "text": "Vue에서 computed 속성 정의", "kind": "unanswerable", "gold": []}

An empty ``gold`` is accepted only with ``"kind": "unanswerable"``, and that kind
only with an empty ``gold``; such a question is searched and recorded but enters
no retrieval metric.

Graded pool (the reranker evaluation's method)::

    {"id": "q2", "text": "...", "judgments": {"doc-a": 3, "doc-b": 0, "doc-c": "abstain"}}

Grades are integers 0–3 (2 and 3 count as useful). A document absent from
``judgments`` is not judged and scores as grade 0 when retrieved. The string
``"abstain"`` (:data:`ABSTAIN`) marks a pair the judge declined to grade: such a
document is left out of the ranking where it appears, without backfill.

Blank lines and lines starting with ``//`` are skipped. Any other field is kept
in :attr:`Question.extra` and written back unchanged. A malformed line raises
:class:`QuestionFileError` naming the file and line number.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from chaja.language import detect_language

ABSTAIN = "abstain"
UNANSWERABLE = "unanswerable"   # kind of a question whose answer is not in the store (gold = [])
MAX_GRADE = 3
USEFUL_GRADE = 2
_KNOWN = ("id", "text", "lang", "kind", "gold", "judgments")


class QuestionFileError(ValueError):
    """A question file line that cannot be read; the message starts with ``file:line:``."""


@dataclass
class Question:
    id: str
    text: str
    lang: str = ""
    kind: str = ""
    gold: list[str] | None = None
    judgments: dict[str, int | str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def unanswerable(self) -> bool:
        return self.kind == UNANSWERABLE

    @property
    def graded(self) -> bool:
        return self.judgments is not None

    def grade(self, doc_id: str) -> int | str | None:
        """The judged grade, :data:`ABSTAIN`, or None when not judged."""
        return None if self.judgments is None else self.judgments.get(doc_id)

    def useful(self) -> list[str]:
        """Documents with grade >= 2 (graded form) or the gold list (single-gold form)."""
        if self.judgments is None:
            return list(self.gold or [])
        return [d for d, g in self.judgments.items() if g != ABSTAIN and g >= USEFUL_GRADE]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "text": self.text, "lang": self.lang, "kind": self.kind}
        if self.gold is not None:
            out["gold"] = list(self.gold)
        if self.judgments is not None:
            out["judgments"] = dict(self.judgments)
        out.update(self.extra)
        return out


def _check_grade(doc: str, value: Any) -> int | str:
    if value == ABSTAIN:
        return ABSTAIN
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"judgment for {doc!r} must be an integer 0-{MAX_GRADE} or {ABSTAIN!r}, got {value!r}")
    if not 0 <= value <= MAX_GRADE:
        raise ValueError(f"judgment for {doc!r} must be between 0 and {MAX_GRADE}, got {value}")
    return value


def question_from_dict(obj: Any) -> Question:
    """Validate one decoded line; raises ValueError with a plain reason."""
    if not isinstance(obj, dict):
        raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
    qid = obj.get("id")
    if isinstance(qid, bool) or not isinstance(qid, (str, int)) or str(qid) == "":
        raise ValueError("missing or empty 'id' (a string)")
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("missing or empty 'text' (a string)")
    for key in ("lang", "kind"):
        if key in obj and not isinstance(obj[key], str):
            raise ValueError(f"'{key}' must be a string")
    has_gold, has_judg = "gold" in obj, "judgments" in obj
    if has_gold == has_judg:
        raise ValueError("a question needs exactly one of 'gold' (a list of document ids) "
                         "or 'judgments' (an object of document id -> grade)")
    if obj.get("kind") == UNANSWERABLE and obj.get("gold") != []:
        raise ValueError(f"a question of kind {UNANSWERABLE!r} needs \"gold\": [] (no document answers it)")
    gold = judgments = None
    if has_gold:
        gold = obj["gold"]
        if isinstance(gold, str):
            raise ValueError("'gold' must be a list of document ids, not a string")
        if not isinstance(gold, list):
            raise ValueError("'gold' must be a list of document ids")
        if not gold and obj.get("kind") != UNANSWERABLE:
            raise ValueError(f"'gold' must be a non-empty list of document ids "
                             f"(an empty list only with \"kind\": \"{UNANSWERABLE}\")")
        if not all(isinstance(g, str) and g for g in gold):
            raise ValueError("'gold' must hold non-empty strings")
        gold = list(dict.fromkeys(gold))
    else:
        raw = obj["judgments"]
        if not isinstance(raw, dict):
            raise ValueError("'judgments' must be an object of document id -> grade")
        judgments = {str(d): _check_grade(d, v) for d, v in raw.items()}
    return Question(
        id=str(qid), text=text, lang=obj.get("lang") or detect_language(text), kind=obj.get("kind", ""),
        gold=gold, judgments=judgments, extra={k: v for k, v in obj.items() if k not in _KNOWN},
    )


def parse_questions(lines: Iterable[str], source: str = "<questions>") -> list[Question]:
    out: list[Question] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        try:
            obj = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise QuestionFileError(f"{source}:{lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        try:
            q = question_from_dict(obj)
        except ValueError as exc:
            raise QuestionFileError(f"{source}:{lineno}: {exc}") from None
        if q.id in seen:
            raise QuestionFileError(f"{source}:{lineno}: duplicate id {q.id!r} (first on line {seen[q.id]})")
        seen[q.id] = lineno
        out.append(q)
    return out


def read_questions(path: str | Path) -> list[Question]:
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        return parse_questions(fh, str(path))


def write_questions(path: str | Path, questions: Iterable[Question]) -> int:
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for q in questions:
            fh.write(json.dumps(q.to_dict(), ensure_ascii=False) + "\n")
            n += 1
    return n
