"""P(positive) from the NMTF models' scores (Platt scaling, or a temperature without labels), and its log-loss
and expected calibration error. Probabilities stay within [1e-12, 1 - 1e-12]."""
from __future__ import annotations

from typing import Any, Dict, NamedTuple, Optional

import numpy as np

from ..learning.selection import platt, stratified_folds
from .common import NEGATIVE, POSITIVE

P_MIN = 1e-12
METHODS = ("platt", "temperature")


class Calibration(NamedTuple):
    """P(positive) = sigmoid(slope * score + intercept), and the `method` that found slope and intercept."""

    slope: float
    intercept: float
    method: str

    @classmethod
    def fit(cls, score: np.ndarray, y: Optional[np.ndarray]) -> "Calibration":
        """Platt scaling on the labelled documents, or the temperature 1 / sd(score) without labels of both classes.

        score (numpy.ndarray): The training documents' scores; > 0 leans positive.
        y (Optional[numpy.ndarray]): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
        """
        score = np.asarray(score, dtype=np.float64)
        if not np.isfinite(score).all():
            raise ValueError("Cannot calibrate: some scores are not finite.")
        if y is not None:
            y = np.asarray(y)
            labelled = (y == POSITIVE) | (y == NEGATIVE)
            if (y[labelled] == POSITIVE).any() and (y[labelled] == NEGATIVE).any():
                return cls(*platt(score[labelled], y[labelled] == POSITIVE), "platt")
        sd = float(np.std(score)) if len(score) else 0.0
        return cls(1.0 / sd if sd > 0 else 1.0, 0.0, "temperature")

    def positive_probability(self, score: np.ndarray) -> np.ndarray:
        """RETURNS (numpy.ndarray): P(positive) of each score."""
        z = self.slope * np.asarray(score, dtype=np.float64) + self.intercept
        return np.clip(np.exp(-np.logaddexp(0.0, -z)), P_MIN, 1.0 - P_MIN)

    def to_dict(self) -> Dict[str, Any]:
        """RETURNS (Dict[str, Any]): The mapping as plain data."""
        return {"slope": float(self.slope), "intercept": float(self.intercept), "method": self.method}

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Calibration":
        """The mapping of `to_dict`, checked."""
        wrong = f"calibration must hold a finite slope and intercept and a method in {METHODS}, got {data!r}"
        try:
            slope, intercept, method = float(data["slope"]), float(data["intercept"]), str(data["method"])
        except (KeyError, TypeError, ValueError):
            raise ValueError(wrong) from None
        if not (np.isfinite(slope) and np.isfinite(intercept)) or method not in METHODS:
            raise ValueError(wrong)
        return cls(slope, intercept, method)


def log_loss(p_positive: np.ndarray, positive: np.ndarray) -> float:
    """Mean negative log-likelihood of the true classes (`positive`: 1 or 0 per document) under P(positive)."""
    p = np.clip(np.asarray(p_positive, dtype=np.float64), P_MIN, 1.0 - P_MIN)
    positive = np.asarray(positive, dtype=np.float64)
    return float(-np.mean(positive * np.log(p) + (1.0 - positive) * np.log(1.0 - p)))


def expected_calibration_error(p_positive: np.ndarray, positive: np.ndarray, n_bins: int = 10) -> float:
    """Expected calibration error: the document-weighted mean of |accuracy - mean confidence| over `n_bins`
    equal-width bins of the confidence max(p, 1 - p) in [0.5, 1]."""
    p = np.asarray(p_positive, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    if len(p) == 0:
        return 0.0
    confidence = np.maximum(p, 1.0 - p)
    correct = (p >= 0.5) == positive
    bins = np.minimum(((confidence - 0.5) * 2 * n_bins).astype(np.int64), n_bins - 1)
    # a bin's documents times |accuracy - mean confidence| is |correct - summed confidence|
    gaps = np.bincount(bins, correct, n_bins) - np.bincount(bins, confidence, n_bins)
    return float(np.abs(gaps).sum() / len(p))


def label_folds(y: np.ndarray, n_folds: int) -> np.ndarray:
    """A stratified fold (0 .. n_folds - 1) for every labelled document of y (0, 1 or -1), -1 for the others."""
    y = np.asarray(y)
    return np.where((y == POSITIVE) | (y == NEGATIVE), stratified_folds(y, n_folds), -1)

