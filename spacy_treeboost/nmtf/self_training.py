"""SSMFLK + naive Bayes, then a logistic regression trained on its classes: the lexicon model teaches a linear
model of all the documents' words.

`SSMFLKNaiveBayes` classifies every training document (its transductive score); a logistic regression (L2,
strength C) is then fitted on all training documents, the labelled ones with their labels and the others with
those classes, and scores new documents directly on their words (no fold-in). It was chosen on the development
parts of both corpora (docs/nmtf_sentiment.md); the factorization is SSMFLK's, unchanged.

The teacher's naive Bayes weight follows the length of the training documents: a document of a few words
gives naive Bayes little evidence, while on long documents (`long_document_words` distinct words or more on
average) naive Bayes reads many words per document and earns a larger weight (`long_nb_weight`). On long
documents the logistic regression, with more words than documents, reproduces the teacher's classes of the
training documents, so there the teacher alone decides them; on short ones it smooths them. Both weights were
chosen on the development parts (bench/nmtf_default_learner.py, docs/nmtf_default_learner.md).
"""
from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from ..exceptions import NotFittedError
from ..params import Interval, rule
from .checks import check_matrix
from .common import NEGATIVE, POSITIVE, UNLABELLED, sp
from .hybrid import SSMFLKNaiveBayes


def logistic_regression(X: sp.spmatrix, positive: np.ndarray, C: float, sample_weight: Optional[np.ndarray] = None,
                        max_iter: int = 1000) -> tuple:
    """L2-regularized logistic regression: minimize C * sum_i s_i log(1 + exp(-t_i (x_i w + b))) + ||w||^2 / 2.

    t_i is +1 for a positive document and -1 otherwise; the intercept b is not penalized (scikit-learn's
    objective with its lbfgs solver). Solved by scipy's L-BFGS-B from w = 0, b = 0, so the result is
    deterministic. Not by the linear learners' solver (`learning.solver.tron`): its objective has no sample
    weights s_i, which weigh the labelled documents against the teacher's classes here, and its stopping rule is
    relative to the gradient at zero weights, so the fitted models (and the NMTF figures) would change.

    X (scipy.sparse.spmatrix): Documents, shape (n, m).
    positive (numpy.ndarray): Whether each document is positive, shape (n,).
    C (float): Inverse regularization strength, > 0.
    sample_weight (Optional[numpy.ndarray]): s_i, default 1.
    max_iter (int): Most L-BFGS iterations.
    RETURNS (Tuple[numpy.ndarray, float]): w and b; x w + b > 0 leans positive.
    """
    from scipy.optimize import minimize

    X = sp.csr_matrix(X)
    t = np.where(np.asarray(positive, dtype=bool), 1.0, -1.0)
    s = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)

    def loss_and_grad(theta: np.ndarray) -> tuple:
        w, b = theta[:-1], theta[-1]
        z = t * (X @ w + b)
        loss = C * np.sum(s * np.logaddexp(0.0, -z)) + 0.5 * (w @ w)
        d = -C * s * t * np.exp(-np.logaddexp(0.0, z))
        return loss, np.concatenate([X.T @ d + w, [d.sum()]])

    theta = minimize(loss_and_grad, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                     options={"maxiter": max_iter, "gtol": 1e-6}).x
    return theta[:-1], float(theta[-1])


def mean_distinct_words(X: sp.spmatrix) -> float:
    """Mean number of distinct words per document: the nonzero entries of each row of X.

    X (scipy.sparse.spmatrix): Documents, shape (n_documents, n_words), n_documents > 0.
    RETURNS (float): The mean.
    """
    X = sp.csr_matrix(X)
    X.eliminate_zeros()
    return float(np.mean(np.diff(X.indptr)))


