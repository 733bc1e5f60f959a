"""What the NMTF models share: class ids, lazily imported scipy.sparse, data checks, starting points and
priors, and the NNLS fold-in."""
from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any, Optional, Tuple

import numpy as np


class _Lazy:
    """A module imported on first use (creating a `Language` imports the factories, and must not import scipy)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(import_module(self._name), attr)


if TYPE_CHECKING:
    import scipy.sparse as sp
else:
    sp = _Lazy("scipy.sparse")

N_CLASSES = 2
POSITIVE, NEGATIVE = 0, 1
UNLABELLED = -1


def one_hot(labels: np.ndarray) -> np.ndarray:
    """Rows (1, 0) for class 0, (0, 1) for class 1 and zeros for UNLABELLED (-1), shape (len(labels), 2)."""
    labels = np.asarray(labels)
    out = np.zeros((len(labels), N_CLASSES))
    known = labels != UNLABELLED
    out[np.flatnonzero(known), labels[known].astype(np.int64)] = 1.0
    return out


def align_clusters(X: sp.spmatrix, F0: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """The cluster ids (0/1 per document), swapped if the permutation P maximizing trace(F0^T X G P) swaps them.

    X (scipy.sparse.spmatrix): Document-term matrix, shape (n_documents, n_words).
    F0 (numpy.ndarray): Lexicon prior, shape (n_words, 2).
    """
    clusters = np.asarray(clusters, dtype=np.int64)
    M = F0.T @ np.asarray(X.T @ one_hot(clusters))
    if M[0, 1] + M[1, 0] > M[0, 0] + M[1, 1]:
        return 1 - clusters
    return clusters


def lexicon_classes(X: sp.spmatrix, F0: np.ndarray) -> np.ndarray:
    """Class (0/1) of each document under the lexicon prior F0 alone, argmax (X F0); ties go to positive."""
    score = np.asarray(sp.csr_matrix(X) @ np.asarray(F0, dtype=np.float64))
    return np.argmax(score, axis=1).astype(np.int64)


def label_word_prior(X: sp.csr_matrix, G0: np.ndarray, labelled: np.ndarray, min_docs: int) -> np.ndarray:
    """Each word's class distribution in the labelled documents: row i is (sum_j X_ij G0_j) / sum_j X_ij over the
    labelled j, zeros for words in fewer than `min_docs` of them.

    X (scipy.sparse.csr_matrix): Term-document matrix, shape (n_words, n_documents).
    G0 (numpy.ndarray): One-hot labels, shape (n_documents, 2).
    labelled (numpy.ndarray): Mask of the labelled documents.
    """
    sums = np.asarray(X[:, labelled] @ G0[labelled])
    totals = sums.sum(axis=1, keepdims=True)
    shares = sums / np.where(totals > 0, totals, 1.0)
    shares[np.asarray((X[:, labelled] > 0).sum(axis=1)).ravel() < min_docs] = 0.0
    return shares


def unit_columns(M: np.ndarray) -> np.ndarray:
    """A copy of a dense matrix with every non-zero column scaled to unit L2 norm."""
    sizes = np.linalg.norm(M, axis=0)
    return M / np.where(sizes > 0, sizes, 1.0)


def kmeans_clusters(X: sp.spmatrix, seed: int, max_dense: int = 20_000_000, n_components: int = 100,
                    n_init: int = 1) -> np.ndarray:
    """Two-means clusters (0/1) of the rows of X by scipy's kmeans2; beyond `max_dense` entries the rows are first
    projected on their leading `n_components` singular vectors. Of `n_init` restarts the lowest inertia wins."""
    n, m = X.shape
    if n < N_CLASSES:
        raise ValueError(f"k-means needs at least {N_CLASSES} documents, got {n}.")
    if n_init < 1:
        raise ValueError(f"n_init must be at least 1, got {n_init}.")
    if m * n <= max_dense:
        data = np.asarray(X.todense(), dtype=np.float64)
    else:
        rank = min(n_components, min(m, n) - 1)
        v0 = np.random.default_rng(seed).uniform(size=min(m, n))
        from scipy.sparse.linalg import svds

        u, s, vt = svds(sp.csr_matrix(X), k=rank, v0=v0, random_state=seed)
        data = u * s
    from scipy.cluster.vq import kmeans2

    rng = np.random.default_rng(seed)
    best, best_cost = None, np.inf
    for _ in range(n_init):
        centroids, clusters = kmeans2(data, N_CLASSES, iter=30, minit="++", seed=rng)
        cost = float(np.sum((data - centroids[clusters]) ** 2))
        if cost < best_cost:
            best, best_cost = clusters, cost
    return np.asarray(best, dtype=np.int64)


def fold_in(B: np.ndarray, X_new: sp.spmatrix) -> np.ndarray:
    """min_{g >= 0} ||x - B g||^2 for every row x of X_new (shape (n_new, m)) and the basis B = F S (shape (m, 2)):
    the feasible active-set candidate (both columns, one, or none) with the smallest residual, shape (n_new, 2)."""
    BtB = B.T @ B
    Btx = np.asarray(sp.csr_matrix(X_new) @ B)
    n_new = Btx.shape[0]
    candidates = [np.zeros((n_new, 2))]
    for k in range(N_CLASSES):
        single = np.zeros((n_new, 2))
        if BtB[k, k] > 0:
            single[:, k] = np.maximum(Btx[:, k] / BtB[k, k], 0.0)
        candidates.append(single)
    det = BtB[0, 0] * BtB[1, 1] - BtB[0, 1] * BtB[1, 0]
    if det > 1e-12 * max(BtB[0, 0] * BtB[1, 1], 1e-300):
        both = np.linalg.solve(BtB, Btx.T).T
        both[(both < 0).any(axis=1)] = 0.0
        candidates.append(both)
    # residual up to the constant ||x||^2: g^T BtB g - 2 g^T Btx
    costs = np.stack([np.einsum("ij,jk,ik->i", g, BtB, g) - 2 * np.einsum("ij,ij->i", g, Btx) for g in candidates])
    best = np.argmin(costs, axis=0)
    return np.stack(candidates)[best, np.arange(n_new)]


def check_matrix(X: Any, n_words: Optional[int] = None) -> sp.csr_matrix:
    """X (sparse or dense, documents x words) as a finite, non-negative float64 CSR matrix: training documents, or
    with `n_words` new documents (possibly none, possibly without any vocabulary word) over that many words."""
    if not (sp.issparse(X) or isinstance(X, np.ndarray)):
        raise TypeError(f"X must be a scipy.sparse matrix or numpy array, got {type(X).__name__}.")
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional (documents x words), got {X.ndim} dimensions.")
    X = sp.csr_matrix(X, dtype=np.float64)
    if n_words is None and (X.shape[0] == 0 or X.shape[1] == 0):
        raise ValueError(f"X is empty (shape {X.shape}): pass at least one document and one word.")
    if n_words is None and X.nnz == 0:
        raise ValueError("X has no non-zero entry: no document contains a vocabulary word.")
    if X.nnz and ((X.data < 0).any() or not np.isfinite(X.data).all()):
        raise ValueError("X must be finite and non-negative (a document-term matrix of counts or frequencies).")
    if n_words is not None and X.shape[1] != n_words:
        raise ValueError(f"X must have one column per vocabulary word ({n_words}), got {X.shape[1]}.")
    return X


def document_prior(y: Optional[np.ndarray], n: int) -> Tuple[np.ndarray, np.ndarray]:
    """G0 (one-hot labels, shape (n, 2)) and the mask of labelled documents for y (0, 1 or -1 per document)."""
    if y is None:
        return np.zeros((n, N_CLASSES)), np.zeros(n, dtype=bool)
    y = np.asarray(y)
    if y.shape != (n,):
        raise ValueError(f"y must hold one label per document ({n}), got shape {y.shape}.")
    if not np.isin(y, (UNLABELLED, POSITIVE, NEGATIVE)).all():
        bad = sorted(set(np.unique(y).tolist()) - {UNLABELLED, POSITIVE, NEGATIVE})
        raise ValueError(f"y must hold 0 (positive), 1 (negative) or -1 (unlabelled); found {bad[:5]}.")
    return one_hot(y), y != UNLABELLED
