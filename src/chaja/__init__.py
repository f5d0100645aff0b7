"""chaja (찾아, "find it"): hybrid search for Korean and English documents.

Keyword search with Korean as two-syllable pairs, vector search from a bundled
multilingual embedding model, fused by Reciprocal Rank Fusion; an evaluation
harness that tells a real difference from noise.
"""
from chaja.client import Client
from chaja.config import Config
from chaja.documents import Chunk, Document, Section
from chaja.index import Index, open
from chaja.search.results import ChunkResult, DocumentResult, SearchResult

__version__ = "0.1.0"
__all__ = ["Client", "Config", "Chunk", "Document", "Section", "Index", "open",
           "ChunkResult", "DocumentResult", "SearchResult"]
