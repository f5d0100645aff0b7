"""Evaluation harness: question sets, scoring, noise tests, runs and reports.

One idea per module:

* :mod:`~chaja.eval.questions` — question files (single gold and graded pools)
* :mod:`~chaja.eval.trec` — TREC qrels and runs
* :mod:`~chaja.eval.canonical` — the production evaluation's canonical heading questions (react-docs)
* :mod:`~chaja.eval.lint` — hand-written set lint (three shared content words)
* :mod:`~chaja.eval.beir`, :mod:`~chaja.eval.squad` — public benchmark loaders
* :mod:`~chaja.eval.single` — single-gold metrics (R@k, MRR, nDCG@10)
* :mod:`~chaja.eval.graded` — graded-pool metrics (reranker evaluation)
* :mod:`~chaja.eval.random_order` — exact random-order reference
* :mod:`~chaja.eval.noise` — paired bootstrap CI and randomization test
* :mod:`~chaja.eval.runner`, :mod:`~chaja.eval.report` — run a set, write and recompute summaries
* :mod:`~chaja.eval.figures` — comparison figures (SVG built in, PNG via matplotlib)
* :mod:`~chaja.eval.sweep` — every search setting measured against the default
* :mod:`~chaja.eval.abstention` — the no-answer threshold from saved records
* :mod:`~chaja.eval.cli` — ``chaja eval`` commands

Public data sets are read from ``../shared/data`` (or ``$CHAJA_DATA_DIR``), never copied.
"""
from chaja.eval.questions import ABSTAIN, Question, QuestionFileError, read_questions, write_questions
from chaja.eval.report import report
from chaja.eval.runner import evaluate

__all__ = ["ABSTAIN", "Question", "QuestionFileError", "read_questions", "write_questions", "evaluate", "report"]
