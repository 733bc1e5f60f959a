"""SSMFLK: MFLK with a few labelled documents as a second prior (Li, Zhang & Sindhwani 2009)."""
from __future__ import annotations

from typing import Optional

import numpy as np

from ..params import Interval, Options, rule
from .factorization import BETA_SCALES, START_WEIGHTS, MFLK, LabelSettings


class SSMFLK(MFLK):
    """Semi-supervised MFLK: the lexicon prior plus a prior on labelled documents.

    `fit(X, y)` takes y with 0 (positive), 1 (negative) or -1 (unlabelled) per
    document, scikit-learn's semi-supervised convention; without labelled documents
    it fits MFLK.

    beta (float): Weight of the document-label prior. With `beta_scale="fit"`
        (default) it is relative: beta = 1 makes each labelled document's
        label term, with its row of G at 0, cost as much as an average
        document's share of the fit term at F S G^T = 0 (||X||^2 / n); the
        weight used in J is `beta_` = beta * (||X||^2 / n) / mean ||G0_j||^2 over
        the labelled rows j. With `beta_scale="one"` beta is used as printed.
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
    start_weights (str): How words enter those class sums: "uniform" (default; each
        word's sums X_L G0_L as they are, so with unit-norm word rows every word
        counts about the same) or "frequency" (each word's class distribution in the
        labelled documents times the number of labelled documents it occurs in).
    label_prior (float): Weight lambda of the labelled documents in the lexicon prior
        (default 0: F0 is the lexicon's). With lambda > 0, F0 is the lexicon's rows
        plus lambda times each word's class distribution in the labelled documents
        (`label_word_prior`, over the words of >= label_min_docs labelled documents),
        used in the start and in the prior term alpha ||F - F0||^2 like the lexicon.
    lexicon_prior, alpha, update, init, prior_scale, max_iter, tol, offset, n_init,
        random_state: MFLK's parameters (keyword-only here), with its defaults.
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
