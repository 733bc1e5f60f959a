"""Calibrated probabilities for boosted rule lists: Platt scaling on out-of-fold margins (docs/algorithms.md §7.4),
folded into the rule list's scale."""
from typing import Any, List, Optional, Sequence

import numpy

from .classifier import RuleClassifier
from .learner import BOOSTER_RULE, TreeBoostClassifier
from .selection import platt, stratified_folds
from ..models.rules import RuleSet
from ..params import Interval, rule
from ..trees.forest import Forest


def scaled_rules(rules: RuleSet, scales: Sequence[float], offsets: Sequence[float]) -> RuleSet:
    """A copy of `rules` whose head h scores (scales[h] * F + offsets[h]) / 2 for a margin F."""
    out = rules.empty_copy()
    for h in range(len(rules.heads)):
        s = float(scales[h])
        for code, z, a, b in rules.rules(h):
            out.add(h, code, z, a * s / 2.0, b * s / 2.0)
        out.intercepts[h] = (rules.intercepts[h] * s + float(offsets[h])) / 2.0
    return out


class CalibratedBoostClassifier(RuleClassifier):
    """A boosted rule list with probabilities calibrated by cross-validation.

    estimator (Optional[TreeBoostClassifier]): The booster (copied); by default `TreeBoostClassifier()`.
    cv (int): Folds whose held-out margins fit the calibration.
    """

    _parameter_constraints = {
        "estimator": BOOSTER_RULE,
        "cv": rule(Interval("int", 2, 20), hint="use a whole number of folds from 2 to 20"),
    }

    def __init__(self, estimator: Optional[TreeBoostClassifier] = None, *, cv: int = 5) -> None:
        self.estimator = estimator
        self.cv = cv

    @property
    def positive_class(self) -> Any:
        return None if self.estimator is None else self.estimator.positive_class

    def fit(self, X: Forest, y: Sequence[Any]) -> "CalibratedBoostClassifier":
        """Boost on X, boost on every fold, fit the calibration. RETURNS: self."""
        self.validate_params()
        params = (self.estimator or TreeBoostClassifier()).get_params(deep=False)
        booster = TreeBoostClassifier(**params).fit(X, y)
        targets = [h.y for h in booster.heads_]
        folds = stratified_folds(targets[0], self.cv)
        oof = numpy.zeros((len(X), len(targets)))
        for k in range(self.cv):
            held, train = numpy.flatnonzero(folds == k), numpy.flatnonzero(folds != k)
            if not len(held):
                continue
            part = TreeBoostClassifier(**{**params, "n_rounds": booster.n_rounds_})
            part.fit(X.subset(train), [y[i] for i in train.tolist()])
            F = part.rules_.margins(X.subset(held))
            names = part.rules_.heads
            for h, head in enumerate(booster.heads_):
                if head.name in names:
                    oof[held, h] = F[:, names.index(head.name)]
        self.scales_: List[float] = []
        self.offsets_: List[float] = []
        for h, t in enumerate(targets):
            a, b = platt(oof[:, h], t)
            self.scales_.append(max(a, 0.0))
            self.offsets_.append(b)
        self.classes_, self.multilabel_, self.heads_ = booster.classes_, booster.multilabel_, booster.heads_
        self.n_rounds_ = booster.n_rounds_
        self.boosted_rules_ = booster.rules_
        self.rules_ = scaled_rules(booster.rules_, self.scales_, self.offsets_)
        self.rules_.algorithm = f"{booster.rules_.algorithm}+calibrated"
        return self
