"""MFLK / SSMFLK: test vector T8, brute-force references on random inputs, bad input."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import nnls

from spacy_treeboost.nmtf.common import check_matrix
from spacy_treeboost.exceptions import NotFittedError
from spacy_treeboost.nmtf import (
    ENGLISH_STOP_WORDS,
    MFLK,
    SSMFLK,
    align_clusters,
    build_vocabulary,
    fold_in,
    kmeans_clusters,
    lexicon_classes,
    lexicon_prior,
    normalize_columns,
    one_hot,
    porter_stem,
    document_term_matrix,
    unit_columns,
    word_weights,
)
from differences import first_difference
from nmtf_problems import (T8_WORDS, T8_F0, T8_CLUSTERS, t8_X, random_problem, problems,
                           unit_priors, dense_objective, _pinned_problem, start_classes)  # noqa: F401 (t8_X is a fixture)
from nmtf_problems import (PINNED_FITS, PINNED_HASHES, PINNED_RTOL, factor_hash, fitted_factors, pinned_fit,
                           pinned_reference)

# The printed algorithm (T8): orthogonal rules, k-means start, 0/1 priors, one k-means run.
PRINTED = {"update": "sqrt", "init": "kmeans", "prior_scale": "one"}
# SSMFLK's label weight and start as printed (before the label weight relative to the fit and the labelled start).
PRINTED_LABELS = {"beta_scale": "one", "label_start": 0.0}


def dense_iteration(X, F, S, G, F0, G0, alpha, beta, root, monotone=False):
    """One G -> F -> S iteration forming G G^T and F F^T: the printed rules, or the
    monotone ones (denominators F S G^T G S^T, G S^T F^T F S, C1 F, C2 G), on the paper's
    words x documents matrix X^T."""
    X = X.toarray().T
    C1 = np.diag((F0.sum(axis=1) > 0).astype(float))
    C2 = np.diag((G0.sum(axis=1) > 0).astype(float))

    def step(M, num, den):
        r = num / (den + 1e-10)
        return np.maximum(M * (np.sqrt(r) if root else r), 1e-16)

    if monotone:
        G = step(G, X.T @ F @ S + beta * C2 @ G0, G @ S.T @ F.T @ F @ S + beta * C2 @ G)
        F = step(F, X @ G @ S.T + alpha * C1 @ F0, F @ S @ G.T @ G @ S.T + alpha * C1 @ F)
    else:
        G = step(G, X.T @ F @ S + beta * C2 @ G0, G @ G.T @ X.T @ F @ S + beta * G @ G.T @ C2 @ G0)
        F = step(F, X @ G @ S.T + alpha * C1 @ F0, F @ F.T @ X @ G @ S.T + alpha * C1 @ F)
    S = step(S, F.T @ X @ G, F.T @ F @ S @ G.T @ G)
    return F, S, G


# ---- T8 -------------------------------------------------------------------------------------


def test_t8_initial_values(t8_X):
    model = MFLK(lexicon_prior=T8_F0, **PRINTED).initialize(t8_X, init_clusters=T8_CLUSTERS)
    np.testing.assert_allclose(model.F_, T8_F0 + 0.2)
    np.testing.assert_allclose(model.G_, one_hot(T8_CLUSTERS) + 0.2)
    np.testing.assert_allclose(model.S_, [[0.387865, 1e-9], [1e-9, 0.689204]], atol=5e-7)
    assert model.objective_ == [pytest.approx(1.340583, abs=1e-6)]


def test_t8_kmeans_finds_the_planted_clusters(t8_X):
    clusters = kmeans_clusters(t8_X, seed=0)
    assert clusters[0] == clusters[2] != clusters[1]
    assert list(align_clusters(t8_X, T8_F0, clusters)) == [0, 1, 0]


@pytest.mark.parametrize(
    "update,G1,S1,J1",
    [
        ("as_printed", [[0.478574, 0.044737], [0.033189, 0.693007], [0.305390, 0.038743]], [1.976397, 1.614642], 0.609585),
        ("sqrt", [[0.757819, 0.094590], [0.081473, 0.911925], [0.605366, 0.088026]], [0.597349, 0.848241], 0.930051),
    ],
)
def test_t8_one_iteration(t8_X, update, G1, S1, J1):
    model = MFLK(lexicon_prior=T8_F0, update=update, init="kmeans", prior_scale="one").initialize(t8_X, init_clusters=T8_CLUSTERS).iterate(1)
    np.testing.assert_allclose(model.G_, G1, atol=5e-7)
    np.testing.assert_allclose(np.diag(model.S_), S1, atol=5e-7)
    assert model.S_[0, 1] < 1e-6 and model.S_[1, 0] < 1e-6
    assert model.objective_[1] == pytest.approx(J1, abs=1e-6)
    assert model.n_iter_ == 1


def test_t8_converged_classes_and_fold_in(t8_X):
    model = MFLK(lexicon_prior=T8_F0, **PRINTED).fit(t8_X)
    assert model.converged_ and model.n_iter_ < 100
    assert list(model.labels_) == [0, 1, 0]
    new = document_term_matrix([["good", "great"], ["bad", "movie"]], T8_WORDS)
    g = model.fold_in(new)
    np.testing.assert_allclose(g, [[0.6209, 0.0], [0.1360, 0.8775]], atol=5e-5)
    assert list(model.predict(new)) == [0, 1]
    np.testing.assert_allclose(model.predict_proba(new), g / g.sum(axis=1, keepdims=True))
    np.testing.assert_allclose(model.decision_function(new), g[:, 0] - g[:, 1])


def test_t8_ssmflk_objective_decreases(t8_X):
    model = SSMFLK(lexicon_prior=T8_F0, beta=1.0, update="as_printed", prior_scale="one", **PRINTED_LABELS)
    model.initialize(t8_X, np.array([0, -1, -1]), init_clusters=T8_CLUSTERS).iterate(1)
    assert model.objective_[0] == pytest.approx(1.420583, abs=1e-6)
    assert model.objective_[1] == pytest.approx(1.002035, abs=1e-6)


def test_swapped_kmeans_result_is_aligned_to_the_lexicon(t8_X):
    swapped = 1 - T8_CLUSTERS
    assert list(align_clusters(t8_X, T8_F0, swapped)) == [0, 1, 0]
    model = MFLK(lexicon_prior=T8_F0, **PRINTED).initialize(t8_X, init_clusters=swapped)
    np.testing.assert_allclose(model.G_, one_hot(T8_CLUSTERS) + 0.2)
    assert list(model.fit(t8_X, init_clusters=swapped).labels_) == [0, 1, 0]
    assert list(MFLK(lexicon_prior=T8_F0).fit(t8_X, init_clusters=swapped).labels_) == [0, 1, 0]


def test_labelled_rows_start_at_their_labels(t8_X):
    model = SSMFLK(lexicon_prior=T8_F0, prior_scale="one").initialize(t8_X, np.array([-1, 0, -1]), init_clusters=T8_CLUSTERS)
    np.testing.assert_allclose(model.G_[1], [1.2, 0.2])
    model = SSMFLK(lexicon_prior=T8_F0).initialize(t8_X, np.array([-1, 0, -1]), init_clusters=T8_CLUSTERS)
    np.testing.assert_allclose(model.G_, unit_columns(np.array([[1.2, 0.2], [1.2, 0.2], [1.2, 0.2]])))


# ---- the defaults: lexicon start, unit-scale priors, monotone rules ----------------------------


def test_t8_default_initial_values(t8_X):
    """Hand-computed: documents 1 and 3 hold more positive weight, document 2 more
    negative; F0 + 0.2 and the one-hot start + 0.2 divided by their column norms."""
    model = MFLK(lexicon_prior=T8_F0).initialize(t8_X)
    F = np.array([[1.2, 0.2], [0.2, 1.2], [1.2, 0.2], [0.2, 0.2]])
    F = F / np.sqrt([[1.44 + 0.04 + 1.44 + 0.04, 0.04 + 1.44 + 0.04 + 0.04]])
    G = np.array([[1.2, 0.2], [0.2, 1.2], [1.2, 0.2]])
    G = G / np.sqrt([[1.44 + 0.04 + 1.44, 0.04 + 1.44 + 0.04]])
    np.testing.assert_allclose(model.F_, F)
    np.testing.assert_allclose(model.G_, G)
    F0u = T8_F0 / np.sqrt([[2.0, 1.0]])
    assert model.objective_[0] == pytest.approx(dense_objective(t8_X, F, model.S_, G, F0u, np.zeros((3, 2)), 0.5, 0.0))
    model.iterate(100)
    assert list(model.labels_) == [0, 1, 0]
    assert list(model.predict(document_term_matrix([["good", "great"], ["bad", "movie"]], T8_WORDS))) == [0, 1]


def test_lexicon_classes_match_counting():
    docs = [["good", "bad", "bad"], ["great", "movie"], ["movie"], ["good", "bad"]]
    X = document_term_matrix(docs, T8_WORDS, norm=None)
    expected = []
    for doc in docs:
        pos = sum(w in ("good", "great") for w in doc)
        neg = sum(w == "bad" for w in doc)
        expected.append(1 if neg > pos else 0)
    assert list(lexicon_classes(X, T8_F0)) == expected == [1, 0, 0, 0]


def numeric_gradient(f, M, h=1e-6):
    grad = np.zeros_like(M)
    for idx in np.ndindex(M.shape):
        up, down = M.copy(), M.copy()
        up[idx] += h
        down[idx] -= h
        grad[idx] = (f(up) - f(down)) / (2 * h)
    return grad


@settings(max_examples=15, deadline=None)
@given(problems)
def test_monotone_rules_split_the_gradient_of_the_objective(problem):
    """num - den of each monotone rule is -1/2 the gradient of J (finite differences),
    so its fixed points are the KKT points of J, the paper's eq. 10."""
    X, F0, y = random_problem(*problem)
    alpha, beta = 0.5, 1.0
    rng = np.random.default_rng(problem[0] % 1000)
    n, m = X.shape
    F, S, G = rng.uniform(0.1, 1, (m, 2)), rng.uniform(0.1, 1, (2, 2)), rng.uniform(0.1, 1, (n, 2))
    G0 = one_hot(y)
    C1 = (F0.sum(axis=1) > 0)[:, None]
    C2 = (y != -1)[:, None]
    Xd = X.toarray().T
    J = lambda F_, S_, G_: dense_objective(X, F_, S_, G_, F0, G0, alpha, beta)  # noqa: E731
    np.testing.assert_allclose(
        (Xd.T @ F @ S + beta * C2 * G0) - (G @ S.T @ F.T @ F @ S + beta * C2 * G),
        -0.5 * numeric_gradient(lambda G_: J(F, S, G_), G), atol=1e-5)
    np.testing.assert_allclose(
        (Xd @ G @ S.T + alpha * C1 * F0) - (F @ S @ G.T @ G @ S.T + alpha * C1 * F),
        -0.5 * numeric_gradient(lambda F_: J(F_, S, G), F), atol=1e-5)
    np.testing.assert_allclose(
        F.T @ Xd @ G - F.T @ F @ S @ G.T @ G, -0.5 * numeric_gradient(lambda S_: J(F, S_, G), S), atol=1e-5)


