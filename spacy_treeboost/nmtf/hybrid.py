"""SSMFLK plus naive Bayes (`SSMFLKNaiveBayes`), and a logistic regression taught by it (`SSMFLKSelfTrained`, the
component's default learner), chosen on the development corpora (docs/nmtf_default_learner.md)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

import numpy as np

from ..params import Interval, Options, rule
from .common import NEGATIVE, POSITIVE, UNLABELLED, one_hot, sp
from .factorization import SSMFLK

_TINY = 1e-300
NB_FEATURES = ("binary", "weights")


def naive_bayes_log_odds(X: sp.spmatrix, y: np.ndarray, smoothing: float) -> tuple:
    """Multinomial naive Bayes on the labelled rows of X (y: 0, 1 or -1 per document), Laplace `smoothing`.

    RETURNS (Tuple[numpy.ndarray, float]): log P(w | pos) - log P(w | neg) per word, log P(pos) - log P(neg).
    """
    y = np.asarray(y)
    smoothed = np.asarray(sp.csr_matrix(X).T @ one_hot(y)) + smoothing
    logp = np.log(smoothed) - np.log(smoothed.sum(axis=0))
    return logp[:, POSITIVE] - logp[:, NEGATIVE], float(np.log((y == POSITIVE).sum()) - np.log((y == NEGATIVE).sum()))


@dataclass(eq=False, repr=False)
class SSMFLKNaiveBayes(SSMFLK):
    """The score s / sd(s) + nb_weight * t / sd(t): s is SSMFLK's (log(G_pos / G_neg) on training documents, the
    fold-in g_pos - g_neg on new ones), t naive Bayes's on the labelled documents, each sd over the unlabelled
    training documents (all of them if every one is labelled). Without labels of both classes it is SSMFLK.

    nb_weight (float): Weight of the naive Bayes score.
    nb_smoothing (float): Additive smoothing of naive Bayes.
    nb_features (str): What naive Bayes counts: "binary" (word presence) or "weights" (the entries of X).
    lexicon_prior, ..., label_prior: SSMFLK's parameters, which come first.
    """

    _parameter_constraints = {
        **SSMFLK._parameter_constraints,
        "nb_weight": rule(Interval("real", 0, None)),
        "nb_smoothing": rule(Interval("real", 0, None, "neither"), hint=(
            "use a number > 0: a word never seen in one class would get log-odds of infinity")),
        "nb_features": rule(Options(*NB_FEATURES)),
    }

    nb_weight: float = 0.1
    nb_smoothing: float = 1.0
    nb_features: str = "binary"

    def initialize(self, X: sp.spmatrix, y: Optional[np.ndarray] = None, *,
                   init_clusters: Optional[np.ndarray] = None) -> "SSMFLKNaiveBayes":
        """SSMFLK's start plus naive Bayes on the labelled documents. RETURNS: self."""
        super().initialize(X, y, init_clusters=init_clusters)
        self.nb_weight_ = self._start_nb_weight()
        self._y = y = np.full(self._X.shape[1], UNLABELLED) if y is None else np.asarray(y)
        if (y == POSITIVE).any() and (y == NEGATIVE).any():
            self.nb_coef_, self.nb_intercept_ = naive_bayes_log_odds(self._nb_features(self._Xt), y, self.nb_smoothing)
        else:
            self.nb_coef_, self.nb_intercept_ = np.zeros(self._X.shape[0]), 0.0
        unlabelled = y == UNLABELLED
        self._scale_rows = unlabelled if unlabelled.any() else np.ones(len(y), dtype=bool)
        self._set_scales()
        return self

    def iterate(self, n_iter: int) -> "SSMFLKNaiveBayes":
        """Up to `n_iter` of SSMFLK's iterations, then the scales of the scores. RETURNS: self."""
        super().iterate(n_iter)
        self._set_scales()
        return self

    @property
    def labels_(self) -> np.ndarray:
        """Transductive class (0 positive, 1 negative) of each training document, from the combined score."""
        return np.where(self.transductive_score() >= 0, POSITIVE, NEGATIVE)

    def transductive_score(self) -> np.ndarray:
        """RETURNS (numpy.ndarray): The combined score of each training document (>= 0: positive)."""
        return _log_ratio(self.G_) / self.scales_[0] + self.nb_weight_ * self._nb_score(self._Xt) / self.scales_[2]

    def decision_function(self, X: sp.spmatrix) -> np.ndarray:
        """The combined score of documents (n_new, n_words); >= 0 means positive."""
        X = self._new_documents(X)
        s = super().decision_function(X) / self.scales_[1]
        return s + self.nb_weight_ * self._nb_score(X) / self.scales_[2]

    def predict_proba(self, X: sp.spmatrix) -> np.ndarray:
        """Logistic of the combined score (uncalibrated), shape (n_new, 2): positive, negative."""
        p = 1.0 / (1.0 + np.exp(-np.clip(self.decision_function(X), -700, 700)))
        return np.stack([p, 1.0 - p], axis=1)

    def fitted_state(self) -> Dict[str, Any]:
        """RETURNS (Dict[str, Any]): What prediction needs beyond F and S, as plain data."""
        return {"nb_coef": self.nb_coef_.tolist(), "nb_intercept": float(self.nb_intercept_),
                "scales": [float(s) for s in self.scales_]}

    def load_fitted_state(self, state: Dict[str, Any]) -> None:
        """Restore the output of `fitted_state` (F and S are set separately)."""
        coef = np.asarray(state["nb_coef"], dtype=np.float64)
        scales = np.asarray(state["scales"], dtype=np.float64)
        if coef.ndim != 1 or scales.shape != (3,) or not (np.isfinite(coef).all() and np.isfinite(scales).all()) \
                or (scales <= 0).any():
            raise ValueError("the naive Bayes state must hold finite coefficients and three positive scales")
        self.nb_coef_, self.nb_intercept_, self.scales_ = coef, float(state["nb_intercept"]), scales
        self.nb_weight_ = self.nb_weight

    def _start_nb_weight(self) -> float:
        return self.nb_weight

    def _nb_features(self, X: sp.spmatrix) -> sp.csr_matrix:
        X = sp.csr_matrix(X)
        return (X > 0).astype(np.float64) if self.nb_features == "binary" else X

    def _nb_score(self, X: sp.spmatrix) -> np.ndarray:
        return np.asarray(self._nb_features(X) @ self.nb_coef_).ravel() + self.nb_intercept_

    def _set_scales(self) -> None:
        rows = self._scale_rows
        g = self.fold_in(self._Xt[np.flatnonzero(rows)])
        sds = [np.std(_log_ratio(self.G_[rows])), np.std(g[:, POSITIVE] - g[:, NEGATIVE]),
               np.std(self._nb_score(self._Xt[rows]))]
        self.scales_ = np.array([sd if sd > 0 and np.isfinite(sd) else 1.0 for sd in sds])


