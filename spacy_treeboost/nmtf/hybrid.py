"""SSMFLK plus naive Bayes: the paper's semi-supervised factorization and a supervised word model of the same
labels, added on a common scale.

SSMFLK uses its labelled documents mostly as a start of the factorization (docs/nmtf_results.md), so at a few
per cent of labels it stays close to MFLK. A multinomial naive Bayes model fitted on the same labelled
documents reads the labels directly, but alone it is far worse than the lexicon model. Their sum, each score
divided by its standard deviation over the unlabelled training documents and the naive Bayes score weighted
by `nb_weight`, with naive Bayes on word presence (binarized, as Wang & Manning 2012 found better for
sentiment), was chosen on the development parts of both corpora (bench/nmtf_default_learner.py,
docs/nmtf_default_learner.md). The factorization is SSMFLK's, unchanged.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from ..params import Interval, Options, rule
from .common import check_matrix
from .common import NEGATIVE, POSITIVE, UNLABELLED, sp
from .semi_supervised import SSMFLK

_TINY = 1e-300
NB_FEATURES = ("binary", "weights")


def naive_bayes_log_odds(X: sp.spmatrix, y: np.ndarray, smoothing: float) -> tuple:
    """Multinomial naive Bayes on the labelled rows of X: per-word log-odds and the prior log-odds.

    X (scipy.sparse.spmatrix): Documents, shape (n_documents, n_words); the entries count as word weights.
    y (numpy.ndarray): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
    smoothing (float): Additive (Laplace) smoothing of the word weights of each class.
    RETURNS (Tuple[numpy.ndarray, float]): log P(w | pos) - log P(w | neg) per word, log P(pos) - log P(neg).
    """
    X = sp.csr_matrix(X)
    y = np.asarray(y)
    sums = np.zeros((X.shape[1], 2))
    for k in (POSITIVE, NEGATIVE):
        rows = np.flatnonzero(y == k)
        sums[:, k] = np.asarray(X[rows].sum(axis=0)).ravel()
    logp = np.log(sums + smoothing) - np.log((sums + smoothing).sum(axis=0))
    counts = np.array([(y == POSITIVE).sum(), (y == NEGATIVE).sum()], dtype=np.float64)
    return logp[:, POSITIVE] - logp[:, NEGATIVE], float(np.log(counts[POSITIVE]) - np.log(counts[NEGATIVE]))


class SSMFLKNaiveBayes(SSMFLK):
    """SSMFLK's score plus `nb_weight` times that of naive Bayes on the labelled documents, each on unit scale.

    The score of a document is `s / sd(s) + nb_weight * t / sd(t)`: s is SSMFLK's score (for a training
    document log(G_pos / G_neg), for a new one its fold-in g_pos - g_neg), t the naive Bayes log-odds, and each
    sd is taken over the unlabelled training documents (over all of them when every document is labelled).
    Without labelled documents of both classes it is SSMFLK (MFLK without any label).

    nb_weight (float): Weight of the naive Bayes score (default 0.1, chosen on the development parts).
    nb_smoothing (float): Additive smoothing of naive Bayes (default 1).
    nb_features (str): What naive Bayes counts: "binary" (default; each word present in a document counts
        once) or "weights" (the entries of X, the same normalized weights the factorization fits).
    beta, ..., random_state: SSMFLK's and MFLK's parameters, with their defaults.
    """

    _parameter_constraints = {
        **SSMFLK._parameter_constraints,
        "nb_weight": rule(Interval("real", 0, None)),
        "nb_smoothing": rule(Interval("real", 0, None, "neither"), hint=(
            "use a number > 0: a word never seen in one class would get log-odds of infinity")),
        "nb_features": rule(Options(*NB_FEATURES)),
    }

    def __init__(
        self,
        nb_weight: float = 0.1,
        nb_smoothing: float = 1.0,
        nb_features: str = "binary",
        beta: float = 1.0,
        beta_scale: str = "fit",
        label_start: float = 0.05,
        label_min_docs: int = 2,
        start_weights: str = "uniform",
        label_prior: float = 0.0,
        *,
        lexicon_prior: Optional[np.ndarray] = None,
        alpha: float = 0.5,
        update: str = "monotone",
        init: str = "lexicon",
        prior_scale: str = "unit",
        max_iter: int = 100,
        tol: float = 1e-4,
        offset: float = 0.2,
        n_init: int = 1,
        random_state: int = 0,
    ) -> None:
        super().__init__(beta=beta, beta_scale=beta_scale, label_start=label_start, label_min_docs=label_min_docs,
                         start_weights=start_weights, label_prior=label_prior,
                         lexicon_prior=lexicon_prior, alpha=alpha, update=update, init=init,
                         prior_scale=prior_scale, max_iter=max_iter, tol=tol, offset=offset, n_init=n_init,
                         random_state=random_state)
        self.nb_weight = nb_weight
        self.nb_smoothing = nb_smoothing
        self.nb_features = nb_features

    def initialize(self, X: sp.spmatrix, y: Optional[np.ndarray] = None, *,
                   init_clusters: Optional[np.ndarray] = None) -> "SSMFLKNaiveBayes":
        """SSMFLK's start, plus naive Bayes on the labelled documents.

        X (scipy.sparse.spmatrix): Document-term matrix, shape (n_documents, n_words).
        y (Optional[numpy.ndarray]): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
        init_clusters (Optional[numpy.ndarray]): As in `MFLK.fit`.
        RETURNS (SSMFLKNaiveBayes): self.
        """
        super().initialize(X, y, init_clusters=init_clusters)
        y = np.full(self._X.shape[1], UNLABELLED) if y is None else np.asarray(y)
        both = (y == POSITIVE).any() and (y == NEGATIVE).any()
        self.nb_coef_ = np.zeros(self._X.shape[0])
        self.nb_intercept_ = 0.0
        if both:
            self.nb_coef_, self.nb_intercept_ = naive_bayes_log_odds(self._nb_features(self._Xt), y, self.nb_smoothing)
        unlabelled = y == UNLABELLED
        self._scale_rows = unlabelled if unlabelled.any() else np.ones(len(y), dtype=bool)
        self._set_scales()
        return self

    def iterate(self, n_iter: int) -> "SSMFLKNaiveBayes":
        """SSMFLK's iterations; the scales of both scores then follow the new factors.

        n_iter (int): Number of iterations.
        RETURNS (SSMFLKNaiveBayes): self.
        """
        super().iterate(n_iter)
        self._set_scales()
        return self

    @property
    def labels_(self) -> np.ndarray:
        """Transductive class (0 positive, 1 negative) of each training document, from the combined score."""
        return np.where(self.transductive_score() >= 0, POSITIVE, NEGATIVE)

    def transductive_score(self) -> np.ndarray:
        """The combined score of each training document, with SSMFLK's log(G_pos / G_neg).

        RETURNS (numpy.ndarray): Shape (n_documents,); >= 0 means positive.
        """
        s = np.log(np.maximum(self.G_[:, POSITIVE], _TINY)) - np.log(np.maximum(self.G_[:, NEGATIVE], _TINY))
        return s / self.scales_[0] + self._nb_weight() * self._nb_score(self._Xt) / self.scales_[2]

    def decision_function(self, X: sp.spmatrix) -> np.ndarray:
        """The combined score of new documents, with SSMFLK's fold-in g_pos - g_neg.

        X (scipy.sparse.spmatrix): Documents, shape (n_new, n_words), normalized like the training matrix.
        RETURNS (numpy.ndarray): Shape (n_new,); >= 0 means positive.
        """
        g = self.fold_in(X)
        s = g[:, POSITIVE] - g[:, NEGATIVE]
        t = self._nb_score(check_matrix(X, allow_empty=True))
        return s / self.scales_[1] + self._nb_weight() * t / self.scales_[2]

    def predict(self, X: sp.spmatrix) -> np.ndarray:
        """Class of each new document: 0 (positive) or 1 (negative); ties go to positive.

        X (scipy.sparse.spmatrix): Documents, shape (n_new, n_words).
        RETURNS (numpy.ndarray): Shape (n_new,).
        """
        return np.where(self.decision_function(X) >= 0, POSITIVE, NEGATIVE)

    def predict_proba(self, X: sp.spmatrix) -> np.ndarray:
        """Logistic of the combined score (uncalibrated; the component calibrates it).

        X (scipy.sparse.spmatrix): Documents, shape (n_new, n_words).
        RETURNS (numpy.ndarray): Shape (n_new, 2): positive, negative.
        """
        p = 1.0 / (1.0 + np.exp(-np.clip(self.decision_function(X), -700, 700)))
        return np.stack([p, 1.0 - p], axis=1)

    def fitted_state(self) -> Dict[str, Any]:
        """What prediction needs beyond F and S, as plain data (for model files).

        RETURNS (Dict[str, Any]): The naive Bayes coefficients and the three scales.
        """
        return {"nb_coef": self.nb_coef_.tolist(), "nb_intercept": float(self.nb_intercept_),
                "scales": [float(s) for s in self.scales_]}

    def load_fitted_state(self, state: Dict[str, Any]) -> None:
        """Restore `fitted_state` (F and S are set separately).

        state (Dict[str, Any]): The output of `fitted_state`.
        """
        coef = np.asarray(state["nb_coef"], dtype=np.float64)
        scales = np.asarray(state["scales"], dtype=np.float64)
        if coef.ndim != 1 or scales.shape != (3,) or not (np.isfinite(coef).all() and np.isfinite(scales).all()) \
                or (scales <= 0).any():
            raise ValueError("the naive Bayes state must hold finite coefficients and three positive scales")
        self.nb_coef_, self.nb_intercept_, self.scales_ = coef, float(state["nb_intercept"]), scales

    def _nb_weight(self) -> float:
        return self.nb_weight

    def _nb_features(self, X: sp.spmatrix) -> sp.csr_matrix:
        X = sp.csr_matrix(X)
        return (X > 0).astype(np.float64) if self.nb_features == "binary" else X

    def _nb_score(self, X: sp.spmatrix) -> np.ndarray:
        return np.asarray(self._nb_features(X) @ self.nb_coef_).ravel() + self.nb_intercept_

    def _set_scales(self) -> None:
        rows = self._scale_rows
        G = self.G_[rows]
        log_ratio = np.log(np.maximum(G[:, POSITIVE], _TINY)) - np.log(np.maximum(G[:, NEGATIVE], _TINY))
        g = self.fold_in(self._Xt[np.flatnonzero(rows)])
        sds = [np.std(log_ratio), np.std(g[:, POSITIVE] - g[:, NEGATIVE]), np.std(self._nb_score(self._Xt[rows]))]
        self.scales_ = np.array([sd if sd > 0 and np.isfinite(sd) else 1.0 for sd in sds])