@settings(max_examples=20, deadline=None)
@given(problems, st.floats(0.0, 2.0), st.floats(0.0, 2.0), st.sampled_from(["unit", "one"]))
def test_monotone_rules_never_increase_the_objective(problem, alpha, beta, prior_scale):
    X, F0, y = random_problem(*problem)
    model = SSMFLK(lexicon_prior=F0, alpha=alpha, beta=beta, prior_scale=prior_scale, max_iter=60, tol=0.0).fit(X, y)
    J = np.array(model.objective_)
    assert np.all(np.diff(J) <= 1e-9 * J[0] + 1e-12)


@settings(max_examples=20, deadline=None)
@given(problems)
def test_unit_scale_priors_and_starts(problem):
    X, F0, y = random_problem(*problem)
    model = SSMFLK(lexicon_prior=F0, beta=1.0, **PRINTED_LABELS).initialize(X, y)
    F0u, G0u = unit_priors(F0, y, X.shape[0])
    np.testing.assert_allclose(np.linalg.norm(model.F_, axis=0), 1.0)
    np.testing.assert_allclose(np.linalg.norm(model.G_, axis=0), 1.0)
    assert model.objective_[0] == pytest.approx(dense_objective(X, model.F_, model.S_, model.G_, F0u, G0u, 0.5, 1.0), rel=1e-9, abs=1e-9)
    expected = dense_iteration(X, model.F_, model.S_, model.G_, F0u, G0u, 0.5, 1.0, root=True, monotone=True)
    model.iterate(1)
    for got, want in zip((model.F_, model.S_, model.G_), expected):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-14)


