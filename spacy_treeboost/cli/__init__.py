"""Command line: the classic learn / classify / rules workflow on BACT files, and corpus conversion.

    python -m spacy_treeboost learn TRAIN MODEL [--algorithm ...]
    python -m spacy_treeboost classify TEST MODEL
    python -m spacy_treeboost rules MODEL
    python -m spacy_treeboost convert INPUT.jsonl OUTPUT.spacy [--model en_core_web_sm]
    python -m spacy_treeboost apply MODEL INPUT.jsonl OUTPUT.jsonl [--n-workers N] [--backend processes|ray]
    python -m spacy_treeboost init-config OUTPUT.cfg [--multilabel] [--lang en]
    python -m spacy_treeboost explain PIPELINE --text "..." [--label L] --output view.html
    python -m spacy_treeboost report PIPELINE [--data dev.spacy] --output report.html
"""
from . import bact, pipelines  # noqa: F401 (registers the commands, in this order)
from .bact import learner_block
from .common import app, main
from .pipelines import init_config

__all__ = ["app", "init_config", "learner_block", "main"]
