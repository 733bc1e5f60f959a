"""The command line `python -m spacy_treeboost`: learn, classify and rules on BACT files (`bact`), and convert,
apply, explain, report and init-config on spaCy pipelines and corpora (`pipelines`)."""
from . import bact, pipelines  # noqa: F401 (registers the commands, in this order)
from .bact import learner_block
from .common import app, main
from .pipelines import init_config

__all__ = ["app", "init_config", "learner_block", "main"]
