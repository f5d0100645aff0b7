"""The background distribution of a vector list's cosines, for calibrated fusion.

A cosine says little on its own: multilingual-e5 puts almost every passage
between 0.7 and 0.9 of almost every query, and one query's best match may sit
at 0.82 while another's unrelated pages sit there too. What is comparable
across queries and across lists is how far a score stands above the store as a
whole: for query q and the stored unit vectors v of one field,

    z(v) = (q·v − μ_q) / σ_q,   μ_q = q·m,   σ_q² = qᵀ Σ q,

with m the mean and Σ the covariance of the stored vectors (the whole d × d
matrix: a low-rank Σ with an isotropic rest, probabilistic PCA, overstates σ_q
by 10–30% for e5 queries, whose mass falls where passages vary least). The
statistics are estimated at index time from the store's vectors (at most
``SAMPLE`` of them, chosen by a hash of the chunk id the same way in every store)
and kept in the store (``index.vector_background``), so every search of the
same documents calibrates the same way, in SQLite and PostgreSQL.
"""
from __future__ import annotations

import base64
import json
from collections.abc import Callable

import numpy as np

from chaja import __version__, meta_arrays
from chaja.search.decoded_by_digest import DecodedByDigest
from chaja.stores.base import VECTOR_FIELDS

META_KEY = "index.vector_background"
SAMPLE = 50_000       # stored vectors read to estimate the statistics
MIN_VECTORS = 2       # fewer stored vectors than this: no background for that field
RULES = 1             # raised whenever :func:`fit` changes: statistics fit before are fit again


def fit(mat: np.ndarray) -> dict | None:
    """Count, mean and covariance of the rows of ``mat`` (None below MIN_VECTORS rows).

    The mean is summed in float64, the covariance's product taken in float32 (one BLAS
    call, a quarter of float64's time on 50,000 × 512; σ_q within 1e-5 of float64's)."""
    mat = np.asarray(mat, dtype=np.float32)
    if mat.ndim != 2 or mat.shape[0] < MIN_VECTORS:
        return None
    mean = mat.mean(axis=0, dtype=np.float64).astype(np.float32)
    centred = mat - mean
    return {"n": int(mat.shape[0]), "mean": mean, "cov": centred.T @ centred / np.float32(mat.shape[0])}


FIELDS = VECTOR_FIELDS


def of_store(store) -> dict[str, dict | None]:
    """The statistics of every vector field a store holds (from a sample of SAMPLE vectors)."""
    return {field: fit(store.vector_sample(SAMPLE, field=field)) for field in FIELDS}


def sample_key(store) -> str | None:
    """What :func:`of_store` fits, where the store can say it without decoding a vector
    (``vector_sample_fingerprint``: each field's sample in its stored form), with the
    fitting rules and chaja's version; None where it cannot. On a store larger than the
    sample, an index run that writes no sampled chunk keeps the key: the same rows give the
    same statistics, and reading and fitting them was most of an index run's statistics
    at a million chunks."""
    fingerprint = getattr(store, "vector_sample_fingerprint", None)
    if fingerprint is None:
        return None
    return json.dumps({"fields": {field: fingerprint(SAMPLE, field=field) for field in FIELDS},
                       "rules": [RULES, SAMPLE, MIN_VECTORS, __version__]})


def moments(stats: dict, q: np.ndarray) -> tuple[float, float]:
    """(μ_q, σ_q) of the cosines of query ``q`` against the stored vectors."""
    q = np.asarray(q, dtype=np.float32).ravel()
    return float(stats["mean"] @ q), max(float(q @ stats["cov"] @ q), 1e-12) ** 0.5


def _b64(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype=np.float32).tobytes()).decode("ascii")


def _unb64(text: str, shape: tuple[int, ...]) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=np.float32).reshape(shape).copy()


def encode(stats: dict[str, dict | None], binary: bool = False) -> str | bytes:
    """The statistics for the store's meta: JSON with the arrays in base64, or with
    ``binary`` one packed value (:mod:`chaja.meta_arrays`), for a store that keeps bytes."""
    kept = {field: s for field, s in sorted(stats.items()) if s is not None}
    if binary:
        return meta_arrays.pack({f: {"n": s["n"]} for f, s in kept.items()},      # (the shapes are the arrays')
                                {f"{f}.{part}": np.asarray(s[part], dtype="<f4") for f, s in kept.items()
                                 for part in ("mean", "cov")})
    return json.dumps({field: {"n": s["n"], "dim": int(s["mean"].size), "mean": _b64(s["mean"]), "cov": _b64(s["cov"])}
                       for field, s in kept.items()})


def decode(text: str | bytes | None, then: Callable[[dict[str, dict]], dict[str, dict]] | None = None,
           salt: str = "") -> dict[str, dict]:
    """The statistics :func:`encode` wrote, in either form (the arrays are shared between callers: read only;
    the last few decoded kept by a digest of their text, :mod:`chaja.search.decoded_by_digest`).
    With ``then``, ``then(statistics)`` is kept in their place, under ``salt`` (what else it
    depends on): a searcher keeps the statistics blended with the encoder's prior, and no
    second copy of the decoded arrays (3.1 MB a store of four fields)."""
    if not text:
        return {}
    if then is None:
        return _DECODED.get(text, _decoded)
    return _DECODED.get(text, lambda t: then(_decoded(t)), salt=salt)


_DECODED: DecodedByDigest[dict[str, dict]] = DecodedByDigest(keep=4)


def is_current(value: str | bytes | None) -> bool:
    """Whether a stored value is statistics in a form this version reads: text, or packed as
    :func:`encode` packs them today (bytes of another form are recounted by the next index run)."""
    return isinstance(value, str) or meta_arrays.is_packed(value)


def _decoded(text: str | bytes) -> dict[str, dict]:
    if not isinstance(text, str):
        if not meta_arrays.is_packed(text):
            return {}           # another version's bytes: none until the next index run recounts them
        meta, arrays = meta_arrays.unpack(text)
        return {f: {"n": s["n"], "mean": arrays[f"{f}.mean"], "cov": arrays[f"{f}.cov"]} for f, s in meta.items()}
    out = {}
    for field, s in json.loads(text).items():
        mean, cov = _unb64(s["mean"], (s["dim"],)), _unb64(s["cov"], (s["dim"], s["dim"]))
        mean.flags.writeable = cov.flags.writeable = False
        out[field] = {"n": s["n"], "mean": mean, "cov": cov}
    return out
