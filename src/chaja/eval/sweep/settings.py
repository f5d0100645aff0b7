"""The settings a sweep varies: each with its values and their labels, the default list,
and ``--only``/``--values`` applied to it."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Sequence

from chaja.config import Config

#: the PostgreSQL write-up's source weights and freshness half-lives
PRODUCTION_SOURCE_WEIGHTS = {"DART": 1.15, "ECOS": 1.15, "KRX": 1.15, "KIS": 1.10, "news": 1.00}
PRODUCTION_HALF_LIFE_DAYS = {"news": 14.0, "filing": 90.0, "financials": 180.0, "macro": 30.0}


@dataclass(frozen=True)
class Setting:
    key: str                                  # "search.rrf_k"
    values: tuple[Any, ...]
    needs: str = ""                           # "languages" | "sources" | "dates" | "headings"
    names: tuple[tuple[str, Any], ...] = ()   # labels for non-scalar values

    @property
    def short(self) -> str:
        return self.key.split(".", 1)[1] if self.key.startswith("search.") else self.key

    def label(self, value: Any) -> str:
        for name, v in self.names:
            if v == value:
                return name
        return value_label(value)


def _s(key: str, *values: Any, needs: str = "", names: tuple = ()) -> Setting:
    return Setting(f"search.{key}", tuple(values), needs, names)


DEFAULT_SETTINGS: tuple[Setting, ...] = (
    _s("fusion", "calibrated", "convex", "rrf"),
    _s("query_terms", "content", "all"),
    _s("rrf_k", 10.0, 20.0, 60.0),
    _s("candidates", 20, 60, 100),
    _s("gate", True, False),
    _s("title_weight", 1.0, 2.0, 5.0),
    _s("heading_weight", 1.0, 1.5, 3.0),
    _s("reserved_keyword_share", 0.0, 0.4),
    _s("title_path", False, True),
    _s("title_slot", False, True),
    _s("chunk_cap", 0, 1, 2),
    _s("heading_list", True, False, needs="headings"),
    _s("aligned_list", True, False, needs="languages"),
    _s("aligned_heading_list", True, False, needs="languages"),
    _s("language_margin", -2.0, -1.0, 0.0, needs="languages"),
    _s("language_softness", 0.25, 1.0, needs="languages"),
    _s("keyword_neutral_depth", 0, 5, 10, needs="languages"),
    _s("keyword_neutral_best", 0.0, 0.5, 1.0, needs="languages"),
    _s("keyword_hold", 0.0, 0.5, 1.0, needs="languages"),
    _s("keyword_floor", 0.0, 0.5, 1.0, needs="languages"),
    _s("keyword_share_power", 1.0, 1.5, 2.0),
    _s("background_prior", 0.0, 100.0, 500.0),
    _s("translated_keyword", 0.0, 2.0, 4.0, 8.0, needs="languages"),
    _s("translation_threshold", 0.6, 0.7, 0.8, needs="languages"),
    _s("feedback_weight", 0.0, 1.0, 2.0, needs="languages"),
    _s("feedback_depth", 1, 2, 5, needs="languages"),
    _s("feedback_limit", 0, 2, 5, needs="languages"),
    _s("other_language_keep", 1, 2, 5, needs="languages"),
    _s("other_language_yield", 0.0, 1.0, 2.0, 3.0, needs="languages"),
    _s("language_projection", False, True, needs="languages"),
    _s("language_centering", False, True, needs="languages"),
    _s("cross_language_keyword", False, True, needs="languages"),
    _s("multipart", False, True),
    _s("source_weights", {}, PRODUCTION_SOURCE_WEIGHTS, needs="sources",
       names=(("none", {}), ("production", PRODUCTION_SOURCE_WEIGHTS))),
    _s("half_life_days", {}, PRODUCTION_HALF_LIFE_DAYS, needs="dates",
       names=(("none", {}), ("production", PRODUCTION_HALF_LIFE_DAYS))),
)


def value_label(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, dict) and not value:
        return "none"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return str(value)


def full_key(key: str) -> str:
    """``rrf_k`` or ``search.rrf_k`` → ``search.rrf_k``; only search settings can vary on one store."""
    key = key.strip()
    dotted = key if "." in key else f"search.{key}"
    section, _, name = dotted.partition(".")
    if section in ("index", "encoder"):
        raise ValueError(f"{dotted} is fixed when the store is built; index another store with it "
                         "and compare it with --variant SETTING=VALUE=STORE")
    if section != "search" or name not in Config().to_dict()["search"]:
        names = sorted(Config().to_dict()["search"])
        raise ValueError(f"unknown setting {key!r}; search settings are {', '.join(names)}")
    return dotted


def parse_values(spec: str) -> Setting:
    """``KEY=V1,V2,...`` (scalars) or ``KEY=[json, ...]`` → a :class:`Setting` with coerced values."""
    if "=" not in spec:
        raise ValueError(f"--values expects SETTING=V1,V2,..., got {spec!r}")
    key, _, raw = spec.partition("=")
    dotted = full_key(key)
    raw = raw.strip()
    if raw.startswith("["):
        try:
            items = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ValueError(f"--values {key}: not a JSON list ({exc.msg})") from None
    else:
        items = [x.strip() for x in raw.split(",") if x.strip()]
    if not items:
        raise ValueError(f"--values {key}: no values")
    values = []
    for item in items:
        cfg = Config()
        cfg.set(dotted, item if isinstance(item, str) else json.dumps(item))
        values.append(config_value(cfg, dotted))
    return Setting(dotted, tuple(_dedupe(values)))


def freeze(v: Any) -> Any:
    """``v`` in a form that compares and hashes by value (a dict or list as sorted JSON)."""
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v


def _dedupe(values: Sequence[Any]) -> list[Any]:
    seen, out = set(), []
    for v in values:
        k = freeze(v)
        if k not in seen:
            seen.add(k)
            out.append(v)
    return out


def config_value(cfg: Config, dotted: str) -> Any:
    """The value of ``section.name`` in ``cfg``."""
    section, _, name = dotted.partition(".")
    return getattr(getattr(cfg, section), name)


def select_settings(only: Sequence[str] | None = None, values: Sequence[str] | None = None,
                    defaults: Sequence[Setting] = DEFAULT_SETTINGS) -> list[Setting]:
    """The default list, with ``values`` replacing (or adding) settings, restricted to ``only``."""
    settings = {s.key: s for s in defaults}
    for spec in values or []:
        s = parse_values(spec)
        old = settings.get(s.key)
        settings[s.key] = Setting(s.key, s.values, old.needs if old else "", old.names if old else ())
    if only:
        keys = [full_key(k) for k in only]
        missing = [k for k in keys if k not in settings]
        if missing:
            raise ValueError(f"no values for {', '.join(missing)}: give them with --values KEY=V1,V2")
        return [settings[k] for k in dict.fromkeys(keys)]
    return list(settings.values())
