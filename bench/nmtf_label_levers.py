"""SSMFLK variants for the label ablation of bench/nmtf_experiments.py that the estimator does not
offer as settings: they change the scale of the labelled documents or the start of the unlabelled rows, and
were tried on the development part only (none became a default)."""
from typing import Any, Optional

import numpy as np
import scipy.sparse as sp

from spacy_treeboost.nmtf import SSMFLK, one_hot, unit_columns
from spacy_treeboost.nmtf.factorization import _least_squares_S


class LabelLever(SSMFLK):
    """SSMFLK with one of three changes after the usual start (label_rows, label_weight or soft_start).

    label_rows (float): G0's labelled rows and their start multiplied by this factor (G0 scaling).
    label_weight (float): The labelled documents weigh `label_weight` times as much as all unlabelled ones in
        the fit: their rows of X and of G0 (and start) are scaled by c = sqrt(label_weight * n_U / n_L), so each
        labelled document's fit term is c^2 times an unlabelled one's (0: unchanged).
    soft_start (Optional[float]): The unlabelled rows start at one-hot + soft_start instead of one-hot + offset.
    """

    def __init__(self, label_rows: float = 1.0, label_weight: float = 0.0, soft_start: Optional[float] = None,
                 **params: Any) -> None:
        super().__init__(**params)
        self.label_rows = label_rows
        self.label_weight = label_weight
        self.soft_start = soft_start

    def initialize(self, X: Any, y: Optional[np.ndarray] = None, **kwargs: Any) -> "LabelLever":
        labelled = np.zeros(X.shape[0], dtype=bool) if y is None else np.asarray(y) != -1
        n_labelled = int(labelled.sum())
        factor = self.label_rows
        if self.label_weight > 0 and n_labelled:
            factor = float(np.sqrt(max(1.0, self.label_weight * (len(labelled) - n_labelled) / n_labelled)))
            X = sp.diags(np.where(labelled, factor, 1.0)) @ sp.csr_matrix(X)
        super().initialize(X, y, **kwargs)
        if not n_labelled:
            return self
        G = self.G_.copy()
        if self.soft_start is not None:
            unlabelled = ~labelled
            start = unit_columns(one_hot(np.argmax(G, axis=1)) + self.soft_start)
            G[unlabelled] = start[unlabelled] * (np.linalg.norm(G[unlabelled], axis=0)
                                                 / np.linalg.norm(start[unlabelled], axis=0))
        G[labelled] *= factor
        self._G0 = self._G0 * np.where(labelled, factor, 1.0)[:, None]
        self.G_ = G
        # beta_ stays as computed for the unscaled G0 rows: the label term holds the labelled rows either way
        self.S_ = np.maximum(_least_squares_S(self._X, self.F_, self.G_), 1e-9)
        self.objective_ = [self._objective()]
        return self
