"""spacy-treeboost: interpretable subtree-boosting text classifiers for spaCy.

The import is deliberately light: spaCy imports every plugin's factories each
time a `Language` is created, so heavy modules load on first use. A type
checker reads the imports below; at run time `__getattr__` performs them.
"""
from importlib import import_module
from typing import TYPE_CHECKING, Any

from .exceptions import InvalidSettingError, NotFittedError

if TYPE_CHECKING:
    from .datasets.corpora import CorpusFormatError
    from .datasets.readers import CorpusReadError
    from .files import ModelFormatError
    from .learning.calibration import CalibratedBoostClassifier
    from .learning.corrective import CorrectiveBoostClassifier
    from .learning.learner import TreeBoostClassifier
    from .learning.subtree_linear import SubtreeLinearClassifier
    from .models.rules import RuleSet
    from .nmtf.factorization import MFLK
    from .nmtf.hybrid import SSMFLKNaiveBayes
    from .nmtf.lexicons import Lexicon, LexiconFormatError
    from .nmtf.hybrid import SSMFLKSelfTrained
    from .nmtf.factorization import SSMFLK
    from .pipeline.nmtf_sentiment import NMTFSentiment
    from .pipeline.treeboost_textcat import TreeBoostTextCategorizer
    from .streaming import PipelineBatchClassifier
    from .trees.bact import BactFormatError, iter_bact, read_bact, write_bact
    from .trees.doc_trees import TreeSpec, docs_to_forest
    from .trees.forest import Forest, LabelVocab

__version__ = "0.1.0"

_LAZY = {
    "Forest": "spacy_treeboost.trees.forest",
    "LabelVocab": "spacy_treeboost.trees.forest",
    "iter_bact": "spacy_treeboost.trees.bact",
    "read_bact": "spacy_treeboost.trees.bact",
    "write_bact": "spacy_treeboost.trees.bact",
    "BactFormatError": "spacy_treeboost.trees.bact",
    "TreeSpec": "spacy_treeboost.trees.doc_trees",
    "docs_to_forest": "spacy_treeboost.trees.doc_trees",
    "RuleSet": "spacy_treeboost.models.rules",
    "ModelFormatError": "spacy_treeboost.files",
    "TreeBoostClassifier": "spacy_treeboost.learning.learner",
    "SubtreeLinearClassifier": "spacy_treeboost.learning.subtree_linear",
    "CorrectiveBoostClassifier": "spacy_treeboost.learning.corrective",
    "CalibratedBoostClassifier": "spacy_treeboost.learning.calibration",
    "MFLK": "spacy_treeboost.nmtf.factorization",
    "SSMFLK": "spacy_treeboost.nmtf.factorization",
    "SSMFLKNaiveBayes": "spacy_treeboost.nmtf.hybrid",
    "SSMFLKSelfTrained": "spacy_treeboost.nmtf.hybrid",
    "Lexicon": "spacy_treeboost.nmtf.lexicons",
    "LexiconFormatError": "spacy_treeboost.nmtf.lexicons",
    "TreeBoostTextCategorizer": "spacy_treeboost.pipeline.treeboost_textcat",
    "NMTFSentiment": "spacy_treeboost.pipeline.nmtf_sentiment",
    "PipelineBatchClassifier": "spacy_treeboost.streaming",
    "CorpusFormatError": "spacy_treeboost.datasets.corpora",
    "CorpusReadError": "spacy_treeboost.datasets.readers",
}

__all__ = ["__version__", "InvalidSettingError", "NotFittedError", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'spacy_treeboost' has no attribute {name!r}")
