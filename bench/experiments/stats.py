"""Metrics and McNemar's test.

Predictions are encoded as arrays: single-label tasks as class indices (n,), multi-label
tasks as 0/1 indicator matrices (n, n_classes). Metrics come from scikit-learn; the
McNemar test is the exact binomial test on the discordant pairs (scipy.stats.binomtest),
two-sided.
"""
from typing import Any, Dict, List, Sequence

import numpy


def metrics(y_true: numpy.ndarray, y_pred: numpy.ndarray, classes: Sequence[str], multilabel: bool) -> Dict[str, Any]:
    """accuracy (exact match for multi-label), F1 of each class, macro and micro F1."""
    from sklearn.metrics import accuracy_score, f1_score

    labels = list(range(len(classes)))
    if multilabel:
        per = f1_score(y_true, y_pred, average=None, zero_division=0)
        macro = f1_score(y_true, y_pred, average="macro", zero_division=0)
        micro = f1_score(y_true, y_pred, average="micro", zero_division=0)
    else:
        per = f1_score(y_true, y_pred, labels=labels, average=None, zero_division=0)
        macro = f1_score(y_true, y_pred, labels=labels, average="macro", zero_division=0)
        micro = f1_score(y_true, y_pred, labels=labels, average="micro", zero_division=0)
    return {
        "n": int(len(y_true)),
        "accuracy": float(accuracy_score(y_true, y_pred)),
        "f1": {c: float(f) for c, f in zip(classes, per)},
        "macro_f1": float(macro),
        "micro_f1": float(micro),
    }


def selection_score(y_true: numpy.ndarray, y_pred: numpy.ndarray, multilabel: bool) -> float:
    """The dev score that chooses settings: accuracy, or micro F1 for multi-label tasks."""
    if multilabel:
        tp = float(numpy.sum((y_true == 1) & (y_pred == 1)))
        fp = float(numpy.sum((y_true == 0) & (y_pred == 1)))
        fn = float(numpy.sum((y_true == 1) & (y_pred == 0)))
        return 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return float(numpy.mean(y_true == y_pred))


def correctness(y_true: numpy.ndarray, y_pred: numpy.ndarray) -> numpy.ndarray:
    """Per decision, whether it is right: documents (single label) or (document, class) pairs (multi-label)."""
    return (numpy.asarray(y_true) == numpy.asarray(y_pred)).ravel()


def mcnemar(correct_a: numpy.ndarray, correct_b: numpy.ndarray) -> Dict[str, Any]:
    """Exact McNemar test on paired decisions: b = A right and B wrong, c = A wrong and B right."""
    from scipy.stats import binomtest

    a = numpy.asarray(correct_a, dtype=bool)
    b = numpy.asarray(correct_b, dtype=bool)
    if a.shape != b.shape:
        raise ValueError("McNemar's test needs the same decisions from both systems")
    n10 = int(numpy.sum(a & ~b))
    n01 = int(numpy.sum(~a & b))
    p = 1.0 if n10 + n01 == 0 else float(binomtest(n10, n10 + n01, 0.5).pvalue)
    return {"a_only": n10, "b_only": n01, "n": int(a.size), "p": p,
            "acc_a": float(a.mean()) if a.size else 0.0, "acc_b": float(b.mean()) if b.size else 0.0}


def mean_std(values: List[float]) -> Dict[str, float]:
    v = numpy.asarray(values, dtype=float)
    return {"mean": float(v.mean()) if len(v) else float("nan"),
            "std": float(v.std(ddof=1)) if len(v) > 1 else 0.0}