def test_word_weights_give_unit_word_columns():
    docs = [["good", "good", "movie"], ["bad", "movie"], ["great"], []]
    X = document_term_matrix(docs, T8_WORDS)
    w = word_weights(X)
    weighted = document_term_matrix(docs, T8_WORDS, word_weights=w).toarray()
    np.testing.assert_allclose(weighted, X.toarray() @ np.diag(w))
    np.testing.assert_allclose(np.linalg.norm(weighted, axis=0), 1.0)
    assert word_weights(document_term_matrix([["good"]], T8_WORDS))[1] == 1.0  # word without occurrence
    with pytest.raises(ValueError, match="one finite non-negative factor per vocabulary word"):
        document_term_matrix(docs, T8_WORDS, word_weights=np.ones(3))


def test_kmeans_restarts_keep_the_tightest_clustering():
    rng = np.random.default_rng(4)
    X = sp.csr_matrix(rng.uniform(size=(40, 6)))
    def cost(clusters):
        D = X.toarray()
        return sum(((D[clusters == k] - D[clusters == k].mean(axis=0)) ** 2).sum() for k in (0, 1) if (clusters == k).any())
    single = kmeans_clusters(X, seed=3)
    assert np.array_equal(kmeans_clusters(X, seed=3, n_init=1), single)
    assert cost(kmeans_clusters(X, seed=3, n_init=8)) <= cost(single) + 1e-12
    with pytest.raises(ValueError, match="n_init"):
        kmeans_clusters(X, seed=3, n_init=0)


