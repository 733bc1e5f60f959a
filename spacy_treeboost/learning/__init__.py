"""The learners: scikit-learn estimators that fit a `RuleSet` on a `Forest` of labeled ordered trees.

`learner` (TreeBoostClassifier: BACT, +FQ/-FQ boosting), `subtree_linear` (SubtreeLinearClassifier, the
default), `corrective` (CorrectiveBoostClassifier: boosted rules refitted jointly), `calibration`
(CalibratedBoostClassifier); beside them `classifier` (the contract they share), `features`, `solver`,
`selection` and `sharded` (the linear models' feature maps, solvers, model selection and fits over document shards,
the whole matrices being one; `products`, their threaded sparse products), `_mine` (the compiled subtree miner),
`backends` (the boosting search's workers), `tasks` (where work runs: in this process, local processes or Ray
actors), `shard_files` and `shard_merge` (the default learner trained from shard files that its workers read: TreeShards) and
`classifier_files` (fitted learners as data).

The names below load on first use, so that a search worker process, which needs `backends`, `tasks` and `_mine`
alone, starts without importing the learners.
"""
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .calibration import CalibratedBoostClassifier
    from .classifier import RuleClassifier
    from .corrective import CorrectiveBoostClassifier
    from .learner import TreeBoostClassifier, default_booster
    from .shard_files import TreeShards
    from .subtree_linear import SubtreeLinearClassifier

_LAZY = {
    "CalibratedBoostClassifier": "calibration",
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
