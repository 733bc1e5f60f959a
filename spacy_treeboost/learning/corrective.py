"""Totally corrective boosting: the weights of the subtrees and thresholds boosting selected refitted at once by
regularized logistic loss (docs/algorithms.md §7.3), again as a `RuleSet` of stumps."""
import copy
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from .classifier import RuleClassifier
from .learner import BOOSTER_RULE, TreeBoostClassifier, default_booster
from .heads import HeadSettings, fit_heads
from .selection import SOLVER_CONSTRAINTS, make_path
from .sharded import held_shards
from ..models.rules import RuleSet
from ..params import Interval, Options, rule
from ..trees.forest import Forest

FEATURES = ("presence", "nb")
CORRECTIVE_CS = (0.1, 1.0, 10.0, 30.0, 100.0, 300.0, 1000.0)


def rule_features(rules: RuleSet, head: int, forest: Forest) -> Tuple[Any, List[Tuple[int, int]]]:
    """The CSR indicator features [count >= z] on `forest` of head's distinct (pattern, z) pairs in rule order, each
    presence (z = 1) first, and each column's (pattern id, z)."""
    from scipy.sparse import csc_matrix

    pids, zs, _, _ = rules.rule_arrays(head)
    keys = numpy.stack([numpy.repeat(pids, 2), numpy.stack([numpy.ones_like(zs), zs], axis=1).ravel()], axis=1)
    columns = keys[numpy.sort(numpy.unique(keys, axis=0, return_index=True)[1])]
    doc, pat, cnt = rules.match_counts(forest)
    X = csc_matrix((cnt, (doc, pat)), shape=(len(forest), rules.n_patterns))[:, columns[:, 0]]
    X.data = (X.data >= numpy.repeat(columns[:, 1], numpy.diff(X.indptr))).astype(numpy.float64)
    X.eliminate_zeros()
    return X.tocsr(), [(pid, z) for pid, z in columns.tolist()]


def weights_to_rules(rules: RuleSet, out: RuleSet, head: int, columns: Sequence[Tuple[int, int]],
                     w: numpy.ndarray, intercept: float) -> None:
    """Write a linear model over `rule_features` columns into head's rules in `out` (docs/algorithms.md §7.3)."""
    presence = {pid: float(wj) for (pid, z), wj in zip(columns, w) if z == 1}
    stumps: List[Tuple[float, Tuple[Any, int, float, float]]] = []
    bias = intercept / 2.0
    used = set()
    for (pid, z), wj in zip(columns, w):
        if z == 1:
            continue
        p = presence.get(pid, 0.0) if pid not in used else 0.0
        q = float(wj)
        if p == 0.0 and q == 0.0:
            continue
        used.add(pid)
        a, b = q / 4.0, -(p / 2.0 + q / 4.0)
        bias -= b
        stumps.append((abs(p) / 2 + abs(q) / 2, (rules.pattern(pid), z, a, b)))
    for pid, p in presence.items():
        if pid not in used and p != 0.0:
            stumps.append((abs(p) / 2, (rules.pattern(pid), 1, p / 2.0, 0.0)))
    stumps.sort(key=lambda item: -item[0])
    for _, (code, z, a, b) in stumps:
        out.add(head, code, z, a, b)
    out.intercepts[head] = bias


def corrective_rules(rules: RuleSet, forest: Forest, targets: Sequence[numpy.ndarray],
                     settings: Optional["CorrectiveBoostClassifier"] = None) -> Tuple[RuleSet, List[Dict[str, Any]]]:
    """Refit every head's rule weights jointly on the training trees (`targets`: each head's {-1, +1} labels) with
    the solver settings of `settings` (None: the defaults). RETURNS: the rules and, per head, the C chosen."""
    settings = CorrectiveBoostClassifier() if settings is None else settings
    out = rules.empty_copy()
    out.intercepts = [0.0] * len(rules.heads)
    info = []
    for h, y in enumerate(targets):
        X, columns = rule_features(rules, h, forest)
        if not columns:
            p = min(max(float((y > 0).mean()), 1e-6), 1 - 1e-6)
            out.intercepts[h] = 0.5 * float(numpy.log(p / (1 - p)))
            info.append({"head": rules.heads[h], "C": settings.C, "cv_accuracy": None, "features": 0})
            continue
        path = make_path(settings.features == "nb", settings.Cs if settings.C is None else [settings.C], 1.0, (1.0,))
        solver = HeadSettings(settings.cv, settings.l1_ratio, "logistic", settings.max_iter, settings.tol)
        with held_shards({"F": X}) as shards:
            fit = fit_heads(solver, shards, [y], [path])[0][0]
        weights_to_rules(rules, out, h, columns, fit.weights, fit.intercept)
        info.append({"head": rules.heads[h], "C": fit.C, "cv_accuracy": fit.cv_accuracy, "features": len(columns)})
    return out, info