# ---- random inputs against brute force ---------------------------------------------------------



@settings(max_examples=30, deadline=None)
@given(problems, st.sampled_from(["sqrt", "as_printed"]), st.floats(0.0, 2.0), st.floats(0.0, 2.0))
def test_iteration_matches_dense_printed_rules(problem, update, alpha, beta):
    X, F0, y = random_problem(*problem)
    model = SSMFLK(lexicon_prior=F0, alpha=alpha, beta=beta, update=update, prior_scale="one", beta_scale="one")
    model.initialize(X, y, init_clusters=np.arange(X.shape[0]) % 2)
    G0 = one_hot(y)
    assert model.objective_[0] == pytest.approx(dense_objective(X, model.F_, model.S_, model.G_, F0, G0, alpha, beta), rel=1e-9, abs=1e-9)
    expected = dense_iteration(X, model.F_, model.S_, model.G_, F0, G0, alpha, beta, update == "sqrt")
    model.iterate(1)
    for got, want in zip((model.F_, model.S_, model.G_), expected):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-14)
    assert model.objective_[1] == pytest.approx(dense_objective(X, *expected, F0, G0, alpha, beta), rel=1e-9, abs=1e-9)


@settings(max_examples=20, deadline=None)
@given(problems)
def test_initial_S_is_the_clipped_least_squares_solution(problem):
    X, F0, _ = random_problem(*problem)
    model = MFLK(lexicon_prior=F0).initialize(X, init_clusters=np.arange(X.shape[0]) % 2)
    F, G = model.F_, model.G_
    S_ls = np.linalg.pinv(F) @ X.toarray().T @ np.linalg.pinv(G.T)
    np.testing.assert_allclose(model.S_, np.maximum(S_ls, 1e-9), rtol=1e-7, atol=1e-9)


