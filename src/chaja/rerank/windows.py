"""A reranker from the encoder chaja already ships (``e5-windows``): no download.

No multilingual cross-encoder ships inside a package, so this one is built from the
bi-encoder: a candidate's text is cut into windows of about ``rerank.window_chars``
characters (:func:`chaja.chunking.split_text`: paragraph, line and sentence breaks),
each window is encoded as a passage with the candidate's title and heading path in
front, and the candidate scores

    s(q, c) = max_w cos(e(q), e(path(c) + w))

(max-similarity over windows, as in passage-level evidence for document ranking: Dai &
Callan, "Deeper Text Understanding for IR with Contextual Neural Language Modeling",
SIGIR 2019, which scores a document by its best passage). A long chunk's own vector
averages every topic in it; its best window is what a specific question matches.
It costs one encoder pass per window at query time (``docs/rerank.md`` has the
latency and what the harness found).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chaja.chunking import split_text
from chaja.encoders.base import Encoder
from chaja.rerank.base import check_scores


class WindowReranker:
    def __init__(self, encoder: Encoder, *, window_chars: int = 300, batch_size: int = 16):
        self.encoder, self.window_chars, self.batch_size = encoder, int(window_chars), max(1, int(batch_size))
        self.name = f"e5-windows:{window_chars}@{encoder.name}"

    def windows(self, passage: str) -> list[str]:
        """The windows of a passage (as :func:`chaja.rerank.base.passage_text` builds it:
        its first line the title and heading path, kept in front of every window)."""
        path, newline, text = passage.partition("\n")
        if not newline:
            path, text = "", passage
        pieces = split_text(text, self.window_chars) or [text]
        return [f"{path}\n{w}" if path else w for w in pieces]

    def score(self, query: str, passages: Sequence[str]) -> np.ndarray:
        if not passages:
            return np.zeros(0)
        q = np.asarray(self.encoder.encode_queries([query])[0], dtype=np.float32)
        owner: list[int] = []
        texts: list[str] = []
        for i, p in enumerate(passages):
            for w in self.windows(p):
                owner.append(i)
                texts.append(w)
        cos = np.concatenate([np.asarray(self.encoder.encode_passages(texts[at:at + self.batch_size]), np.float32) @ q
                              for at in range(0, len(texts), self.batch_size)])
        best = np.full(len(passages), -np.inf)
        np.maximum.at(best, np.asarray(owner), cos.astype(np.float64))
        return check_scores(best, len(passages), self.name)
