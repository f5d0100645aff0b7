"""Any embedding model a team already has as a sentence-transformers folder.

``encoder.name = "sentence-transformers:<folder>"`` loads the folder with
``SentenceTransformer`` on the CPU (the ``sentence-transformers`` extra; nothing is
downloaded). Queries and passages get the model's own prompts where its config names
them (``prompts`` with a ``query`` key, and ``passage`` or ``document``); otherwise
both are encoded as they are. Vectors are L2-normalised, so inner product is cosine
as for every chaja encoder. The encoder's name is ``<model identity>@sentence-transformers``
(:func:`chaja.encoders.model_folder.model_identity`), which a store records.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from chaja.encoders.base import l2_normalize
from chaja.encoders.model_folder import model_identity

QUERY_PROMPTS = ("query",)
PASSAGE_PROMPTS = ("passage", "document", "doc", "corpus")


class SentenceTransformersEncoder:
    def __init__(self, folder: str | Path, batch_size: int = 16, threads: int = 0):
        folder = Path(folder).expanduser()
        if not folder.is_dir():
            raise FileNotFoundError(f"encoder sentence-transformers:{folder}: no such model folder")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError("encoder sentence-transformers:<folder> needs the sentence-transformers extra: "
                              "pip install 'chaja[sentence-transformers]'") from exc
        if threads:
            import torch

            torch.set_num_threads(threads)
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()        # no weight-loading bar on every start
        try:
            self._model = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ValueError(f"encoder sentence-transformers:{folder}: not a model folder ({exc})") from None
        self.batch_size = batch_size
        dimension = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self.dim = int(dimension())
        self.name = f"{model_identity(folder)}@sentence-transformers"
        prompts = getattr(self._model, "prompts", None) or {}
        self._query_prompt = next((p for p in QUERY_PROMPTS if p in prompts), None)
        self._passage_prompt = next((p for p in PASSAGE_PROMPTS if p in prompts), None)

    def _encode(self, texts: list[str], prompt: str | None) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self._model.encode(list(texts), batch_size=self.batch_size, prompt_name=prompt,
                                  convert_to_numpy=True, show_progress_bar=False)
        return l2_normalize(vecs)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, self._query_prompt)

    def encode_passages(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, self._passage_prompt)