@settings(max_examples=20, deadline=None)
@given(problems, st.sampled_from(["monotone", "sqrt", "as_printed"]), st.integers(1, 40))
def test_factors_stay_finite_and_nonnegative(problem, update, n_iter):
    X, F0, y = random_problem(*problem)
    model = SSMFLK(lexicon_prior=F0, update=update, max_iter=n_iter, tol=0.0).fit(X, y)
    for factor in (model.F_, model.S_, model.G_):
        assert np.isfinite(factor).all() and (factor > 0).all()
    assert model.n_iter_ == n_iter
    assert len(model.objective_) == n_iter + 1 and np.isfinite(model.objective_).all()


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31), st.integers(15, 40), st.integers(15, 40), st.floats(0.15, 0.5))
def test_fold_in_of_training_documents_agrees_with_transductive_class(seed, m, n, density):
    X, F0, _ = random_problem(seed, m, n, density)
    model = MFLK(lexicon_prior=F0, random_state=seed % 1000).fit(X)
    assert np.mean(model.predict(X) == model.labels_) >= 0.8


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31), st.integers(2, 12), st.booleans())
def test_fold_in_closed_form_matches_nnls(seed, m, collinear):
    rng = np.random.default_rng(seed)
    B = rng.uniform(0, 1, size=(m, 2)) * (rng.uniform(size=(m, 2)) < 0.7)
    if collinear:
        B[:, 1] = 2.0 * B[:, 0]
    x = rng.uniform(0, 1, size=(m, 5)) * (rng.uniform(size=(m, 5)) < 0.6)
    g = fold_in(B, sp.csr_matrix(x.T))
    for j in range(x.shape[1]):
        reference, _ = nnls(B, x[:, j])
        assert (g[j] >= 0).all()
        got_cost = np.sum((x[:, j] - B @ g[j]) ** 2)
        assert got_cost == pytest.approx(np.sum((x[:, j] - B @ reference) ** 2), abs=1e-10)
        if np.linalg.cond(B) < 1e6:  # the minimizer is unique only for full column rank
            np.testing.assert_allclose(g[j], reference, atol=1e-8)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["good", "bad", "the", "film", "!", "a1", "great"]), max_size=8), min_size=1, max_size=8), st.sampled_from(["l1", "l2", None]))
def test_document_term_matrix_matches_brute_force(docs, norm):
    vocabulary = ["film", "good", "great", "bad", "a1"]
    X = document_term_matrix(docs, vocabulary, norm=norm).toarray()
    expected = np.array([[doc.count(w) for w in vocabulary] for doc in docs], dtype=float)
    if norm is not None:
        sizes = np.abs(expected).sum(axis=1) if norm == "l1" else np.linalg.norm(expected, axis=1)
        expected = expected / np.where(sizes > 0, sizes, 1.0)[:, None]
    np.testing.assert_allclose(X, expected)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["good", "bad", "the", "film", "!", "42", "great", "plot"]), max_size=8), min_size=1, max_size=10), st.integers(1, 6))
def test_vocabulary_keeps_most_document_frequent_words(docs, max_words):
    try:
        vocabulary = build_vocabulary(docs, max_words=max_words)
    except ValueError:
        assert all(w in ENGLISH_STOP_WORDS or not w.isalpha() for doc in docs for w in doc)
        return
    candidates = {w for doc in docs for w in doc if w not in ENGLISH_STOP_WORDS and any(c.isalpha() for c in w)}
    df = {w: sum(w in doc for doc in docs) for w in candidates}
    assert vocabulary == sorted(candidates, key=lambda w: (-df[w], w))[:max_words]


def test_fit_is_deterministic():
    X, F0, y = random_problem(7, 40, 30, 0.3, labelled=0.2)
    first = SSMFLK(lexicon_prior=F0, random_state=3).fit(X, y)
    second = SSMFLK(lexicon_prior=F0, random_state=3).fit(X, y)
    for name in ("F_", "S_", "G_"):
        assert np.array_equal(getattr(first, name), getattr(second, name))
    assert first.objective_ == second.objective_


def test_kmeans_projection_for_large_inputs_finds_planted_clusters():
    rng = np.random.default_rng(0)
    block = np.kron(np.eye(2), np.ones((30, 25)))
    X = sp.csr_matrix((block * rng.uniform(0.5, 1.0, size=block.shape)).T)
    clusters = kmeans_clusters(X, seed=1, max_dense=10, n_components=5)
    assert len(set(clusters[:25])) == 1 and len(set(clusters[25:])) == 1 and clusters[0] != clusters[-1]


def test_lexicon_prior_rows():
    F0 = lexicon_prior(T8_WORDS, positive={"good", "great", "nice"}, negative={"bad"})
    np.testing.assert_array_equal(F0, T8_F0)
    with pytest.raises(ValueError, match="both positive and negative"):
        lexicon_prior(T8_WORDS, positive={"good"}, negative={"good"})


def test_empty_document_gets_even_probabilities(t8_X):
    model = MFLK(lexicon_prior=T8_F0).fit(t8_X)
    proba = model.predict_proba(document_term_matrix([[], ["unknown"]], T8_WORDS))
    np.testing.assert_allclose(proba, 0.5)


# ---- bad input -------------------------------------------------------------------------------


