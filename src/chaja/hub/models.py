"""Request bodies of the hub's routes (pydantic models: validation and the OpenAPI
document come from these). Unknown fields are refused, numbers and booleans are
strict (``"k": true`` is an error), and text must be valid Unicode. :class:`Error`
and :class:`Invalid` are the error bodies, as the OpenAPI document describes them."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from chaja.documents import UNITS, storable_id
from chaja.search.searcher import MAX_QUERY_CHARS


def _unicode(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("not valid Unicode text (a lone surrogate)") from None
    return value


Text = Annotated[StrictStr, AfterValidator(_unicode)]
Name = Annotated[StrictStr, Field(max_length=1000), AfterValidator(_unicode)]
Date = Annotated[StrictStr, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Names = Name | Annotated[list[Name], Field(max_length=100)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FiltersIn(Strict):
    """Every condition set must hold; a list means any of its values (:mod:`chaja.filters`)."""
    lang: Names | None = None
    source: Names | None = None
    doc_type: Names | None = None
    date_from: Date | None = Field(None, description="ISO date, inclusive")
    date_to: Date | None = Field(None, description="ISO date, inclusive")
    doc_id_prefix: Annotated[Name, Field(min_length=1)] | None = None


Setting = StrictBool | StrictInt | StrictFloat | Text | dict[Name, StrictFloat | StrictInt]


class SearchIn(Strict):
    query: Annotated[Text, Field(min_length=1, max_length=MAX_QUERY_CHARS)]
    k: Annotated[StrictInt, Field(ge=1, le=1000)] | None = Field(None, description="results (default search.top_k)")
    filters: FiltersIn | None = None
    settings: Annotated[dict[Name, Setting], Field(max_length=50)] = Field(
        default_factory=dict, description="search settings for this request (those hub.request_settings allows)")
    explain: StrictBool = Field(False, description="add a line per result that says why it ranked")


def _storable_id(value: str) -> str:
    if not storable_id(value):
        raise ValueError("a document id must not be blank or hold a NUL character (no store can keep it whole)")
    return value


class MarkIn(Strict):
    """Where a unit of a section's text begins and which page, slide, row or paragraph it is."""
    offset: Annotated[StrictInt, Field(ge=0)] = Field(description="character offset in the section's text")
    unit: Literal[tuple(UNITS)]  # type: ignore[valid-type]   # chaja.documents.UNITS
    first: Annotated[StrictInt, Field(ge=1)]
    last: Annotated[StrictInt, Field(ge=1)]
    part: Name = Field("", description="the sheet a row belongs to")


class SectionIn(Strict):
    heading: Annotated[list[Name], Field(max_length=20)] = Field(default_factory=list, description="heading path")
    text: Annotated[Text, Field(max_length=10_000_000)]
    marks: Annotated[list[MarkIn], Field(max_length=100_000)] = Field(
        default_factory=list, description="where the text came from, so results cite it (sorted by offset)")


class DocumentIn(Strict):
    """A document as ``text`` (plain, or Markdown with ``format``) or as ready ``sections``."""
    id: Annotated[Name, Field(min_length=1), AfterValidator(_storable_id)] | None = Field(
        None, description="required unless derive_ids; no NUL character (PostgreSQL cannot store one)")
    title: Text = ""
    text: Annotated[Text, Field(max_length=10_000_000)] | None = None
    sections: Annotated[list[SectionIn], Field(max_length=10_000)] | None = None
    format: Literal["text", "plain", "markdown", "md"] = "text"
    path: Name | None = None
    lang: Name | None = None
    source: Name | None = None
    doc_type: Name | None = None
    date: Name | None = None


class DocumentsIn(Strict):
    documents: list[DocumentIn]
    derive_ids: StrictBool = Field(False, description="documents without an id get one from their content")


class PruneIn(Strict):
    keep: Annotated[list[Name], Field(max_length=1_000_000)] = Field(
        description="ids to keep; every other document is deleted")
    remove_all: StrictBool = Field(False, description="must be true when keep is empty")


class EmbeddingsIn(Strict):
    model: Name
    input: Text | list[Text]
    encoding_format: Literal["float", "base64"] = "float"
    dimensions: Annotated[StrictInt, Field(ge=1)] | None = None
    user: Name | None = None
    kind: Literal["query", "passage"] = Field("query", description="e5's query or passage form (chaja's own field)")


class RerankIn(Strict):
    """Cohere's and Jina's rerank request: the documents scored against the query."""
    model: Name | None = Field(None, description="the hub's reranker (its name or search.reranker), or \"chaja\"")
    query: Annotated[Text, Field(min_length=1, max_length=MAX_QUERY_CHARS)]
    documents: Annotated[list[Annotated[Text, Field(max_length=1_000_000)]], Field(min_length=1)] = Field(
        description="the passages to score (at most hub.max_inputs)")
    top_n: Annotated[StrictInt, Field(ge=1)] | None = Field(None, description="results returned (default all)")
    return_documents: StrictBool = Field(False, description="add each document's text to its result")


class GradeIn(Strict):
    """A judge's grade of one pair of a judging pool (:mod:`chaja.hub.judging`)."""
    grade: StrictInt | Text = Field(description="0-3, or \"abstain\" where the judge declines to grade the pair")


class RerankDocument(BaseModel):
    text: str


class RerankResult(BaseModel):
    index: int = Field(description="the document's place in the request")
    relevance_score: float = Field(description="the reranker's raw score, higher = more relevant")
    document: RerankDocument | None = None


class RerankOut(BaseModel):
    """The results sorted by score, highest first (equal scores keep the request's order)."""
    model: str
    results: list[RerankResult]


# ---- error bodies (the OpenAPI document's, not validated on the way out) -------------

class Error(BaseModel):
    """Every error but a 422 from validation: one sentence."""
    detail: str


class Problem(BaseModel):
    """One place where a request does not fit its schema (pydantic's error, less its URL)."""
    loc: list[str | int] = Field(description="where: body, query or path, then the fields")
    msg: str
    type: str
    input: Any = None
    ctx: dict[str, Any] | None = None


class Invalid(BaseModel):
    """422: a list of the places where the request does not fit its schema, or one
    sentence for a request that fits it and is still refused (a document without an id,
    the same id twice in a batch, an empty ``keep``, a file that could not be read)."""
    detail: str | list[Problem]


class Readiness(BaseModel):
    """``/readyz``: ready or not; the encoder and a start-up error only to a caller with a key."""
    status: Literal["ready", "loading", "failed"]
    encoder: str | None = Field(None, description="the readers' encoder (to a caller with a key)")
    detail: str | None = Field(None, description="why not ready")
    error: str | None = Field(None, description="why start-up failed (to a caller with a key)")
