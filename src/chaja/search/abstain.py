"""Abstention: answer "nothing relevant" instead of always returning the top k.

Top-k search always returns something, answer or not (the write-up kept a
question with no answer in its set to remember this). chaja abstains when both
signals are weak:

    abstain ⇔ top_cosine < abstain_below  ∧  keyword_coverage < abstain_coverage

``top_cosine`` is the best chunk's cosine similarity to the query;
``keyword_coverage`` the largest share of the query's terms that one of the top
keyword results holds. ``abstain_below = 0`` (the default) never abstains; the
threshold is chosen on a question set with unanswerable questions
(:mod:`chaja.eval.abstention`).
"""
from __future__ import annotations

from chaja.config import SearchConfig


def should_abstain(signals: dict[str, float], cfg: SearchConfig) -> bool:
    if cfg.abstain_below <= 0:
        return False
    return signals.get("top_cosine", 0.0) < cfg.abstain_below and \
        signals.get("keyword_coverage", 0.0) < cfg.abstain_coverage