class SSMFLKSelfTrained(SSMFLKNaiveBayes):
    """A logistic regression on the labelled documents and on SSMFLK + naive Bayes's classes of the others.

    lr_C (float): Inverse regularization strength of the logistic regression (default 1).
    lr_label_weight (float): Weight of a labelled document against one classified by the teacher (default 1).
    long_nb_weight (float): The teacher's naive Bayes weight on long training documents (default 0.3);
        `nb_weight` applies to shorter ones.
    long_document_words (float): Mean number of distinct words per training document (nonzero entries of a
        row of X) from which the documents count as long (default 50).
    nb_weight, ..., random_state: The parameters of SSMFLKNaiveBayes (the teacher), SSMFLK and MFLK, with
        their defaults.
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

    def __init__(
        self,
        lr_C: float = 1.0,
        lr_label_weight: float = 1.0,
        long_nb_weight: float = 0.3,
        long_document_words: float = 50.0,
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
        super().__init__(nb_weight=nb_weight, nb_smoothing=nb_smoothing, nb_features=nb_features, beta=beta,
                         beta_scale=beta_scale, label_start=label_start, label_min_docs=label_min_docs,
                         start_weights=start_weights, label_prior=label_prior,
                         lexicon_prior=lexicon_prior, alpha=alpha, update=update, init=init,
                         prior_scale=prior_scale, max_iter=max_iter, tol=tol, offset=offset, n_init=n_init,
                         random_state=random_state)
        self.lr_C = lr_C
        self.lr_label_weight = lr_label_weight
        self.long_nb_weight = long_nb_weight
        self.long_document_words = long_document_words

    def initialize(self, X: sp.spmatrix, y: Optional[np.ndarray] = None, *,
                   init_clusters: Optional[np.ndarray] = None) -> "SSMFLKSelfTrained":
        """The teacher's start with the naive Bayes weight of the documents' length, and the logistic regression
        on its first classes.

        X (scipy.sparse.spmatrix): Document-term matrix, shape (n_documents, n_words).
        y (Optional[numpy.ndarray]): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
        init_clusters (Optional[numpy.ndarray]): As in `MFLK.fit`.
        RETURNS (SSMFLKSelfTrained): self.
        """
        self.validate_params()
        X = check_matrix(X)
        self._y = np.full(X.shape[0], UNLABELLED) if y is None else np.asarray(y)
        long = mean_distinct_words(X) >= self.long_document_words
        self.nb_weight_ = self.long_nb_weight if long else self.nb_weight
        super().initialize(X, y, init_clusters=init_clusters)
        return self

    def _set_scales(self) -> None:
        super()._set_scales()
        if hasattr(self, "_y"):
            self._fit_student()

    def _nb_weight(self) -> float:
        return self.nb_weight_

    def _fit_student(self) -> None:
        teacher = super().transductive_score()
        labelled = (self._y == POSITIVE) | (self._y == NEGATIVE)
        positive = np.where(labelled, self._y == POSITIVE, teacher >= 0)
        weight = np.where(labelled, self.lr_label_weight, 1.0)
        self.lr_coef_, self.lr_intercept_ = logistic_regression(self._Xt, positive, self.lr_C, weight)

    def transductive_score(self) -> np.ndarray:
        """The logistic regression's margin on each training document.

        RETURNS (numpy.ndarray): Shape (n_documents,); >= 0 means positive.
        """
        return np.asarray(self._Xt @ self.lr_coef_).ravel() + self.lr_intercept_

    def teacher_score(self) -> np.ndarray:
        """SSMFLK + naive Bayes's score of each training document (the classes the logistic regression learns).

        RETURNS (numpy.ndarray): Shape (n_documents,); >= 0 means positive.
        """
        return super().transductive_score()

    def decision_function(self, X: sp.spmatrix) -> np.ndarray:
        """The logistic regression's margin on new documents.

        X (scipy.sparse.spmatrix): Documents, shape (n_new, n_words), normalized like the training matrix.
        RETURNS (numpy.ndarray): Shape (n_new,); >= 0 means positive.
        """
        if not hasattr(self, "lr_coef_"):
            raise NotFittedError("This model is not fitted yet: call `fit` first.")
        X = check_matrix(X, allow_empty=True)
        if X.shape[1] != len(self.lr_coef_):
            raise ValueError(f"X must have one column per vocabulary word ({len(self.lr_coef_)}), got {X.shape[1]}.")
        return np.asarray(X @ self.lr_coef_).ravel() + self.lr_intercept_

    def fitted_state(self) -> Dict[str, Any]:
        """The teacher's fitted values and the logistic regression's, as plain data.

        RETURNS (Dict[str, Any]): The state.
        """
        return {**super().fitted_state(), "lr_coef": self.lr_coef_.tolist(), "lr_intercept": float(self.lr_intercept_),
                "nb_weight": float(self.nb_weight_)}

    def load_fitted_state(self, state: Dict[str, Any]) -> None:
        """Restore `fitted_state`.

        state (Dict[str, Any]): The output of `fitted_state`.
        """
        super().load_fitted_state(state)
        coef = np.asarray(state["lr_coef"], dtype=np.float64)
        intercept = float(state["lr_intercept"])
        if coef.shape != self.nb_coef_.shape or not (np.isfinite(coef).all() and np.isfinite(intercept)):
            raise ValueError("the logistic regression state must hold one finite coefficient per word")
        nb_weight = float(state.get("nb_weight", self.nb_weight))
        if not (np.isfinite(nb_weight) and nb_weight >= 0):
            raise ValueError(f"the naive Bayes weight of the state must be a finite number >= 0, got {nb_weight}")
        self.lr_coef_, self.lr_intercept_, self.nb_weight_ = coef, intercept, nb_weight
