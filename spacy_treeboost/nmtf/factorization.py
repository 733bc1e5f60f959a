"""MFLK and SSMFLK: lexicon-guided non-negative matrix tri-factorization X^T ~ F S G^T (Li, Zhang & Sindhwani 2009);
the printed algorithm (docs/algorithms.md, section 4) is `update="sqrt"`, `init="kmeans"`, `prior_scale="one"`. Only
thin products are formed: O(z k + (m + n) k^2)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..exceptions import NotFittedError
from ..params import Interval, Options, Validated, rule
from .common import check_matrix, document_prior
from .common import N_CLASSES, NEGATIVE, POSITIVE, sp
from .common import align_clusters, fold_in, kmeans_clusters, label_word_prior, lexicon_classes, one_hot, unit_columns

UPDATES = ("monotone", "sqrt", "as_printed")
INITS = ("lexicon", "kmeans")
PRIOR_SCALES = ("unit", "one")
BETA_SCALES = ("fit", "one")
START_WEIGHTS = ("uniform", "frequency")

MAX_SEED = 2 ** 32 - 1
_OFFSET_EPS = 1e-10
_FLOOR = 1e-16


@dataclass(eq=False, repr=False)
class MFLK(Validated):
    """Matrix factorization with lexical knowledge (unsupervised: the lexicon prior only).

    lexicon_prior (Optional[numpy.ndarray]): F0, shape (n_words, 2), from `lexicon_prior`; None only with alpha = 0.
    alpha (float): Weight of the lexicon prior; 0 gives plain tri-factor NMF.
    update (str): "monotone" (J never increases), "sqrt" (the printed rules, square-root damped) or "as_printed".
    init (str): Start of G: "lexicon" (`lexicon_classes`) or "kmeans" (2-means aligned to the lexicon).
    prior_scale (str): "unit" (priors and starts with unit-norm columns) or "one" (0/1, as printed).
    max_iter (int): Most iterations run by `fit`.
    tol (float): Stop when ||G_t - G_{t-1}||_F <= tol * ||G_{t-1}||_F.
    offset (float): Added to the initial F0 and one-hot G.
    n_init (int): k-means restarts.
    random_state (int): Seed of k-means, from 0 to 2**32 - 1.
    """

    _parameter_constraints = {
        "update": rule(Options(*UPDATES)),
        "init": rule(Options(*INITS)),
        "prior_scale": rule(Options(*PRIOR_SCALES)),
        "n_init": rule(Interval("int", 1, None)),
        "max_iter": rule(Interval("int", 0, None)),
        "alpha": rule(Interval("real", 0, None)),
        "offset": rule(Interval("real", 0, None, "neither"), hint=(
            "use a number > 0: a multiplicative update cannot move a factor entry that starts at 0")),
        "tol": rule(Interval("real", 0, None)),
        "random_state": rule(Interval("int", 0, MAX_SEED)),
    }

    lexicon_prior: Optional[np.ndarray] = None
    alpha: float = 0.5
    update: str = "monotone"
    init: str = "lexicon"
    prior_scale: str = "unit"
    max_iter: int = 100
    tol: float = 1e-4
    offset: float = 0.2
    n_init: int = 1
    random_state: int = 0

    def fit(self, X: sp.spmatrix, y: Optional[np.ndarray] = None, *,
            init_clusters: Optional[np.ndarray] = None) -> "MFLK":
        """Factorize X until G stops changing or `max_iter` iterations have run.

        X (scipy.sparse.spmatrix): Document-term matrix, shape (n_documents, n_words).
        y (Optional[numpy.ndarray]): 0 (positive), 1 (negative) or -1 (unlabelled) per document; MFLK ignores it.
        init_clusters (Optional[numpy.ndarray]): Initial class (0/1) per document instead of `init`.
        RETURNS (MFLK): self.
        """
        self.initialize(X, y, init_clusters=init_clusters)
        return self.iterate(self.max_iter)

    def fit_predict(self, X: sp.spmatrix, y: Optional[np.ndarray] = None, *,
                    init_clusters: Optional[np.ndarray] = None) -> np.ndarray:
        """`fit`, then the transductive class (0 positive, 1 negative) of every training document."""
        return self.fit(X, y, init_clusters=init_clusters).labels_

    def initialize(self, X: sp.spmatrix, y: Optional[np.ndarray] = None, *,
                   init_clusters: Optional[np.ndarray] = None) -> "MFLK":
        """Set F, G and S to their starting values and keep X for `iterate`; the arguments are `fit`'s.
        RETURNS: self."""
        self.validate_params()
        X = check_matrix(X).T.tocsr()
        Xt = X.T.tocsr()
        m, n = X.shape
        F0 = self._checked_lexicon_prior(m)
        G0, c2 = document_prior(y if isinstance(self, SSMFLK) else None, n)
        labels = self if isinstance(self, SSMFLK) and c2.any() else None
        if labels is not None and labels.label_prior > 0:
            F0 = F0 + labels.label_prior * label_word_prior(X, G0, c2, labels.label_min_docs)
        if init_clusters is not None:
            init_clusters = np.asarray(init_clusters, dtype=np.int64)
            if init_clusters.shape != (n,) or not np.isin(init_clusters, (0, 1)).all():
                raise ValueError(f"init_clusters must hold 0 or 1 for each of the {n} documents.")
        label_start = labels.label_start if labels is not None else 0.0
        F = self._start_F(X, F0, G0, c2, labels, label_start)
        clusters = self._start_clusters(Xt, F, F0, G0, c2, label_start, init_clusters)
        G = one_hot(clusters) + self.offset
        G[c2] = G0[c2] + self.offset
        c1 = F0.sum(axis=1) > 0
        if self.prior_scale == "unit":
            # the scale of orthogonal factors: unit-norm columns, G0's rows 1/sqrt(n_k) for class sizes n_k
            F0 = unit_columns(F0)
            if c2.any():
                G0 = G0 / np.sqrt(np.maximum(G0[c2].mean(axis=0) * n, 1.0))
            F, G = unit_columns(F), unit_columns(G)
        self._X, self._Xt = X, Xt
        self._sq_norm_X = float(X.multiply(X).sum())
        self.beta_ = getattr(self, "beta", 0.0)
        if labels is not None and labels.beta_scale == "fit":
            # beta = 1: a labelled row of G at 0 costs an average document's share of the fit at F S G^T = 0
            self.beta_ = labels.beta * (self._sq_norm_X / n) / float(np.mean(np.sum(G0[c2] ** 2, axis=1)))
        self._F0, self._c1, self._G0, self._c2 = F0, c1, G0, c2
        self.F_, self.S_, self.G_ = F, np.maximum(_least_squares_S(X, F, G), 1e-9), G
        self.objective_ = [self._objective()]
        self.n_iter_ = 0
        self.converged_ = False
        return self

    def _start_F(self, X: sp.csr_matrix, F0: np.ndarray, G0: np.ndarray, c2: np.ndarray,
                 labels: Optional["SSMFLK"], label_start: float) -> np.ndarray:
        if F0.any():
            F = F0 + self.offset
        else:
            # without a lexicon a constant F would keep its two columns equal
            F = one_hot(kmeans_clusters(X, self.random_state)) + self.offset
        if labels is None or label_start <= 0:
            return F
        # F leans towards the class sums X_L G0_L of the labelled documents over words in `label_min_docs` of them
        labelled_docs = np.asarray((X[:, c2] > 0).sum(axis=1)).ravel()
        if labels.start_weights == "frequency":
            sums = label_word_prior(X, G0, c2, labels.label_min_docs) * labelled_docs[:, None]
        else:
            sums = np.asarray(X[:, c2] @ G0[c2])
            sums[labelled_docs < labels.label_min_docs] = 0.0
        return F + label_start * unit_columns(sums) * np.linalg.norm(F, axis=0)

    def _start_clusters(self, Xt: sp.csr_matrix, F: np.ndarray, F0: np.ndarray, G0: np.ndarray, c2: np.ndarray,
                        label_start: float, init_clusters: Optional[np.ndarray]) -> np.ndarray:
        if init_clusters is not None:
            clusters = init_clusters
        elif self.init == "lexicon" and F0.any():
            clusters = lexicon_classes(Xt, unit_columns(F) if label_start > 0 else F0)
        else:
            clusters = kmeans_clusters(Xt, self.random_state, n_init=self.n_init)
        if F0.any():
            return align_clusters(Xt, F0, clusters)
        if c2.any() and (one_hot(clusters) * G0).sum() < (one_hot(1 - clusters) * G0).sum():
            return 1 - clusters
        return clusters

    def can_iterate(self) -> bool:
        """RETURNS (bool): Whether `iterate` can run: the training matrix is held (not after loading)."""
        return hasattr(self, "_X")

    def iterate(self, n_iter: int) -> "MFLK":
        """Run up to `n_iter` more multiplicative iterations (G, then F, then S), fewer once converged.
        RETURNS: self."""
        if not self.can_iterate():
            raise NotFittedError("Call `initialize` (or `fit`) before `iterate`.")
        monotone = self.update == "monotone"
        root = self.update in ("sqrt", "monotone")
        X, Xt, F, S, G = self._X, self._Xt, self.F_, self.S_, self.G_
        alpha, beta = self.alpha, self.beta_
        aF0 = alpha * (self._c1[:, None] * self._F0)
        c1 = self._c1[:, None].astype(np.float64)
        c2 = self._c2[:, None].astype(np.float64)
        bG0 = beta * (self._c2[:, None] * self._G0)
        for _ in range(n_iter):
            if self.converged_:
                break
            G_old = G
            Bm = Xt @ (F @ S)
            num = Bm + bG0
            if monotone:
                # gradient of J in G: -2 X^T F S + 2 G S^T F^T F S + 2 beta C2 (G - G0)
                den = G @ (S.T @ (F.T @ F) @ S) + beta * c2 * G
            else:
                den = G @ (G.T @ Bm) + G @ (G.T @ bG0)
            G = _multiply(G, num, den, root)
            XG = X @ G
            A = XG @ S.T
            num = A + aF0
            if monotone:
                # the paper's KKT condition (its eq. 10): F S G^T G S^T in the denominator
                den = F @ (S @ (G.T @ G) @ S.T) + alpha * c1 * F
            else:
                den = F @ (F.T @ A) + alpha * c1 * F
            F = _multiply(F, num, den, root)
            num = F.T @ XG
            den = (F.T @ F) @ S @ (G.T @ G)
            S = _multiply(S, num, den, root)
            self.F_, self.S_, self.G_ = F, S, G
            self.n_iter_ += 1
            self.objective_.append(self._objective())
            if np.linalg.norm(G - G_old) <= self.tol * np.linalg.norm(G_old):
                self.converged_ = True
        return self

    @property
    def labels_(self) -> np.ndarray:
        """Transductive class (0 positive, 1 negative) of each training document."""
        return np.argmax(self.G_, axis=1)

    def predict_proba(self, X: sp.spmatrix) -> np.ndarray:
        """The fold-in coefficients g of documents (n_new, n_words), normalized; (0.5, 0.5) without known words."""
        g = self.fold_in(X)
        total = g.sum(axis=1, keepdims=True)
        return np.where(total > 0, g / np.where(total > 0, total, 1.0), 0.5)

    def decision_function(self, X: sp.spmatrix) -> np.ndarray:
        """g_pos - g_neg of each document's fold-in (> 0 leans positive)."""
        g = self.fold_in(X)
        return g[:, POSITIVE] - g[:, NEGATIVE]

    def predict(self, X: sp.spmatrix) -> np.ndarray:
        """Class of each document: 0 (positive) or 1 (negative); ties go to positive."""
        return np.where(self.decision_function(X) >= 0, POSITIVE, NEGATIVE)

    def fold_in(self, X: sp.spmatrix) -> np.ndarray:
        """Non-negative coefficients g, shape (n_new, 2), of documents (n_new, n_words) on the basis F S."""
        X = self._new_documents(X)
        return fold_in(self.F_ @ self.S_, X)

    def _new_documents(self, X: sp.spmatrix, fitted: str = "F_") -> sp.csr_matrix:
        """X checked as new documents for the `fitted` state (one row or entry per vocabulary word)."""
        if not hasattr(self, fitted):
            raise NotFittedError("This model is not fitted yet: call `fit` first.")
        return check_matrix(X, n_words=len(getattr(self, fitted)))

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's estimator tags: sparse non-negative X, y optional."""
        from sklearn.utils import ClassifierTags, InputTags, Tags, TargetTags

        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    input_tags=InputTags(sparse=True, positive_only=True),
                    classifier_tags=ClassifierTags(multi_class=False), transformer_tags=None, regressor_tags=None)

    def _checked_lexicon_prior(self, n_words: int) -> np.ndarray:
        if self.lexicon_prior is None:
            if self.alpha > 0:
                raise ValueError(f"{type(self).__name__} has no lexicon: pass lexicon_prior (an (n_words, 2) array, "
                                 "e.g. from `lexicon_prior(vocabulary, positive_words, negative_words)`), or set "
                                 "alpha=0 for plain TNMF.")
            return np.zeros((n_words, N_CLASSES))
        F0 = np.asarray(self.lexicon_prior, dtype=np.float64)
        if F0.shape != (n_words, N_CLASSES):
            raise ValueError(f"lexicon_prior must have shape ({n_words}, 2) for the {n_words} words (columns) of X, "
                             f"got {F0.shape}.")
        if (F0 < 0).any() or not np.isfinite(F0).all():
            raise ValueError("lexicon_prior must be finite and non-negative.")
        if self.alpha > 0 and not F0.any():
            raise ValueError("No lexicon word is in the vocabulary, so the lexicon prior is empty. Check that the "
                             "lexicon and the documents use the same tokens (lower case, lemmas, stems), or use "
                             "alpha=0.")
        return F0

    def _objective(self) -> float:
        F, S, G = self.F_, self.S_, self.G_
        XG = self._X @ G
        fit = self._sq_norm_X - 2 * np.sum(S * (F.T @ XG)) + np.sum(((F.T @ F) @ S @ (G.T @ G)) * S)
        prior_F = self.alpha * np.sum(((F - self._F0) ** 2)[self._c1])
        prior_G = self.beta_ * np.sum(((G - self._G0) ** 2)[self._c2])
        return float(fit + prior_F + prior_G)


