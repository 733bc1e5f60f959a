"""SSMFLK: MFLK with a few labelled documents as a second prior (Li, Zhang & Sindhwani 2009)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from .common import sp
from .factorization import MFLK


class SSMFLK(MFLK):
    """Semi-supervised MFLK: the lexicon prior plus a prior on labelled documents.

    alpha (float): Weight of the lexicon prior.
    beta (float): Weight of the document-label prior. With `beta_scale="fit"`
        (default) it is relative: beta = 1 makes each labelled document's
        label term, with its row of G at 0, cost as much as an average
        document's share of the fit term at F S G^T = 0 (||X||^2 / n); the
        weight used in J is `beta_` = beta * (||X||^2 / n) / mean ||G0_j||^2 over
        the labelled rows j. With `beta_scale="one"` beta is used as printed.
    update (str): "monotone" (default), "sqrt" or "as_printed".
    init (str): Start of the unlabelled rows of G: "lexicon" (default) or "kmeans".
    prior_scale (str): "unit" (default) or "one".
    max_iter (int): Largest number of iterations run by `fit`.
    tol (float): Relative change in G below which iteration stops.
    offset (float): Added to the initial F0, one-hot G and labelled rows.
    n_init (int): k-means restarts when k-means is used.
    random_state (int): Seed of the k-means initialization.
    beta_scale (str): "fit" (default; beta relative to the fit per labelled
        document, see beta) or "one" (beta used as is, as printed).
    label_start (float): Weight of the labelled documents in the start of F
        (default 0.05): F starts at F0 + offset plus `label_start` times the
        labelled documents' class sums X_L G0_L (each column scaled to the norm
        of F's column), and with init="lexicon" the unlabelled rows of G start
        at the classes argmax X^T F of that F. 0 gives the start of MFLK
        (and of the printed algorithm).
    label_min_docs (int): Words found in fewer labelled documents are left out
        of those class sums (default 2: a word seen in one labelled document
        would weigh as much as a frequent one, given unit-norm word rows).
    """

    def __init__(
        self,
        alpha: float = 0.5,
        beta: float = 1.0,
        update: str = "monotone",
        init: str = "lexicon",
        prior_scale: str = "unit",
        max_iter: int = 100,
        tol: float = 1e-4,
        offset: float = 0.2,
        n_init: int = 1,
        random_state: int = 0,
        beta_scale: str = "fit",
        label_start: float = 0.05,
        label_min_docs: int = 2,
    ) -> None:
        super().__init__(
            alpha=alpha,
            update=update,
            init=init,
            prior_scale=prior_scale,
            max_iter=max_iter,
            tol=tol,
            offset=offset,
            n_init=n_init,
            random_state=random_state,
        )
        self.beta = beta
        self.beta_scale = beta_scale
        self.label_start = label_start
        self.label_min_docs = label_min_docs

    @property
    def _beta(self) -> float:  # type: ignore[override]
        return self.beta

    @property
    def _beta_scale(self) -> str:  # type: ignore[override]
        return self.beta_scale

    @property
    def _label_start(self) -> float:  # type: ignore[override]
        return self.label_start

    @property
    def _label_min_docs(self) -> int:  # type: ignore[override]
        return self.label_min_docs

    def fit(  # type: ignore[override]
        self, X: sp.spmatrix, F0: np.ndarray, y: np.ndarray, init_clusters: Optional[np.ndarray] = None
    ) -> "SSMFLK":
        """Factorize X with the lexicon prior and the labels of some documents.

        X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
        F0 (numpy.ndarray): Lexicon prior, shape (m, 2).
        y (numpy.ndarray): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
        init_clusters (Optional[numpy.ndarray]): Cluster ids replacing k-means.
        RETURNS (SSMFLK): The fitted estimator.
        """
        self.initialize(X, F0, y, init_clusters=init_clusters)
        return self.iterate(self.max_iter)  # type: ignore[return-value]

    def fit_predict(self, X: sp.spmatrix, F0: np.ndarray, y: np.ndarray) -> np.ndarray:  # type: ignore[override]
        """Fit and return the transductive class of every document.

        X (scipy.sparse.spmatrix): Term-document matrix, shape (m, n).
        F0 (numpy.ndarray): Lexicon prior, shape (m, 2).
        y (numpy.ndarray): 0, 1 or -1 (unlabelled) per document.
        RETURNS (numpy.ndarray): 0 (positive) or 1 (negative) per document.
        """
        return self.fit(X, F0, y).labels_
