"""Tiny cross-encoders for the rerank tests: randomly initialised BERT models with a
word-piece vocabulary trained here, saved as a transformers / sentence-transformers
folder, and exported to ONNX beside it. The reference scores are the model's own
transformers forward pass."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

TEXTS = [
    "상태 관리는 어떻게 하나요", "How do I manage state in React?", "useEffect 훅은 언제 실행되나요",
    "The warranty lasts two years from the date of purchase.", "보증 기간은 구입일로부터 2년입니다.",
    "자기주식 소각 결정 공시", "Descale the espresso machine every month.", "식기세척기 배수 펌프가 막혔을 때",
]


def tokenizer(max_positions: int = 64):
    """A word-piece tokenizer trained on :data:`TEXTS`, as a transformers fast tokenizer."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(TEXTS * 5, trainers.WordPieceTrainer(
        vocab_size=300, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]", model_max_length=max_positions,
                                   model_input_names=["input_ids", "token_type_ids", "attention_mask"])


def build(folder: Path, *, labels: int = 1, seed: int = 0, max_positions: int = 64) -> Path:
    """Write a tiny cross-encoder to ``folder`` (config, weights, tokenizer, model.onnx)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    fast = tokenizer(max_positions)
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(fast), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=max_positions, num_labels=labels)
    model = BertForSequenceClassification(cfg).eval()
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    sample = fast([("상태 관리", "How do I manage state")], return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    with warnings.catch_warnings():     # the tracer's notes on shapes it treats as constants
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(sample[n] for n in names), str(folder / "model.onnx"), input_names=names,
                          output_names=["logits"], dynamo=False,
                          dynamic_axes={**{n: {0: "batch", 1: "tokens"} for n in names}, "logits": {0: "batch"}})
    return folder


def reference_logits(folder: Path, pairs: list[tuple[str, str]], max_length: int) -> np.ndarray:
    """The model's logits for ``pairs`` by transformers itself (one pair at a time, no padding)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForSequenceClassification.from_pretrained(folder).eval()
    rows = []
    with torch.no_grad():
        for q, p in pairs:
            enc = tokenizer(q, p, truncation="longest_first", max_length=max_length, return_tensors="pt")
            rows.append(model(**enc).logits[0].numpy())
    return np.asarray(rows, dtype=np.float64)
