"""A tiny embedding model for the encoder tests: a randomly initialised BERT with mean
pooling, saved as a sentence-transformers folder (what a team's own model folder holds)."""
from __future__ import annotations

from pathlib import Path

from cross_encoders import tokenizer


def build(folder: Path, *, seed: int = 0, hidden: int = 32, prompts: dict[str, str] | None = None) -> Path:
    """Write the model to ``folder``; ``prompts`` become its query/passage prompts."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel

    try:
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:                 # sentence-transformers before 6
        from sentence_transformers import models

    fast = tokenizer(64)
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(fast), hidden_size=hidden, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=64)
    raw = folder.with_name(folder.name + "-bert")
    BertModel(cfg).eval().save_pretrained(raw)
    fast.save_pretrained(raw)
    word = models.Transformer(str(raw), max_seq_length=64)
    width = getattr(word, "get_embedding_dimension", None) or word.get_word_embedding_dimension
    pool = models.Pooling(width(), pooling_mode="mean")
    SentenceTransformer(modules=[word, pool], device="cpu", prompts=prompts or {}).save(str(folder))
    return folder
