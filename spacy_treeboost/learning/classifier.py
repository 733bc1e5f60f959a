"""What every learner shares: classes, heads (one for two exclusive classes, else one per class), a `RuleSet`, and
prediction from it: probabilities sigmoid(2F) per head, or softmax(2F) over exclusive classes."""
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy

from ..exceptions import NotFittedError
from ..params import Validated
from ..models.rules import RuleSet
from ..trees.forest import Forest

BINARY_POSITIVE = ("+1", "1")
NO_SUBTREE = ("The training trees contain no subtree to learn from (are the documents empty, or is min_support larger "
              "than the number of documents?).")


def _label_rank(strings: Sequence[str]) -> numpy.ndarray:
    order = sorted(range(len(strings)), key=strings.__getitem__)
    rank = numpy.empty(len(strings), dtype=numpy.int32)
    rank[order] = numpy.arange(len(strings), dtype=numpy.int32)
    return rank


def encode_targets(y: Sequence[Any],
                   positive: Callable[[List[Any]], Any]) -> Tuple[List[Any], bool, List[Any], List[numpy.ndarray]]:
    """Classes, whether the task is multi-label, and the heads with their {-1, +1} targets."""
    multilabel = bool(len(y)) and all(isinstance(v, (list, tuple, set, frozenset)) for v in y)
    if multilabel:
        classes = sorted({c for v in y for c in v}, key=str)
        if not classes:
            raise ValueError("No document has a label; multi-label training needs at least one labeled document.")
        sets = [set(v) for v in y]
        targets = [[c in s for s in sets] for c in classes]
        heads = list(classes)
    else:
        classes = sorted(set(y), key=str)
        if len(classes) < 2:
            raise ValueError(
                f"Training data has only one class ({classes[0]!r}); a classifier needs examples of at "
                "least two classes.")
        heads = [positive(classes)] if len(classes) == 2 else list(classes)
        targets = [[v == h for v in y] for h in heads]
    return classes, multilabel, heads, [numpy.where(numpy.asarray(t, dtype=bool), 1, -1).astype(numpy.int8)
                                        for t in targets]


class RuleClassifier(Validated):
    """What every learner of this package shares: classes, a `RuleSet` in `rules_`, and prediction.

    Subclasses set `classes_`, `multilabel_`, `heads_` (objects with a `name`) and `rules_` in `fit`.
    """

    _estimator_type = "classifier"
    classes_: List[Any]
    multilabel_: bool
    heads_: List[Any]
    rules_: RuleSet

    @property
    def positive_class(self) -> Optional[Any]:
        """For two classes, the one whose margin is positive; None chooses it from the classes."""
        return None

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags (called by scikit-learn only): a classifier of forests, not of arrays."""
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(estimator_type="classifier", target_tags=TargetTags(required=True),
                    classifier_tags=ClassifierTags(), input_tags=InputTags(two_d_array=False))

    def _positive(self, classes: List[Any]) -> Any:
        if self.positive_class is not None:
            if self.positive_class not in classes:
                raise ValueError(f"positive_class={self.positive_class!r} is not one of the classes {classes}")
            return self.positive_class
        for c in classes:
            if c is True or (not isinstance(c, bool) and str(c) in BINARY_POSITIVE):
                return c
        return classes[1]

    def fit(self, X: Forest, y: Sequence[Any]) -> "RuleClassifier":
        """Learn rules from X and y (one class, or a collection of classes, per document). RETURNS: self."""
        raise NotImplementedError

    def is_fitted(self) -> bool:
        """RETURNS (bool): Whether the classifier holds fitted rules (after `fit`, or loaded from a file)."""
        return hasattr(self, "rules_")

    def _check_fitted(self) -> None:
        if not self.is_fitted():
            raise NotFittedError(f"This {type(self).__name__} is not fitted yet; call fit first.")

    def decision_function(self, X: Forest) -> numpy.ndarray:
        """Margins: shape (n,) for two classes (positive means the positive class), else (n, n_classes)."""
        self._check_fitted()
        F = self.rules_.margins(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict_proba(self, X: Forest) -> numpy.ndarray:
        """Class probabilities in `classes_` order: sigmoid(2F) per head, softmax for exclusive classes."""
        return margins_to_proba(self.decision_function(X), self.classes_, self.heads_[0].name,
                                multilabel=self.multilabel_)

    def predict(self, X: Forest) -> List[Any]:
        return self.predict_from_margins(self.decision_function(X))

    def predict_from_margins(self, F: numpy.ndarray) -> List[Any]:
        """The predictions for margins returned by `decision_function`."""
        if self.multilabel_:
            return [[c for c, f in zip(self.classes_, row) if f > 0] for row in F]
        if F.ndim == 1:
            pos = self._positive(self.classes_)
            neg = [c for c in self.classes_ if c != pos][0]
            return [pos if f > 0 else neg for f in F]
        return [self.classes_[j] for j in F.argmax(axis=1)]

    def score(self, X: Forest, y: Sequence[Any]) -> float:
        """Accuracy on X (multi-label: the share of documents whose label set is exactly right)."""
        same = (lambda p, t: set(p) == set(t)) if self.multilabel_ else (lambda p, t: p == t)
        return float(numpy.mean([same(p, t) for p, t in zip(self.predict(X), y)]))


def margins_to_proba(F: numpy.ndarray, classes: Sequence[Any], positive: Any, *, multilabel: bool) -> numpy.ndarray:
    """Probabilities from margins: sigmoid(2F) for binary and multi-label, softmax(2F) for exclusive classes."""
    if F.ndim == 1 or multilabel:
        p = 1.0 / (1.0 + numpy.exp(-2.0 * F))
        return p if F.ndim == 2 else numpy.stack([p if str(c) == str(positive) else 1 - p for c in classes], axis=1)
    e = numpy.exp(2.0 * (F - F.max(axis=1, keepdims=True)))
    return e / e.sum(axis=1, keepdims=True)


def cats_from_margins(margins: numpy.ndarray, learner: RuleClassifier, labels: Sequence[str]) -> List[Dict[str, float]]:
    """Each doc's `cats`: every label's probability from the learner's margins (0 for a label it does not score)."""
    F = margins[:, 0] if margins.shape[1] == 1 and not learner.multilabel_ else margins
    proba = margins_to_proba(F, learner.classes_, learner.heads_[0].name, multilabel=learner.multilabel_)
    cols = {str(c): j for j, c in enumerate(learner.classes_)}
    return [{l: float(row[cols[l]]) if l in cols else 0.0 for l in labels} for row in proba]
