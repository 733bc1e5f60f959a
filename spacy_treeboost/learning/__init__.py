"""The learners: scikit-learn estimators that fit a `RuleSet` on a `Forest` (docs/design.md), loaded on first use so
that a worker process starts without importing them."""
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
