"""SSMFLK: MFLK with a few labelled documents as a second prior (Li, Zhang & Sindhwani 2009)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..params import Interval, Options, rule
from .factorization import BETA_SCALES, START_WEIGHTS, MFLK, LabelSettings


class SSMFLK(MFLK):
    """Semi-supervised MFLK: the lexicon prior plus a prior on labelled documents (docs/algorithms.md, 4.9).

    `fit(X, y)` takes y with 0 (positive), 1 (negative) or -1 (unlabelled) per document; without labelled
    documents it fits MFLK.

    beta (float): Weight of the document-label prior. With `beta_scale="fit"` (default) beta = 1 makes a labelled
        document's label term, its row of G at 0, cost an average document's share of the fit at F S G^T = 0;
        the weight used is `beta_`. With `beta_scale="one"` beta is used as printed.
    beta_scale (str): "fit" (default) or "one" (see beta).
    label_start (float): Weight of the labelled documents' class sums X_L G0_L in the start of F (default 0.05;
        each column scaled to the norm of F's); with init="lexicon" the unlabelled rows of G start at the classes
        argmax X^T F of that F. 0 gives the printed start.
    label_min_docs (int): Words found in fewer labelled documents are left out of those sums (default 2).
    start_weights (str): "uniform" (default; the sums as they are) or "frequency" (each word's class
        distribution in the labelled documents times the number of them it occurs in).
    label_prior (float): Weight lambda of each word's class distribution in the labelled documents
        (`label_word_prior`) added to F0 (default 0: the lexicon's F0 alone).
    lexicon_prior, alpha, update, init, prior_scale, max_iter, tol, offset, n_init, random_state: MFLK's
        parameters (keyword-only here), with its defaults.
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

    def __init__(
        self,
        beta: float = 1.0, beta_scale: str = "fit", label_start: float = 0.05, label_min_docs: int = 2,
        start_weights: str = "uniform", label_prior: float = 0.0,
        *, lexicon_prior: Optional[np.ndarray] = None, alpha: float = 0.5, update: str = "monotone",
        init: str = "lexicon", prior_scale: str = "unit", max_iter: int = 100, tol: float = 1e-4, offset: float = 0.2,
        n_init: int = 1, random_state: int = 0,
    ) -> None:
        super().__init__(lexicon_prior=lexicon_prior, alpha=alpha, update=update, init=init,
                         prior_scale=prior_scale, max_iter=max_iter, tol=tol, offset=offset, n_init=n_init,
                         random_state=random_state)
        self.beta = beta
        self.beta_scale = beta_scale
        self.label_start = label_start
        self.label_min_docs = label_min_docs
        self.start_weights = start_weights
        self.label_prior = label_prior

    def _label_settings(self) -> Optional[LabelSettings]:
        return LabelSettings(*(getattr(self, name) for name in LabelSettings._fields))