class CorrectiveBoostClassifier(RuleClassifier):
    """Boosted subtree stumps whose weights are refitted jointly (totally corrective).

    estimator (Optional[TreeBoostClassifier]): The booster that selects the subtrees (copied); by default
        `default_booster()`.
    C (Optional[float]): Inverse L2 (or elastic-net) strength; None chooses it among `Cs` by cross-validation.
    Cs (Sequence[float]): Candidates for C.
    l1_ratio (float): Share of L1 in the penalty; > 0 drops weak rules.
    cv (int): Folds for choosing C.
    features (str): "presence" or "nb" (indicators scaled by naive Bayes log-count ratios).
    refit_every (int): 0 refits once, after boosting; k > 0 every k rounds, boosting on from the refitted margins.
    max_iter (int): Solver iterations.
    tol (float): Solver tolerance, relative to the gradient at zero weights.
    """

    _parameter_constraints = {
        "estimator": BOOSTER_RULE,
        "refit_every": rule(Interval("int", 0, None), hint=(
            "use 0 (refit once) or a whole number of rounds between refits")),
        "features": rule(Options(*FEATURES)),
        **{name: entry for name, entry in SOLVER_CONSTRAINTS.items() if name != "loss"},
    }

    def __init__(self, estimator: Optional[TreeBoostClassifier] = None, *, C: Optional[float] = None,
                 Cs: Sequence[float] = CORRECTIVE_CS, l1_ratio: float = 0.0, cv: int = 5, features: str = "presence",
                 refit_every: int = 0, max_iter: int = 1000, tol: float = 1e-3) -> None:
        self.estimator = estimator
        self.C = C
        self.Cs = Cs
        self.l1_ratio = l1_ratio
        self.cv = cv
        self.features = features
        self.refit_every = refit_every
        self.max_iter = max_iter
        self.tol = tol

    @property
    def positive_class(self) -> Any:
        return None if self.estimator is None else self.estimator.positive_class

    def fit(self, X: Forest, y: Sequence[Any]) -> "CorrectiveBoostClassifier":
        """Boost on X and y (one class, or a collection of classes, per tree), then refit the weights. RETURNS: self."""
        self.validate_params()
        params = (self.estimator or default_booster()).get_params(deep=False)
        booster = TreeBoostClassifier(**params)
        if not self.refit_every:
            return self.refit(booster.fit(X, y), X)
        booster.start(X, y)
        C = self.C
        while booster.n_rounds_ < params["n_rounds"]:
            before = booster.n_rounds_
            booster.boost(min(self.refit_every, params["n_rounds"] - before))
            last = booster.n_rounds_ >= params["n_rounds"] or booster.n_rounds_ == before
            self._refit_with(booster, X, self.C if last else C)
            chosen = [i["C"] for i in self.refit_info_ if i["C"] is not None]
            if C is None and chosen:
                C = max(chosen)
            if last:
                break
            F = self.rules_.margins(X)
            for h, head in enumerate(booster.heads_):
                head.scores = F[:, h].copy()
        return self

    def refit(self, booster: TreeBoostClassifier, X: Forest) -> "CorrectiveBoostClassifier":
        """Refit the rules of an already boosted classifier on its training trees X. RETURNS: self."""
        self.validate_params()
        return self._refit_with(booster, X, self.C)

    def _refit_with(self, booster: TreeBoostClassifier, X: Forest, C: Optional[float]) -> "CorrectiveBoostClassifier":
        booster._check_fitted()
        self.classes_, self.multilabel_, self.heads_ = booster.classes_, booster.multilabel_, booster.heads_
        self.n_rounds_ = booster.n_rounds_
        self.boosted_rules_ = booster.rules_
        settings = self if C == self.C else copy.copy(self).set_params(C=C)
        self.rules_, self.refit_info_ = corrective_rules(booster.rules_, X, [h.y for h in booster.heads_], settings)
        self.rules_.algorithm = f"{booster.rules_.algorithm}+corrective"
        return self