def _log_ratio(G: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(G[:, POSITIVE], _TINY)) - np.log(np.maximum(G[:, NEGATIVE], _TINY))


def logistic_regression(X: sp.spmatrix, positive: np.ndarray, C: float, sample_weight: np.ndarray) -> tuple:
    """min C * sum_i s_i log(1 + exp(-t_i (x_i w + b))) + ||w||^2 / 2 (scikit-learn's objective, t_i = +1 for a
    `positive` document, else -1; s_i the `sample_weight`) by scipy's L-BFGS-B from zero.

    RETURNS (Tuple[numpy.ndarray, float]): w and b; x w + b > 0 leans positive.
    """
    from scipy.optimize import minimize

    X = sp.csr_matrix(X)
    t = np.where(np.asarray(positive, dtype=bool), 1.0, -1.0)
    s = np.asarray(sample_weight, dtype=np.float64)

    def loss_and_grad(theta: np.ndarray) -> tuple:
        w, b = theta[:-1], theta[-1]
        z = t * (X @ w + b)
        loss = C * np.sum(s * np.logaddexp(0.0, -z)) + 0.5 * (w @ w)
        d = -C * s * t * np.exp(-np.logaddexp(0.0, z))
        return loss, np.concatenate([X.T @ d + w, [d.sum()]])

    theta = minimize(loss_and_grad, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                     options={"maxiter": 1000, "gtol": 1e-6}).x
    return theta[:-1], float(theta[-1])


