"""Classifier files: a fitted learner as plain data (`classifier_to_dict`) and as a sealed, checksummed
msgpack file (`classifier_to_bytes`), and back."""
from typing import Any, Dict, List, Optional

import numpy

from ..models.rules import ModelFormatError, RuleSet
from .classifier import RuleClassifier
from .learner import EXECUTION_PARAMS, TreeBoostClassifier, _Head


CLASSIFIER_FORMAT = "spacy-treeboost.classifier"
CLASSIFIER_FILE_VERSION = 1
# settings that earlier versions stored and this one no longer has; they do not change how the rules predict
REMOVED_PARAMS = ("separate_views", "shard_documents")


def _estimators() -> Dict[str, Any]:
    from .corrective import CorrectiveBoostClassifier
    from .subtree_linear import SubtreeLinearClassifier

    return {"TreeBoostClassifier": TreeBoostClassifier, "CorrectiveBoostClassifier": CorrectiveBoostClassifier,
            "SubtreeLinearClassifier": SubtreeLinearClassifier}


def _plain_params(clf: RuleClassifier) -> Dict[str, Any]:
    params = {k: v for k, v in clf.get_params(deep=False).items() if k not in EXECUTION_PARAMS}
    for key, value in params.items():
        if isinstance(value, RuleClassifier):
            params[key] = _plain_params(value)
        elif isinstance(value, tuple):
            params[key] = list(value)
    if params.get("positive_class") is not None:
        params["positive_class"] = _plain_class(params["positive_class"])
    return params


def _plain_class(c: Any) -> Any:
    """A class label as stored: whole numbers and booleans keep their type, anything else is a string."""
    if isinstance(c, (bool, numpy.bool_)):
        return bool(c)
    if isinstance(c, (int, numpy.integer)):
        return int(c)
    return str(c)


def classifier_to_dict(clf: RuleClassifier) -> Dict[str, Any]:
    """The fitted classifier as plain data (parameters, classes, rules; "estimator" names a learner not boosting)."""
    clf._check_fitted()
    data = {"format": CLASSIFIER_FORMAT, "version": 1, "params": _plain_params(clf),
            "classes": [_plain_class(c) for c in clf.classes_], "multilabel": clf.multilabel_,
            "n_rounds": getattr(clf, "n_rounds_", 0), "rules": clf.rules_.to_dict()}
    if not isinstance(clf, TreeBoostClassifier):
        data["estimator"] = type(clf).__name__
    return data


def classifier_from_dict(data: Any) -> RuleClassifier:
    """A classifier for prediction from `classifier_to_dict`'s data or an unpacked sealed file (checksum verified)."""
    from ..files import PAYLOAD_KEY, open_seal

    if isinstance(data, dict) and data.get("format") == CLASSIFIER_FORMAT and PAYLOAD_KEY in data:
        data = open_seal(data, CLASSIFIER_FORMAT, CLASSIFIER_FILE_VERSION, error=ModelFormatError,
                         what="classifier file")
    if not isinstance(data, dict) or data.get("format") != CLASSIFIER_FORMAT:
        raise ModelFormatError("This is not a spacy-treeboost classifier file (its format marker is missing).")
    if data.get("version") != 1:
        raise ModelFormatError(
            f"Classifier file format version {data.get('version')!r} is not supported (this spacy-treeboost reads "
            "version 1); retrain the model or install the spacy-treeboost that wrote it.")
    kinds = _estimators()
    kind = data.get("estimator", "TreeBoostClassifier")
    if kind not in kinds:
        raise ModelFormatError(f"The classifier file names an unknown learner {kind!r}; it may come from a newer "
                               "spacy-treeboost.")
    try:
        params = dict(data["params"])
        for name in REMOVED_PARAMS:
            params.pop(name, None)
        if isinstance(params.get("estimator"), dict):
            params["estimator"] = TreeBoostClassifier(**params["estimator"])
        clf = kinds[kind](**params)
        clf.classes_ = list(data["classes"])
        if not all(isinstance(c, (str, int, bool)) for c in clf.classes_):
            raise ModelFormatError("The classifier file's classes must be strings, whole numbers or booleans.")
        clf.multilabel_ = bool(data["multilabel"])
        clf.n_rounds_ = int(data["n_rounds"])
        clf.rules_ = RuleSet.from_dict(data["rules"])
    except (KeyError, TypeError, ValueError) as err:
        if isinstance(err, ModelFormatError):
            raise
        raise ModelFormatError(f"The classifier file is corrupt: {err!r}") from None
    _check_classes_and_heads(clf)
    clf.heads_ = [_Head(h, numpy.zeros(0)) for h in clf.rules_.heads]
    return clf


def _check_classes_and_heads(clf: RuleClassifier) -> None:
    """Refuse classes and heads that do not fit together."""
    classes, multilabel, heads = clf.classes_, clf.multilabel_, clf.rules_.heads
    names = [str(c) for c in classes]
    if len(set(names)) != len(names):
        raise ModelFormatError(f"The classifier file lists a class twice: {names}; the file is damaged.")
    try:
        expected: Optional[List[str]] = [str(clf._positive(classes))] if len(names) == 2 and not multilabel else names
    except ValueError:
        expected = None
    if heads != expected or len(names) < (1 if multilabel else 2):
        raise ModelFormatError(
            f"The classifier file's classes {names} (multilabel={multilabel}) do not fit its rule heads {heads}: "
            "two classes need one head naming the positive class, more classes one head per class in order. The "
            "file is damaged or was edited; retrain the model.")


def classifier_to_bytes(clf: RuleClassifier) -> bytes:
    """The content of a classifier file: `classifier_to_dict` sealed with a SHA-256 checksum (format version 1)."""
    from ..files import seal

    return seal(classifier_to_dict(clf), CLASSIFIER_FORMAT, CLASSIFIER_FILE_VERSION)


def classifier_from_bytes(data: bytes) -> RuleClassifier:
    """Load a classifier file after its checksum is verified; a `ModelFormatError` for a damaged or foreign one."""
    from ..files import unseal

    return classifier_from_dict(unseal(data, CLASSIFIER_FORMAT, CLASSIFIER_FILE_VERSION, error=ModelFormatError,
                                       what="classifier file"))