def test_no_lexicon_word_in_vocabulary(t8_X):
    with pytest.raises(ValueError, match="No lexicon word is in the vocabulary"):
        MFLK(lexicon_prior=np.zeros((4, 2))).fit(t8_X)
    assert MFLK(lexicon_prior=np.zeros((4, 2)), alpha=0.0).fit(t8_X).n_iter_ > 0
    with pytest.raises(ValueError, match="MFLK has no lexicon: pass lexicon_prior"):
        MFLK().fit(t8_X)
    no_lexicon = MFLK(alpha=0.0).fit(t8_X)
    np.testing.assert_array_equal(no_lexicon.G_, MFLK(lexicon_prior=np.zeros((4, 2)), alpha=0.0).fit(t8_X).G_)


def test_empty_corpus():
    with pytest.raises(ValueError, match="empty corpus"):
        build_vocabulary([])
    with pytest.raises(ValueError, match="empty"):
        MFLK(lexicon_prior=T8_F0).fit(document_term_matrix([], T8_WORDS))
    with pytest.raises(ValueError, match="no non-zero entry"):
        MFLK(lexicon_prior=T8_F0).fit(document_term_matrix([["x"], ["y"]], T8_WORDS))


def test_labels_other_than_the_two_polarities(t8_X):
    with pytest.raises(ValueError, match="0 \\(positive\\), 1 \\(negative\\) or -1"):
        SSMFLK(lexicon_prior=T8_F0).fit(t8_X, np.array([0, 2, -1]))
    with pytest.raises(ValueError, match="one label per document"):
        SSMFLK(lexicon_prior=T8_F0).fit(t8_X, np.array([0, 1]))


@pytest.mark.parametrize(
    "params,message",
    [
        ({"update": "fast"}, "^update=.* is invalid: choose one of"),
        ({"alpha": -1.0}, "^alpha=.* is invalid: use"),
        ({"alpha": float("nan")}, "^alpha=.* is invalid: use"),
        ({"max_iter": -5}, "^max_iter=.* is invalid: use"),
        ({"tol": -1.0}, "^tol=.* is invalid: use"),
        ({"offset": 0.0}, "^offset=.* is invalid: use a number > 0"),
        ({"init": "random"}, "^init=.* is invalid: choose one of"),
        ({"prior_scale": "two"}, "^prior_scale=.* is invalid: choose one of"),
        ({"n_init": 0}, "^n_init=.* is invalid: use"),
    ],
)
def test_absurd_hyperparameters(t8_X, params, message):
    with pytest.raises(ValueError, match=message):
        MFLK(lexicon_prior=T8_F0, **params).fit(t8_X)


def test_wrong_shapes_and_values(t8_X):
    with pytest.raises(ValueError, match=r"lexicon_prior must have shape \(4, 2\) for the 4 words \(columns\) of X"):
        MFLK(lexicon_prior=np.zeros((3, 2))).fit(t8_X)
    with pytest.raises(ValueError, match="lexicon_prior must be finite and non-negative"):
        MFLK(lexicon_prior=-T8_F0).fit(t8_X)
    with pytest.raises(ValueError, match="non-negative"):
        MFLK(lexicon_prior=T8_F0).fit(-t8_X)
    with pytest.raises(NotFittedError, match="not fitted"):
        MFLK().predict(t8_X)
    model = MFLK(lexicon_prior=T8_F0).fit(t8_X)
    with pytest.raises(ValueError, match="one column per vocabulary word"):
        model.predict(sp.csr_matrix(np.ones((1, 3))))
    with pytest.raises(ValueError, match="norm must be"):
        document_term_matrix([["good"]], T8_WORDS, norm="l3")


# ---- Porter stemmer (snowballstemmer's "porter", short and non a-z words kept) ------------------------


def test_porter_whole_words():
    expected = {"generalizations": "gener", "relational": "relat", "connections": "connect", "agreed": "agre",
                "happy": "happi", "loving": "love", "caresses": "caress", "ponies": "poni", "hopping": "hop",
                "an": "an", "as": "as", "is": "is", "naïve": "naïve", "x-men": "x-men", "Good": "Good"}
    assert {w: porter_stem(w) for w in expected} == expected