@dataclass(eq=False, repr=False)
class SSMFLK(MFLK):
    """MFLK plus a prior on labelled documents (docs/algorithms.md, 4.9): `fit(X, y)` with y 0 (positive),
    1 (negative) or -1 (unlabelled) per document.

    beta (float): Weight of the label prior; with beta_scale="fit" beta = 1 makes a labelled row of G at 0 cost an
        average document's share of the fit at F S G^T = 0 (the weight used is `beta_`), with "one" it is as printed.
    beta_scale (str): "fit" or "one".
    label_start (float): Weight of the labelled class sums X_L G0_L in the start of F (0: the printed start).
    label_min_docs (int): Words in fewer labelled documents are left out of those sums.
    start_weights (str): "uniform" (the sums) or "frequency" (each word's labelled class distribution times the
        number of labelled documents it occurs in).
    label_prior (float): Weight of `label_word_prior` added to F0.
    lexicon_prior, ..., random_state: MFLK's parameters, which come first.
    """

    _parameter_constraints = {
        **MFLK._parameter_constraints,
        "beta": rule(Interval("real", 0, None)),
        "beta_scale": rule(Options(*BETA_SCALES)),
        "label_start": rule(Interval("real", 0, None)),
        "label_min_docs": rule(Interval("int", 1, None)),
        "start_weights": rule(Options(*START_WEIGHTS)),
        "label_prior": rule(Interval("real", 0, None)),
    }

    beta: float = 1.0
    beta_scale: str = "fit"
    label_start: float = 0.05
    label_min_docs: int = 2
    start_weights: str = "uniform"
    label_prior: float = 0.0


def _least_squares_S(X: sp.csr_matrix, F: np.ndarray, G: np.ndarray) -> np.ndarray:
    # pinv stays defined when k-means leaves a cluster empty
    return np.linalg.pinv(F) @ np.asarray(X @ G) @ np.linalg.pinv(G.T @ G)


def _multiply(factor: np.ndarray, num: np.ndarray, den: np.ndarray, root: bool) -> np.ndarray:
    ratio = num / (den + _OFFSET_EPS)
    if root:
        ratio = np.sqrt(ratio)
    return np.maximum(factor * ratio, _FLOOR)