def mean_distinct_words(X: sp.spmatrix) -> float:
    """Mean number of distinct words (nonzero entries) of the rows of X."""
    return float((sp.csr_matrix(X) != 0).sum() / X.shape[0])


@dataclass(eq=False, repr=False)
class SSMFLKSelfTrained(SSMFLKNaiveBayes):
    """A logistic regression (the student) on the labelled documents and on the classes SSMFLKNaiveBayes (the
    teacher) gives the others; it scores new documents on their words, without fold-in.

    lr_C (float): Inverse regularization strength of the logistic regression.
    lr_label_weight (float): Weight of a labelled document against one classified by the teacher.
    long_nb_weight (float): The teacher's `nb_weight` when the training documents are long.
    long_document_words (float): Mean number of distinct words per document from which documents are long.
    lexicon_prior, ..., nb_features: SSMFLKNaiveBayes's parameters, which come first.
    """

    _parameter_constraints = {
        **SSMFLKNaiveBayes._parameter_constraints,
        "lr_C": rule(Interval("real", 0, None, "neither"), hint=(
            "use a number > 0: it is the inverse of the regularization strength")),
        "lr_label_weight": rule(Interval("real", 0, None)),
        "long_nb_weight": rule(Interval("real", 0, None)),
        "long_document_words": rule(Interval("real", 0, None, "neither"), hint=(
            "use a number > 0: the mean number of distinct words per document from which documents are long")),
    }

    lr_C: float = 1.0
    lr_label_weight: float = 1.0
    long_nb_weight: float = 0.3
    long_document_words: float = 50.0

    def _set_scales(self) -> None:
        """The teacher's scales, then the student on the labels and on the teacher's classes of the others."""
        super()._set_scales()
        labelled = self._y != UNLABELLED
        positive = np.where(labelled, self._y == POSITIVE, self.teacher_score() >= 0)
        weight = np.where(labelled, self.lr_label_weight, 1.0)
        self.lr_coef_, self.lr_intercept_ = logistic_regression(self._Xt, positive, self.lr_C, weight)

    def _start_nb_weight(self) -> float:
        """The teacher's naive Bayes weight: `long_nb_weight` for long training documents."""
        return self.long_nb_weight if mean_distinct_words(self._Xt) >= self.long_document_words else self.nb_weight

    def transductive_score(self) -> np.ndarray:
        """RETURNS (numpy.ndarray): The student's margin on each training document (>= 0: positive)."""
        return np.asarray(self._Xt @ self.lr_coef_).ravel() + self.lr_intercept_

    def teacher_score(self) -> np.ndarray:
        """RETURNS (numpy.ndarray): The teacher's score of each training document (>= 0: positive)."""
        return super().transductive_score()

    def decision_function(self, X: sp.spmatrix) -> np.ndarray:
        """The student's margin on documents (n_new, n_words); >= 0 means positive."""
        X = self._new_documents(X, "lr_coef_")
        return np.asarray(X @ self.lr_coef_).ravel() + self.lr_intercept_

    def fitted_state(self) -> Dict[str, Any]:
        """RETURNS (Dict[str, Any]): The teacher's and the student's fitted values, as plain data."""
        return {**super().fitted_state(), "lr_coef": self.lr_coef_.tolist(), "lr_intercept": float(self.lr_intercept_),
                "nb_weight": float(self.nb_weight_)}

    def load_fitted_state(self, state: Dict[str, Any]) -> None:
        """Restore the output of `fitted_state`."""
        super().load_fitted_state(state)
        coef = np.asarray(state["lr_coef"], dtype=np.float64)
        intercept = float(state["lr_intercept"])
        if coef.shape != self.nb_coef_.shape or not (np.isfinite(coef).all() and np.isfinite(intercept)):
            raise ValueError("the logistic regression state must hold one finite coefficient per word")
        nb_weight = float(state.get("nb_weight", self.nb_weight))
        if not (np.isfinite(nb_weight) and nb_weight >= 0):
            raise ValueError(f"the naive Bayes weight of the state must be a finite number >= 0, got {nb_weight}")
        self.lr_coef_, self.lr_intercept_, self.nb_weight_ = coef, intercept, nb_weight
