"""spacy-treeboost: interpretable subtree-boosting text classifiers for spaCy.

The import is deliberately light: spaCy imports every plugin's factories each
time a `Language` is created, so heavy modules load on first use.
"""
from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "Forest": "spacy_treeboost.trees.forest",
    "LabelVocab": "spacy_treeboost.trees.forest",
    "read_bact": "spacy_treeboost.trees.bact",
    "write_bact": "spacy_treeboost.trees.bact",
    "TreeBoostClassifier": "spacy_treeboost.learning.learner",
    "SubtreeLinearClassifier": "spacy_treeboost.learning.subtree_linear",
    "CorrectiveBoostClassifier": "spacy_treeboost.learning.corrective",
    "CalibratedBoostClassifier": "spacy_treeboost.learning.calibration",
    "RuleSet": "spacy_treeboost.models.rules",
    "TreeSpec": "spacy_treeboost.trees.doc_trees",
    "docs_to_forest": "spacy_treeboost.trees.doc_trees",
    "MFLK": "spacy_treeboost.nmtf",
    "SSMFLK": "spacy_treeboost.nmtf",
    "SSMFLKNaiveBayes": "spacy_treeboost.nmtf",
    "SSMFLKSelfTrained": "spacy_treeboost.nmtf",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'spacy_treeboost' has no attribute {name!r}")
