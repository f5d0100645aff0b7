"""chaja (찾아, "find it"): hybrid search for Korean and English documents."""
__version__ = "0.1.0"
