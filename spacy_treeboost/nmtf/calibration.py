"""Probabilities from the NMTF models' scores, and measures of their quality (log-loss, expected calibration error).

`Calibration` maps a score (`decision_function`, > 0 leaning positive) to P(positive) = sigmoid(a * score + b):
with labelled documents of both classes a and b are Platt's (`learning.selection.platt`, with his smoothed
targets); otherwise a temperature, a = 1 / sd(score) and b = 0. Probabilities stay within [1e-12, 1 - 1e-12].
"""
from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional

import numpy as np

from ..learning.selection import platt, stratified_folds
from .common import NEGATIVE, POSITIVE

P_MIN = 1e-12
METHODS = ("platt", "temperature")


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return np.exp(-np.logaddexp(0.0, -z))


class Calibration(NamedTuple):
    """P(positive) = sigmoid(slope * score + intercept), and how slope and intercept were found."""

    slope: float
    intercept: float
    method: str

    @classmethod
    def fit(cls, score: np.ndarray, y: Optional[np.ndarray], rows: Optional[np.ndarray] = None) -> "Calibration":
        """Platt scaling on the labelled documents, or the temperature 1 / sd(score) without labels of both classes.

        score (numpy.ndarray): The training documents' scores, shape (n,); > 0 leans positive.
        y (Optional[numpy.ndarray]): 0 (positive), 1 (negative) or -1 (unlabelled) per document, or None.
        rows (Optional[numpy.ndarray]): Mask of the documents whose labels may be used (default: all).
        RETURNS (Calibration): The fitted mapping.
        """
        score = np.asarray(score, dtype=np.float64)
        if not np.isfinite(score).all():
            raise ValueError("Cannot calibrate: some scores are not finite.")
        labelled = np.zeros(len(score), dtype=bool)
        if y is not None:
            y = np.asarray(y)
            labelled = (y == POSITIVE) | (y == NEGATIVE)
            if rows is not None:
                labelled &= np.asarray(rows, dtype=bool)
        if y is not None and labelled.any() and (y[labelled] == POSITIVE).any() and (y[labelled] == NEGATIVE).any():
            slope, intercept = platt(score[labelled], y[labelled] == POSITIVE)
            return cls(slope, intercept, "platt")
        sd = float(np.std(score)) if len(score) else 0.0
        return cls(1.0 / sd if sd > 0 else 1.0, 0.0, "temperature")

    def positive_probability(self, score: np.ndarray) -> np.ndarray:
        """P(positive) of each score.

        score (numpy.ndarray): Scores, shape (n,).
        RETURNS (numpy.ndarray): Probabilities in [1e-12, 1 - 1e-12].
        """
        z = self.slope * np.asarray(score, dtype=np.float64) + self.intercept
        return np.clip(_sigmoid(z), P_MIN, 1.0 - P_MIN)

    def to_dict(self) -> Dict[str, Any]:
        """RETURNS (Dict[str, Any]): The mapping as plain data."""
        return {"slope": float(self.slope), "intercept": float(self.intercept), "method": self.method}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Calibration":
        """The mapping of `to_dict`, checked.

        data (Dict[str, Any]): The plain data.
        RETURNS (Calibration): The mapping.
        """
        wrong = f"calibration must hold a finite slope and intercept and a method in {METHODS}, got {data!r}"
        try:
            slope, intercept, method = float(data["slope"]), float(data["intercept"]), str(data["method"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(wrong) from None
        if not (np.isfinite(slope) and np.isfinite(intercept)) or method not in METHODS:
            raise ValueError(wrong)
        return cls(slope, intercept, method)


def log_loss(p_positive: np.ndarray, positive: np.ndarray) -> float:
    """Mean negative log-likelihood of the true classes.

    p_positive (numpy.ndarray): P(positive) per document.
    positive (numpy.ndarray): 1 for a positive document, 0 for a negative one.
    RETURNS (float): The log-loss (natural logarithm).
    """
    p = np.clip(np.asarray(p_positive, dtype=np.float64), P_MIN, 1.0 - P_MIN)
    positive = np.asarray(positive, dtype=np.float64)
    return float(-np.mean(positive * np.log(p) + (1.0 - positive) * np.log(1.0 - p)))


def expected_calibration_error(p_positive: np.ndarray, positive: np.ndarray, n_bins: int = 10) -> float:
    """Expected calibration error: the document-weighted mean over `n_bins` equal-width bins of the confidence
    max(p, 1 - p) of |accuracy - mean confidence|.

    p_positive (numpy.ndarray): P(positive) per document.
    positive (numpy.ndarray): 1 for a positive document, 0 for a negative one.
    n_bins (int): Number of bins over [0.5, 1].
    RETURNS (float): The ECE, between 0 and 1.
    """
    p = np.asarray(p_positive, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    if len(p) == 0:
        return 0.0
    confidence = np.maximum(p, 1.0 - p)
    correct = (p >= 0.5) == positive
    bins = np.minimum(((confidence - 0.5) * 2 * n_bins).astype(np.int64), n_bins - 1)
    total = 0.0
    for k in range(n_bins):
        members = bins == k
        if members.any():
            total += members.sum() * abs(correct[members].mean() - confidence[members].mean())
    return float(total / len(p))


def label_folds(y: np.ndarray, n_folds: int) -> np.ndarray:
    """A fold (0 .. n_folds - 1) for every labelled document, -1 for the others; each class dealt in turn.

    y (numpy.ndarray): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
    n_folds (int): Number of folds.
    RETURNS (numpy.ndarray): The fold of each document.
    """
    y = np.asarray(y)
    return np.where((y == POSITIVE) | (y == NEGATIVE), stratified_folds(y, n_folds), -1)


def cross_fitted_scores(fit_scores: Any, y: np.ndarray, n_folds: int = 2) -> np.ndarray:
    """Scores of the labelled documents from models fitted with their fold's labels hidden (the documents stay,
    unlabelled): Platt scaling on a model's own scores of its labelled documents would be overconfident.

    fit_scores (Callable[[numpy.ndarray], numpy.ndarray]): Fits a model on labels y' (with -1 for hidden ones)
        and returns the scores of all training documents.
    y (numpy.ndarray): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
    n_folds (int): Number of folds.
    RETURNS (numpy.ndarray): Shape (n,): the cross-fitted score of each labelled document, 0 for the others.
    """
    y = np.asarray(y)
    folds = label_folds(y, n_folds)
    out = np.zeros(len(y))
    for fold in range(n_folds):
        held = folds == fold
        if held.any():
            out[held] = np.asarray(fit_scores(np.where(held, -1, y)))[held]
    return out
