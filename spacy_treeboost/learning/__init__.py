"""The learners: scikit-learn estimators that fit a `RuleSet` on a `Forest` of labeled ordered trees (the layering
is described in docs/design.md). The names below load on first use, so that a search worker process, which needs
`backends`, `tasks` and the compiled miner alone, starts without importing the learners.
"""
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .classifier import RuleClassifier
    from .corrective import CorrectiveBoostClassifier
    from .learner import TreeBoostClassifier, default_booster
    from .shard_files import TreeShards
    from .subtree_linear import SubtreeLinearClassifier

_LAZY = {
    "CorrectiveBoostClassifier": "corrective",
    "RuleClassifier": "classifier",
    "SubtreeLinearClassifier": "subtree_linear",
    "TreeBoostClassifier": "learner",
    "TreeShards": "shard_files",
    "default_booster": "learner",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
