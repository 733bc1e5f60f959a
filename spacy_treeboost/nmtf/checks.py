"""Input checks of the NMTF estimators, with messages that say how to fix the input (their parameters are
checked by `spacy_treeboost.params.validate_params` against each estimator's `_parameter_constraints`)."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from .common import N_CLASSES, NEGATIVE, POSITIVE, UNLABELLED, sp
from .start import one_hot


def check_matrix(X: Any, allow_empty: bool = False) -> sp.csr_matrix:
    """X as a float64 CSR matrix of shape (n_documents, n_words), checked to be finite and non-negative.

    X (Any): A scipy.sparse matrix or a numpy array.
    allow_empty (bool): Accept no documents, or documents without any vocabulary word.
    RETURNS (scipy.sparse.csr_matrix): The checked matrix.
    """
    if not (sp.issparse(X) or isinstance(X, np.ndarray)):
        raise TypeError(f"X must be a scipy.sparse matrix or numpy array, got {type(X).__name__}.")
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional (documents x words), got {X.ndim} dimensions.")
    X = sp.csr_matrix(X, dtype=np.float64)
    if not allow_empty and (X.shape[0] == 0 or X.shape[1] == 0):
        raise ValueError(f"X is empty (shape {X.shape}): pass at least one document and one word.")
    if not allow_empty and X.nnz == 0:
        raise ValueError("X has no non-zero entry: no document contains a vocabulary word.")
    if X.nnz and ((X.data < 0).any() or not np.isfinite(X.data).all()):
        raise ValueError("X must be finite and non-negative (a document-term matrix of counts or frequencies).")
    return X


def document_prior(y: Optional[np.ndarray], n: int) -> Tuple[np.ndarray, np.ndarray]:
    """G0 (one-hot rows of the labelled documents) and the mask of labelled documents.

    y (Optional[numpy.ndarray]): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
    n (int): The number of documents.
    RETURNS (Tuple[numpy.ndarray, numpy.ndarray]): G0, shape (n, 2), and the mask, shape (n,).
    """
    if y is None:
        return np.zeros((n, N_CLASSES)), np.zeros(n, dtype=bool)
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must hold one label per document ({n}), got shape {y.shape}.")
    if not np.isin(y, (UNLABELLED, POSITIVE, NEGATIVE)).all():
        bad = sorted(set(np.unique(y).tolist()) - {UNLABELLED, POSITIVE, NEGATIVE})
        raise ValueError(f"y must hold 0 (positive), 1 (negative) or -1 (unlabelled); found {bad[:5]}.")
    return one_hot(y), y != UNLABELLED
