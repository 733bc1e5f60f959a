"""NMTF test problems (the printed T8 example, random sparse problems) and dense references."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import strategies as st

from spacy_treeboost.nmtf import normalize_columns
from spacy_treeboost.nmtf.checks import check_matrix


T8_WORDS = ["good", "bad", "great", "movie"]
T8_COUNTS = np.array([[2, 0, 1], [0, 2, 0], [1, 0, 0], [1, 1, 1]], dtype=float)
T8_F0 = np.array([[1, 0], [0, 1], [1, 0], [0, 0]], dtype=float)
T8_CLUSTERS = np.array([0, 1, 0])


@pytest.fixture
def t8_X():
    """T8's documents as rows (the estimators' orientation); T8_COUNTS is words x documents."""
    return sp.csr_matrix((T8_COUNTS / np.linalg.norm(T8_COUNTS, axis=0)).T)


def random_problem(seed, m, n, density, labelled=0.0):
    """A random sparse document-term matrix (n documents x m words) with a partial lexicon and labels."""
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=density, random_state=rng, format="csc")
    X = X + sp.csc_matrix((np.ones(n), (rng.integers(0, m, n), np.arange(n))), shape=(m, n))
    X = normalize_columns(X).T.tocsr()
    F0 = np.zeros((m, 2))
    rows = rng.choice(m, size=max(2, m // 4), replace=False)
    polarity = rng.integers(0, 2, len(rows))
    polarity[:2] = (0, 1)
    F0[rows, polarity] = 1.0
    y = np.where(rng.uniform(size=n) < labelled, rng.integers(0, 2, n), -1)
    return X, F0, y


problems = st.tuples(
    st.integers(0, 2**31), st.integers(4, 30), st.integers(4, 30), st.floats(0.05, 0.6), st.floats(0.0, 0.7)
)


def unit_priors(F0, y, n):
    """F0 and G0 on the factors' scale, computed independently: F0 / column norm;
    labelled rows of G0 at 1 / sqrt(n * share of their class among the labels)."""
    F0u = F0 / np.where(np.linalg.norm(F0, axis=0) > 0, np.linalg.norm(F0, axis=0), 1.0)
    G0 = np.zeros((n, 2))
    labelled = [j for j in range(n) if y[j] != -1]
    for j in labelled:
        share = sum(y[i] == y[j] for i in labelled) / len(labelled)
        G0[j, y[j]] = 1.0 / np.sqrt(max(share * n, 1.0))
    return F0u, G0


def dense_objective(X, F, S, G, F0, G0, alpha, beta):
    X = X.toarray().T
    C1 = np.diag((F0.sum(axis=1) > 0).astype(float))
    C2 = np.diag((G0.sum(axis=1) > 0).astype(float))
    return (
        np.linalg.norm(X - F @ S @ G.T) ** 2
        + alpha * np.trace((F - F0).T @ C1 @ (F - F0))
        + beta * np.trace((G - G0).T @ C2 @ (G - G0))
    )


def _pinned_problem():
    rng = np.random.default_rng(20261130)
    X = sp.random(40, 60, density=0.2, random_state=7, format="csr")
    F0 = np.zeros((40, 2))
    F0[:8, 0] = 1
    F0[8:16, 1] = 1
    y = np.where(rng.uniform(size=60) < 0.3, rng.integers(0, 2, size=60), -1)
    return X.T, F0, y


def start_classes(X, model) -> np.ndarray:
    """argmax X^T F over the model's F (checked against a dense reference beforehand), computed with the
    model's own sparse product: a document whose two classes score the same (common when its words carry
    no polarity) is split by rounding, which a dense product rounds differently."""
    return np.argmax(np.asarray(check_matrix(X).T.tocsr().T @ model.F_), axis=1)