def test_porter_matches_nltk_original_algorithm(shared_data):
    """NLTK's PorterStemmer in its ORIGINAL_ALGORITHM mode, where installed, on every
    lexicon word and on the words of the movie reviews; snowball does not undouble "vv" and "kk"."""
    porter = pytest.importorskip("nltk.stem.porter")
    reference = porter.PorterStemmer(mode=porter.PorterStemmer.ORIGINAL_ALGORITHM)
    import json

    words = set()
    for name in ("positive-words.txt", "negative-words.txt"):
        words.update(line.strip() for line in (shared_data / "lexicons/hu_liu_opinion_lexicon" / name).open(encoding="utf-8")
                     if line.strip() and not line.startswith(";"))
    with (shared_data / "movie_review_polarity_v2/movie_review_polarity_v2.jsonl").open(encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            if i % 10 == 0:
                words.update(json.loads(line)["text"].split())
    words = sorted(w for w in words if w.isascii() and w.isalpha() and w.islower() and len(w) > 2)
    assert len(words) > 5000
    differences = {w for w in words if porter_stem(w) != reference.stem(w)}
    assert differences <= {"revving", "trekked", "yakking"}


# ---- the label weight relative to the fit, the labelled start, MFLK unchanged -------


@pytest.mark.reference
def test_mflk_is_unchanged():
    """MFLK, SSMFLK with the printed label weight and start, and MFLK as printed equal the factors computed
    with the code before the label weight and the labelled start were added (commit 97284f6), committed in
    tests/data/nmtf_pinned.msgpack: the iteration count exactly, the factors and objective within
    PINNED_RTOL of each matrix's largest entry (its docstring derives the bound). SSMFLK without labels
    is MFLK bit for bit on this machine."""
    X, F0, _ = _pinned_problem()
    for name in ("mflk", "ssmflk_printed_labels", "mflk_printed"):
        model = pinned_fit(name)
        difference = first_difference(fitted_factors(model), pinned_reference(name), PINNED_RTOL)
        assert difference is None, f"{name} differs from its reference at {difference}"
        if name == "mflk":
            mflk = model
    unlabelled = SSMFLK(lexicon_prior=F0).fit(X, -np.ones(X.shape[0], dtype=int))
    for name in ("F_", "S_", "G_"):
        assert np.array_equal(getattr(unlabelled, name), getattr(mflk, name))
    assert unlabelled.objective_ == mflk.objective_


@pytest.mark.reference
def test_the_pinned_reference_is_the_output_of_the_earlier_code():
    """The committed factors hash to the sha256 of the earlier code's output (F, S, G as float64 bytes)."""
    for name in PINNED_FITS:
        assert factor_hash(pinned_reference(name)) == PINNED_HASHES[name], name


@settings(max_examples=25, deadline=None)
@given(problems, st.floats(0.01, 5.0), st.sampled_from(["unit", "one"]))
def test_relative_beta_matches_its_definition(problem, beta, prior_scale):
    """beta_ = beta * (||X||^2 / n) / mean over labelled j of ||G0_j||^2, computed densely,
    and the objective uses it."""
    seed, m, n, density, _ = problem
    X, F0, y = random_problem(seed, m, n, density, labelled=0.5)
    if not (y != -1).any():
        y[0] = 1
    model = SSMFLK(lexicon_prior=F0, beta=beta, prior_scale=prior_scale, label_start=0.0).initialize(X, y)
    Xd = X.toarray().T
    F0u, G0u = unit_priors(F0, y, n) if prior_scale == "unit" else (F0, one_hot(y))
    labelled = [j for j in range(n) if y[j] != -1]
    per_document_fit = sum(Xd[i, j] ** 2 for i in range(m) for j in range(n)) / n
    mean_label_norm = sum(sum(G0u[j] ** 2) for j in labelled) / len(labelled)
    assert model.beta_ == pytest.approx(beta * per_document_fit / mean_label_norm, rel=1e-12)
    assert model.objective_[0] == pytest.approx(
        dense_objective(X, model.F_, model.S_, model.G_, F0u, G0u, 0.5, model.beta_), rel=1e-9, abs=1e-9)
    # beta = 1: a labelled row at 0 costs the average document's share of ||X||^2
    unit = SSMFLK(lexicon_prior=F0, beta=1.0, prior_scale=prior_scale, label_start=0.0).initialize(X, y)
    assert unit.beta_ * mean_label_norm == pytest.approx(per_document_fit, rel=1e-12)
    printed = SSMFLK(lexicon_prior=F0, beta=beta, prior_scale=prior_scale, beta_scale="one").initialize(X, y)
    assert printed.beta_ == beta


@settings(max_examples=30, deadline=None)
@given(problems, st.floats(0.01, 1.0), st.integers(1, 3))
def test_labelled_start_matches_a_dense_computation(problem, label_start, label_min_docs):
    """F starts at unit columns of (F0 + 0.2) + label_start * ||F0 + 0.2 column|| * (X_L Y_L
    over the words of >= label_min_docs labelled documents, with unit columns), and the
    unlabelled documents start at argmax X^T F (then aligned)."""
    seed, m, n, density, _ = problem
    X, F0, y = random_problem(seed, m, n, density, labelled=0.4)
    y[0] = 0 if y[0] == -1 else y[0]
    model = SSMFLK(lexicon_prior=F0, label_start=label_start, label_min_docs=label_min_docs).initialize(X, y)
    Xd = X.toarray().T
    base = F0 + 0.2
    sums = np.zeros((m, 2))
    for i in range(m):
        if sum(1 for j in range(n) if y[j] != -1 and Xd[i, j] > 0) < label_min_docs:
            continue
        for j in range(n):
            if y[j] != -1:
                sums[i, y[j]] += Xd[i, j]
    norms = np.linalg.norm(sums, axis=0)
    F = base + label_start * np.linalg.norm(base, axis=0) * sums / np.where(norms > 0, norms, 1.0)
    F = F / np.linalg.norm(F, axis=0)
    np.testing.assert_allclose(model.F_, F, rtol=1e-12, atol=1e-15)
    start = align_clusters(X, F0, start_classes(X, model))
    G = one_hot(start) + 0.2
    _, G0u = unit_priors(F0, y, n)
    G[y != -1] = one_hot(y)[y != -1] + 0.2
    np.testing.assert_allclose(model.G_, G / np.linalg.norm(G, axis=0), rtol=1e-12, atol=1e-15)


def test_labels_pull_the_unlabelled_documents():
    """One fixed planted problem (two word groups, one per class) whose lexicon names two
    words of each class right and one wrong: MFLK follows the misleading start; the labels of
    ~30 % of the documents, with beta on the fit's scale and the labelled start, recover most
    of the unlabelled ones, and more than the printed label weight and start do. A regression
    example, not a general property."""
    rng = np.random.default_rng(0)
    m, n = 60, 120
    truth = np.repeat([0, 1], n // 2)
    words = np.repeat([0, 1], m // 2)
    rate = np.where(words[:, None] == truth[None, :], 0.2, 0.1)
    X = normalize_columns(sp.csr_matrix(rng.poisson(rate).astype(float))).T.tocsr()
    F0 = np.zeros((m, 2))
    F0[[0, 1, m - 3], 0] = 1
    F0[[m - 1, m - 2, 2], 1] = 1
    labelled = rng.uniform(size=n) < 0.3
    y = np.where(labelled, truth, -1)
    test = ~labelled

    def accuracy(model_labels):
        return np.mean(model_labels[test] == truth[test])

    mflk = accuracy(MFLK(lexicon_prior=F0).fit(X).labels_)
    ssmflk = SSMFLK(lexicon_prior=F0).fit(X, y)
    old = accuracy(SSMFLK(lexicon_prior=F0, **PRINTED_LABELS).fit(X, y).labels_)
    assert accuracy(ssmflk.labels_) >= mflk + 0.2
    assert accuracy(ssmflk.labels_) > old
    assert np.array_equal(ssmflk.labels_[labelled], truth[labelled])


@pytest.mark.parametrize(
    "params,message",
    [
        ({"beta_scale": "relative"}, "^beta_scale=.* is invalid: choose one of"),
        ({"label_start": -0.1}, "^label_start=.* is invalid: use"),
        ({"label_start": float("inf")}, "^label_start=.* is invalid: use"),
        ({"label_min_docs": 0}, "^label_min_docs=.* is invalid: use"),
        ({"label_min_docs": 1.5}, "^label_min_docs=.* is invalid: use"),
        ({"beta": -1.0}, "^beta=.* is invalid: use"),
    ],
)
def test_bad_label_settings_name_the_setting(t8_X, params, message):
    with pytest.raises(ValueError, match=message):
        SSMFLK(lexicon_prior=T8_F0, **params).fit(t8_X, np.array([0, -1, -1]))
