"""chaja (찾아, "find it"): hybrid search for Korean and English documents.

Keyword search with Korean as two-syllable pairs, vector search from a bundled
multilingual embedding model, fused by Reciprocal Rank Fusion; an evaluation
harness that tells a real difference from noise.
"""
__version__ = "0.1.0"
__all__ = ["Client", "Config", "Chunk", "Document", "Section", "Index", "open",
           "ChunkResult", "DocumentResult", "SearchResult"]

_WHERE = {"Client": "chaja.client", "Config": "chaja.config", "Chunk": "chaja.documents",
          "Document": "chaja.documents", "Section": "chaja.documents", "Index": "chaja.index",
          "open": "chaja.index", "ChunkResult": "chaja.search.results",
          "DocumentResult": "chaja.search.results", "SearchResult": "chaja.search.results"}


def __getattr__(name: str):
    """The package's names, imported when first asked for (so the ``chaja`` command can
    ask a resident search process before loading NumPy and the models)."""
    if name in _WHERE:
        import importlib

        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'chaja' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])
