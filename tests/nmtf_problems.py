"""NMTF test problems (the printed T8 example, random sparse problems) and dense references."""
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import strategies as st

from spacy_treeboost.nmtf import normalize_columns
from spacy_treeboost.nmtf.common import check_matrix


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


# ---- the pinned problem's committed factors ---------------------------------------------------------
# Written by `python tests/nmtf_problems.py`, only on purpose. The factors of every fit were computed by the
# code of an earlier version, on one machine; `PINNED_HASHES` are the sha256 of those bytes (F, S, G), so the
# committed floats are checked to be that output without depending on the machine that runs the tests.

PINNED_REFERENCE = Path(__file__).parent / "data" / "nmtf_pinned.msgpack"
PINNED_FITS = {
    # MFLK's defaults (before the label weight relative to the fit and the labelled start, commit 97284f6)
    "mflk": ("MFLK", {}),
    "ssmflk_printed_labels": ("SSMFLK", {"beta_scale": "one", "label_start": 0.0}),
    "mflk_printed": ("MFLK", {"update": "sqrt", "init": "kmeans", "prior_scale": "one"}),
    # SSMFLK's defaults before the third round of label levers (commit ce9a77e)
    "ssmflk": ("SSMFLK", {}),
    "ssmflk_other": ("SSMFLK", {"label_min_docs": 1, "label_start": 0.2, "label_prior": 0.0}),
}
PINNED_HASHES = {
    "mflk": "84d0e3cb15ae9a8621bf8476fb48c8151350d7c1417d3cf187ef61622cdb84a0",
    "ssmflk_printed_labels": "68dc2092b9bd138b511340cdc9c1563015a6c1cd9ebe72d576eb04c20eb6c816",
    "mflk_printed": "50c67f6f674359abeeb6226a0b7d6581ac0cbde7961792e5b2332c952c81e0b2",
    "ssmflk": "21e38b9af2f769ac7dec6507b29e2c92393d2c08d110d19ef59083128c170a24",
    "ssmflk_other": "fe8f706b228e2b579f3669770b8a701d0cbc0ba4b7eeae00a938444718b804af",
}
# The factors' tolerance, relative to each matrix's largest entry. A fit is 100 multiplicative updates, each
# a product with the 60 x 40 document-term matrix (sums of at most 60 terms) and 2 x 2 products; rounding a
# sum of n terms errs by at most n * u of the sum of their magnitudes (u = 2**-53), so to first order the
# factors are off by at most 100 * 60 * u = 6.7e-13 of their scale, on a machine whose kernels round
# differently. 1e-10 leaves a factor of about 150 for the updates' ratios. Measured with numpy's dispatch
# turned down to its baseline and OpenBLAS on Sandybridge kernels: at most 3.7e-15. The iteration count
# and convergence flag are compared exactly.
PINNED_RTOL = 1e-10


def pinned_fit(name, **changes):
    """The pinned problem's fit `name` of `PINNED_FITS` (its settings updated by `changes`)."""
    from spacy_treeboost.nmtf import MFLK, SSMFLK

    X, F0, y = _pinned_problem()
    kind, params = PINNED_FITS[name]
    if kind == "MFLK":
        return MFLK(lexicon_prior=F0, **params, **changes).fit(X)
    return SSMFLK(lexicon_prior=F0, **params, **changes).fit(X, y)


def fitted_factors(model):
    """What the reference holds of a fit: F, S, G, the objective per iteration, the iteration count, convergence."""
    return {"F": model.F_.tolist(), "S": model.S_.tolist(), "G": model.G_.tolist(),
            "objective": [float(v) for v in model.objective_], "n_iter": int(model.n_iter_),
            "converged": bool(model.converged_)}


def factor_hash(factors):
    """sha256 of F, S and G as float64 bytes in C order (of a fit's `fitted_factors` or a model's arrays)."""
    import hashlib

    return hashlib.sha256(b"".join(np.ascontiguousarray(factors[k], dtype=np.float64).tobytes()
                                   for k in "FSG")).hexdigest()


def pinned_reference(name):
    import srsly

    return srsly.read_msgpack(PINNED_REFERENCE)[name]


if __name__ == "__main__":
    import srsly

    fits = {name: fitted_factors(pinned_fit(name)) for name in PINNED_FITS}
    changed = [name for name, factors in fits.items() if factor_hash(factors) != PINNED_HASHES[name]]
    if changed:
        raise SystemExit(f"The fits {changed} are not the pinned output on this machine; the reference is the output "
                         "of the code that PINNED_HASHES names: write it on a machine that reproduces it.")
    srsly.write_msgpack(PINNED_REFERENCE, fits)
    print("wrote", PINNED_REFERENCE)
