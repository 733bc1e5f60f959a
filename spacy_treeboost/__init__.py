"""spacy-treeboost: interpretable subtree-boosting text classifiers for spaCy. spaCy imports every plugin's
factories whenever a `Language` is created, so the names below are imported on first use (`__getattr__`)."""
from importlib import import_module
from typing import TYPE_CHECKING, Any

from .exceptions import InvalidSettingError, NotFittedError

if TYPE_CHECKING:
    from .datasets.jsonl import CorpusFormatError
    from .datasets.readers import CorpusReadError
    from .files import ModelFormatError
    from .learning.corrective import CorrectiveBoostClassifier
    from .learning.learner import TreeBoostClassifier
    from .learning.subtree_linear import SubtreeLinearClassifier
    from .models.rules import RuleSet
    from .nmtf.factorization import MFLK, SSMFLK
    from .nmtf.hybrid import SSMFLKNaiveBayes, SSMFLKSelfTrained
    from .nmtf.lexicons import Lexicon, LexiconFormatError
    from .pipeline.nmtf_sentiment import NMTFSentiment
    from .pipeline.treeboost_textcat import TreeBoostTextCategorizer
    from .trees.bact import BactFormatError, iter_bact, read_bact, write_bact
    from .trees.doc_trees import TreeSpec, docs_to_forest
    from .trees.forest import Forest, LabelVocab

__version__ = "0.1.0"

_MODULES = {
    "trees.forest": ("Forest", "LabelVocab"),
    "trees.bact": ("iter_bact", "read_bact", "write_bact", "BactFormatError"),
    "trees.doc_trees": ("TreeSpec", "docs_to_forest"),
    "models.rules": ("RuleSet",),
    "files": ("ModelFormatError",),
    "learning.learner": ("TreeBoostClassifier",),
    "learning.subtree_linear": ("SubtreeLinearClassifier",),
    "learning.corrective": ("CorrectiveBoostClassifier",),
    "nmtf.factorization": ("MFLK", "SSMFLK"),
    "nmtf.hybrid": ("SSMFLKNaiveBayes", "SSMFLKSelfTrained"),
    "nmtf.lexicons": ("Lexicon", "LexiconFormatError"),
    "pipeline.treeboost_textcat": ("TreeBoostTextCategorizer",),
    "pipeline.nmtf_sentiment": ("NMTFSentiment",),
    "datasets.jsonl": ("CorpusFormatError",),
    "datasets.readers": ("CorpusReadError",),
}
_LAZY = {name: f"spacy_treeboost.{module}" for module, names in _MODULES.items() for name in names}

__all__ = ["__version__", "InvalidSettingError", "NotFittedError", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'spacy_treeboost' has no attribute {name!r}")
