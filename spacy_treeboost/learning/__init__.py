"""The learners: scikit-learn estimators that fit a `RuleSet` on a `Forest` of labeled ordered trees.

`learner` (TreeBoostClassifier: BACT, +FQ/-FQ boosting), `subtree_linear` (SubtreeLinearClassifier, the
default), `corrective` (CorrectiveBoostClassifier: boosted rules refitted jointly), `calibration`
(CalibratedBoostClassifier); beside them `classifier` (the contract they share), `logistic` (the linear
solver), `_mine` (the compiled subtree miner), `backends` and `execution` (where the search runs) and
`classifier_files` (fitted learners as data).
"""
from .calibration import CalibratedBoostClassifier
from .classifier import RuleClassifier
from .corrective import CorrectiveBoostClassifier
from .learner import TreeBoostClassifier, default_booster
from .subtree_linear import SubtreeLinearClassifier

__all__ = ["CalibratedBoostClassifier", "CorrectiveBoostClassifier", "RuleClassifier", "SubtreeLinearClassifier",
           "TreeBoostClassifier", "default_booster"]
