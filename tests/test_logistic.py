"""The regularized linear solver against scikit-learn and against its own objective, on random data."""
import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix

from reference import linear_objective as objective
from spacy_treeboost.learning.selection import SOLVER_CONSTRAINTS, first_lowest, make_path, stratified_folds
from one_shard import fit_linear, fit_matrix_head
from spacy_treeboost.params import validate_params

sklearn_linear = pytest.importorskip("sklearn.linear_model")

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_problem(seed: int, n: int = 40, d: int = 12, density: float = 0.3):
    rng = numpy.random.default_rng(seed)
    X = (rng.random((n, d)) < density) * rng.integers(1, 4, (n, d))
    w = rng.normal(size=d)
    y = numpy.where(X @ w + rng.normal(scale=0.5, size=n) > numpy.median(X @ w), 1, -1)
    if len(set(y.tolist())) == 1:
        y[0] = -y[0]
    return X.astype(numpy.float64), y


@settings(SETTINGS, max_examples=20)
@given(st.integers(0, 10**6), st.sampled_from([0.01, 0.3, 1.0, 10.0]))
def test_l2_logistic_matches_scikit_learn(seed, C):
    X, y = random_problem(seed)
    w, c = fit_linear(csr_matrix(X), y, C=C, tol=1e-8, max_iter=5000)
    ref = sklearn_linear.LogisticRegression(C=C, tol=1e-10, max_iter=10000).fit(X, y)
    ours = objective(w, c, X, y, C=C)
    theirs = objective(ref.coef_.ravel(), float(ref.intercept_[0]), X, y, C=C)
    assert ours <= theirs + 1e-6 * max(1.0, abs(theirs))
    numpy.testing.assert_allclose(w, ref.coef_.ravel(), atol=2e-3 * max(1.0, numpy.abs(w).max()))


@pytest.mark.filterwarnings("ignore::FutureWarning")
@settings(SETTINGS, max_examples=20)
@given(st.integers(0, 10**6), st.sampled_from([0.1, 1.0]), st.sampled_from([0.3, 0.7, 1.0]))
def test_elastic_net_is_at_least_as_good_as_scikit_learn_saga(seed, C, l1_ratio):
    X, y = random_problem(seed)
    w, c = fit_linear(csr_matrix(X), y, C=C, l1_ratio=l1_ratio, tol=1e-9, max_iter=20000)
    ref = sklearn_linear.LogisticRegression(C=C, penalty="elasticnet", l1_ratio=l1_ratio, solver="saga",
                                            tol=1e-10, max_iter=50000).fit(X, y)
    ours = objective(w, c, X, y, C=C, l1_ratio=l1_ratio)
    theirs = objective(ref.coef_.ravel(), float(ref.intercept_[0]), X, y, C=C, l1_ratio=l1_ratio)
    assert ours <= theirs + 1e-4 * max(1.0, abs(theirs))


def test_l1_gives_exact_zeros_and_l2_does_not():
    X, y = random_problem(3, n=60, d=30)
    w1, _ = fit_linear(csr_matrix(X), y, C=0.05, l1_ratio=1.0, tol=1e-9, max_iter=20000)
    w2, _ = fit_linear(csr_matrix(X), y, C=0.05, tol=1e-9)
    assert (w1 == 0).sum() > 0
    assert (w2 == 0).sum() == 0


@SETTINGS
@given(st.integers(0, 10**6))
def test_squared_hinge_solution_is_a_stationary_point_by_finite_differences(seed):
    X, y = random_problem(seed, n=30, d=6)
    C = 0.5
    w, c = fit_linear(csr_matrix(X), y, C=C, loss="squared_hinge", tol=1e-10, max_iter=5000)
    x = numpy.append(w, c)
    base = objective(w, c, X, y, C=C, loss="squared_hinge")
    for j in range(len(x)):
        for h in (1e-4, -1e-4):
            x2 = x.copy()
            x2[j] += h
            assert objective(x2[:-1], x2[-1], X, y, C=C, loss="squared_hinge") >= base - 1e-7


def test_intercept_is_not_penalized():
    # all-zero features: the only way to fit the class prior is the intercept, whatever C
    X = numpy.zeros((10, 3))
    y = numpy.array([1] * 8 + [-1] * 2)
    _, c = fit_linear(csr_matrix(X), y, C=1e-4, tol=1e-10)
    assert c == pytest.approx(numpy.log(8 / 2), abs=1e-4)


def test_folds_are_stratified_and_deterministic():
    y = numpy.array([1] * 7 + [-1] * 13)
    f = stratified_folds(y, 5)
    assert f.tolist() == stratified_folds(y, 5).tolist()
    for k in range(5):
        assert 1 <= (y[f == k] == 1).sum() <= 2
        assert 2 <= (y[f == k] == -1).sum() <= 3


def test_choose_C_returns_the_best_cross_validated_candidate():
    X, y = random_problem(11, n=60, d=40)
    Cs = [1e-3, 0.1, 10.0]
    fit = fit_matrix_head(csr_matrix(X), y, [make_path(False, Cs, 1.0, ())], cv=4, l1_ratio=0.0, loss="logistic",
                          max_iter=1000, tol=1e-9)
    C, scores = fit.C, fit.cv_accuracy
    folds = stratified_folds(y, 4)
    manual = []
    for Cv in Cs:
        right = 0
        for k in range(4):
            tr, te = folds != k, folds == k
            w, c = fit_linear(csr_matrix(X[tr]), y[tr], C=Cv, tol=1e-9)
            right += int(((X[te] @ w + c > 0) == (y[te] > 0)).sum())
        manual.append(right / len(y))
    numpy.testing.assert_allclose(scores, manual)
    assert scores[Cs.index(C)] == max(scores)


@pytest.mark.parametrize("kwargs,name", [
    (dict(C=-1.0), "C="), (dict(C=float("nan")), "C="), (dict(C=None, Cs=[]), "Cs="),
    (dict(C=None, Cs=[0.0]), "Cs="), (dict(l1_ratio=1.5), "l1_ratio="), (dict(loss="hinge"), "loss="),
    (dict(C=None, cv=1), "cv="), (dict(max_iter=0), "max_iter="), (dict(tol=0.0), "tol="),
])
def test_bad_settings_name_the_setting(kwargs, name):
    settings_ = dict(C=1.0, Cs=[1.0], l1_ratio=0.0, loss="logistic", cv=5, max_iter=100, tol=1e-4)
    settings_.update(kwargs)
    with pytest.raises(ValueError, match=name.replace("(", r"\(")):
        validate_params(settings_, SOLVER_CONSTRAINTS)


def test_solvers_run_on_one_blas_thread_and_restore_the_setting(monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from spacy_treeboost.learning import sharded

    def blas_threads():
        return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}

    seen = []
    real = sharded._fit

    def spy(*args, **kwargs):
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(sharded, "_fit", spy)
    X, y = random_problem(3)
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        fit_matrix_head(csr_matrix(X), y, [make_path(True, [0.1, 1.0], 1.0, ())], cv=2, l1_ratio=0.0, loss="logistic",
                        max_iter=1000, tol=1e-3)
        after = blas_threads()
    assert len(seen) == 5 and all(s and set(s.values()) == {1} for s in seen)
    assert after == before


def problem_with_singletons(seed: int, n: int = 40, d: int = 12):
    """A random problem plus, for some samples, features that only they have (some of them empty)."""
    X, y = random_problem(seed, n=n, d=d)
    rng = numpy.random.default_rng(seed + 1)
    own = numpy.zeros((n, 3 * n))
    for i in rng.choice(n, size=n // 2, replace=False):
        cols = rng.choice(3 * n, size=int(rng.integers(1, 4)), replace=False)
        own[i, cols] = rng.integers(1, 3, size=len(cols))
    own[:, (own != 0).sum(axis=0) > 1] = 0
    return numpy.hstack([X, own]), y


@SETTINGS
@given(st.integers(0, 10**6), st.sampled_from([0.01, 0.3, 1.0, 10.0]), st.sampled_from(["logistic", "squared_hinge"]))
def test_tron_reaches_the_optimum_of_scipy_trust_ncg(seed, C, loss):
    X, y = problem_with_singletons(seed)
    w, c = fit_linear(csr_matrix(X), y, C=C, loss=loss, tol=1e-9, max_iter=5000)
    ref_w, ref_c = fit_linear(csr_matrix(X), y, C=C, loss=loss, tol=1e-9, max_iter=5000)
    ours, theirs = objective(w, c, X, y, C=C, loss=loss), objective(ref_w, ref_c, X, y, C=C, loss=loss)
    assert ours <= theirs + 1e-7 * max(1.0, abs(theirs))
    numpy.testing.assert_allclose(w, ref_w, atol=1e-4 * max(1.0, numpy.abs(ref_w).max()))


@settings(SETTINGS, max_examples=20)
@given(st.integers(0, 10**6), st.sampled_from([0.3, 3.0]))
def test_tron_matches_scikit_learn_with_once_seen_features(seed, C):
    X, y = problem_with_singletons(seed)
    w, c = fit_linear(csr_matrix(X), y, C=C, tol=1e-9, max_iter=5000)
    ref = sklearn_linear.LogisticRegression(C=C, tol=1e-10, max_iter=10000).fit(X, y)
    theirs = objective(ref.coef_.ravel(), float(ref.intercept_[0]), X, y, C=C)
    assert objective(w, c, X, y, C=C) <= theirs + 1e-6 * max(1.0, abs(theirs))
    assert numpy.all(w[(X != 0).sum(axis=0) == 0] == 0)


@SETTINGS
@given(st.integers(0, 10**6))
def test_singleton_reduction_is_the_folded_matrix_and_maps_points_exactly(seed):
    X, y = problem_with_singletons(seed, n=25, d=6)
    rng = numpy.random.default_rng(seed)
    X = X * rng.normal(size=X.shape[1])
    reduction = reduced_problem(csr_matrix(X), y)
    df = (X != 0).sum(axis=0)
    once = X[:, df == 1]
    norms = numpy.sqrt((once ** 2).sum(axis=1))
    has = numpy.flatnonzero(norms > 0)
    folded = numpy.zeros((len(X), len(has)))
    folded[has, numpy.arange(len(has))] = norms[has]
    numpy.testing.assert_allclose(reduction.X.toarray(), numpy.hstack([X[:, df >= 2], folded]))
    z = rng.normal(size=reduction.X.shape[1] + 1)
    x = reduction.expand(z)
    numpy.testing.assert_allclose(X @ x[:-1], reduction.X @ z[:-1])
    numpy.testing.assert_allclose(x[:-1] @ x[:-1], z[:-1] @ z[:-1])
    numpy.testing.assert_allclose(reduction.reduce(x), z)
    assert numpy.all(x[:-1][df == 0] == 0)


@SETTINGS
@given(st.lists(st.sampled_from([-1, 1]), min_size=4, max_size=60), st.integers(2, 6), st.integers(1, 70))
def test_cv_folds_keep_the_first_folds_that_hold_out_max_scored(labels, cv, max_scored):
    from spacy_treeboost.learning.selection import cv_folds

    y = numpy.array(labels)
    if len(set(labels)) == 1:
        y[0] = -y[0]
    every = cv_folds(y, cv)
    kept = cv_folds(y, cv, max_scored)
    sizes = numpy.bincount(every)
    m = next((k + 1 for k in range(len(sizes)) if sizes[: k + 1].sum() >= max_scored), len(sizes))
    numpy.testing.assert_array_equal(kept, numpy.where(every < m, every, -1))


@settings(SETTINGS, max_examples=20)
@given(st.integers(0, 10**6), st.sampled_from([None, 20]))
def test_two_feature_maps_choose_the_best_out_of_fold_candidate(seed, max_scored):
    from spacy_treeboost.learning.features import interpolate, nb_ratio
    from spacy_treeboost.learning.selection import cv_folds

    X, y = random_problem(seed, n=50, d=20)
    X = (X > 0).astype(float)
    paths = [make_path(True, [1.0], None, [0.25, 1.0]), make_path(False, [0.1, 1.0], 1.0, ())]
    from spacy_treeboost.learning import sharded
    from spacy_treeboost.learning.selection import assemble_margins, candidate_costs

    settings = dict(l1_ratio=0.0, loss="logistic", max_iter=1000, tol=1e-10)
    folds = cv_folds(y, 3, max_scored)
    with sharded.held_shards({"F": csr_matrix(X)}) as shards:
        blocks = [sharded.fold_margins(shards, "F", y, folds, k, paths, **settings) for k in range(folds.max() + 1)]
    scored = y[folds >= 0]
    margins_of_all, (_, accuracy) = assemble_margins(blocks, folds), candidate_costs(assemble_margins(blocks, folds),
                                                                                       scored, "accuracy")
    chosen = fit_matrix_head(csr_matrix(X), y, paths, cv=3, max_scored=max_scored, **settings)
    manual, margins = [], []
    for nb, C, beta in [(True, 1.0, 1.0), (True, 1.0, 0.25), (False, 0.1, 1.0), (False, 1.0, 1.0)]:
        f = numpy.zeros(len(y))
        for k in range(folds.max() + 1):
            tr, te = folds != k, folds == k
            scale = nb_ratio(csr_matrix(X[tr]), y[tr]) if nb else numpy.ones(X.shape[1])
            w, c = fit_linear(csr_matrix(X[tr] * scale), y[tr], C=C, tol=1e-10)
            f[te] = (X[te] * scale) @ interpolate(w, beta) + c
        margins.append(f[folds >= 0])
        manual.append(float(((f > 0) == (y > 0))[folds >= 0].mean()))
    numpy.testing.assert_allclose(accuracy, manual)
    numpy.testing.assert_array_equal(scored, y[folds >= 0])
    best = max(manual)
    ties = [k for k, a in enumerate(manual) if a == best]
    losses = [numpy.logaddexp(0, -scored * margins[k]).sum() for k in ties]
    k = ties[int(numpy.argmin(losses))]
    assert (chosen.nb, chosen.C, chosen.nb_beta) == [(True, 1.0, 1.0), (True, 1.0, 0.25), (False, 0.1, 1.0),
                                                      (False, 1.0, 1.0)][k]
    numpy.testing.assert_allclose(margins_of_all, margins, atol=1e-6)


def reduced_problem(X, y):
    """The one-shard problem of X laid out by the trust-region fits: its reduced matrix `X` (of the shard) and its
    `reduce` and `expand` maps (of the layout)."""
    from types import SimpleNamespace

    from spacy_treeboost.learning import sharded

    shards = sharded.Shards.here([sharded.whole_shard({"F": X})])
    d = shards.map("select", "F", numpy.asarray(y, dtype=float), None, None)[0]
    shards.map("scale", None)
    layout = sharded._Layout(shards, d, keep_all=False)
    return SimpleNamespace(X=shards.workers.objects[0].shards[0].X, reduce=layout.reduce, expand=layout.expand)


def _folded_by_concatenation(X):
    """The reduced matrix of `_SingletonReduction` built as its first version did (X[:, keep], then the folded
    columns appended by concatenation): the reference for the one-pass `take_columns`."""
    from scipy.sparse import csc_matrix

    df = numpy.diff(X.indptr)
    keep, cols = numpy.flatnonzero(df >= 2), numpy.flatnonzero(df == 1)
    rows = X.indices[X.indptr[cols]].astype(numpy.int64)
    sq = numpy.bincount(rows, weights=X.data[X.indptr[cols]] ** 2, minlength=X.shape[0])
    samples, norms = numpy.flatnonzero(sq > 0), numpy.sqrt(sq)
    k = len(keep)
    if k and int(keep[-1]) == k - 1:
        end = int(X.indptr[k])
        indptr, indices, data = X.indptr[: k + 1], X.indices[:end], X.data[:end]
    else:
        kept = X[:, keep]
        indptr, indices, data = kept.indptr, kept.indices, kept.data
    return csc_matrix((numpy.concatenate([data, norms[samples]]),
                       numpy.concatenate([indices, samples.astype(indices.dtype)]),
                       numpy.concatenate([indptr, indptr[-1] + numpy.arange(1, len(samples) + 1)])),
                      shape=(X.shape[0], k + len(samples)))


@SETTINGS
@given(st.integers(0, 10**6), st.booleans())
def test_singleton_reduction_builds_the_matrix_of_its_first_version_bit_for_bit(seed, frequency_order):
    from scipy.sparse import csc_matrix

    X, y = problem_with_singletons(seed, n=25, d=8)
    rng = numpy.random.default_rng(seed)
    X = X * rng.normal(size=X.shape[1])
    if frequency_order:  # the final fit's matrix: the kept columns first
        X = X[:, numpy.argsort(-(X != 0).sum(axis=0), kind="stable")]
    A = csc_matrix(X)
    reduced, expected = reduced_problem(A, y).X, _folded_by_concatenation(A)
    assert reduced.shape == expected.shape and reduced.indices.dtype == expected.indices.dtype
    numpy.testing.assert_array_equal(reduced.indptr, expected.indptr)
    numpy.testing.assert_array_equal(reduced.indices, expected.indices)
    assert reduced.data.tobytes() == expected.data.tobytes()


@pytest.mark.determinism
@SETTINGS
@given(st.integers(0, 10**6), st.integers(1, 4), st.sampled_from(["general", "one value", "ones"]))
def test_squared_column_blocks_multiply_as_the_squared_matrix_bit_for_bit(seed, threads, values):
    """`_Newton.blocks` of a large matrix stands for its squares without storing them: the same products, bit for
    bit, as the blocks of the squared matrix (`_squared`), and so the same fit."""
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning import products

    rng = numpy.random.default_rng(seed)
    n, d = int(rng.integers(2, 30)), int(rng.integers(1, 40))
    pattern = rng.random((n, d)) < 0.3
    X = pattern * {"general": lambda: rng.normal(size=(n, d)), "one value": lambda: rng.normal(size=d),
                   "ones": lambda: 1.0}[values]()
    A = csc_matrix(X)
    u = rng.normal(size=n)
    saved = products.BLOCK_NNZ
    products.BLOCK_NNZ = 1
    try:
        blocks, squared = products.newton_blocks(A, threads)
        reference = products.ColumnBlocks(products.squared_entries(A), threads)
    finally:
        products.BLOCK_NNZ = saved
    assert isinstance(squared, products.ColumnBlocks) and squared.squared
    assert (squared.T @ u).tobytes() == (reference.T @ u).tobytes()
    numpy.testing.assert_allclose(squared.T @ u, (X * X).T @ u, atol=1e-12)
    with pytest.raises(NotImplementedError):
        squared @ numpy.ones(d)


@pytest.mark.determinism
@given(st.integers(0, 10**6), st.integers(1, 9))
def test_column_blocks_multiply_like_the_matrix_whatever_the_threads(seed, threads):
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning.products import ColumnBlocks

    rng = numpy.random.default_rng(seed)
    X, _ = random_problem(seed, n=int(rng.integers(1, 30)), d=int(rng.integers(1, 40)))
    X[:, rng.random(X.shape[1]) < 0.2] = 0
    A = csc_matrix(X)
    v, u = rng.normal(size=X.shape[1]), rng.normal(size=X.shape[0])
    one, many = ColumnBlocks(A, 1), ColumnBlocks(A, threads)
    assert sum(b - a for a, b, _ in one.blocks) == X.shape[1]
    numpy.testing.assert_allclose(one @ v, X @ v, atol=1e-12)
    numpy.testing.assert_allclose(one.T @ u, X.T @ u, atol=1e-12)
    numpy.testing.assert_array_equal(one.T @ u, A.T @ u)
    numpy.testing.assert_array_equal(many @ v, one @ v)
    numpy.testing.assert_array_equal(many.T @ u, one.T @ u)


@pytest.mark.determinism
@SETTINGS
@given(st.integers(0, 10**6), st.integers(1, 4), st.sampled_from(["logistic", "squared_hinge"]))
def test_column_blocks_of_one_value_per_column_multiply_and_fit_as_scipy_does_bit_for_bit(seed, threads, loss):
    """Presence and naive Bayes columns (one value each) go through `pattern_matvec` / `pattern_rmatvec`: the same
    bits as scipy's products on the same blocks, and so the same fit."""
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning import products

    rng = numpy.random.default_rng(seed)
    n, d = int(rng.integers(2, 30)), int(rng.integers(1, 40))
    X = (rng.random((n, d)) < 0.3) * (rng.random(d) * 3.0 + 0.1)
    y = numpy.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    A = csc_matrix(X)
    assert products.column_values(A) is not None
    v, u = rng.normal(size=d), rng.normal(size=n)
    fast = products.ColumnBlocks(A, threads)
    assert fast.pattern
    saved, saved_nnz = products.column_values, products.BLOCK_NNZ
    products.BLOCK_NNZ = 1
    try:
        fits = [fit_linear(A, y, C=1.0, loss=loss, tol=1e-9, max_iter=500, threads=threads)]
        products.column_values = lambda X: None
        slow = products.ColumnBlocks(A, threads)
        fits.append(fit_linear(A, y, C=1.0, loss=loss, tol=1e-9, max_iter=500, threads=threads))
    finally:
        products.column_values, products.BLOCK_NNZ = saved, saved_nnz
    assert (fast @ v).tobytes() == (slow @ v).tobytes()
    assert (fast.T @ u).tobytes() == (slow.T @ u).tobytes()
    assert fits[0][0].tobytes() == fits[1][0].tobytes() and fits[0][1] == fits[1][1]


def test_column_values_are_found_only_where_each_column_holds_one_value():
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning.products import column_values

    numpy.testing.assert_array_equal(column_values(csc_matrix([[2.0, 0, 1], [2.0, 0, 0]])), [2.0, 0.0, 1.0])
    assert column_values(csc_matrix([[2.0, 1], [3.0, 0]])) is None
    assert column_values(csc_matrix([[2.0, 1], [3.0, 0], [2.0, 0]])) is None  # first and last equal, not all
    assert column_values(csc_matrix([[2.0, 1], [2.0, 0]]).tocsr()) is None


@settings(SETTINGS, max_examples=20)
@given(seed=st.integers(0, 10_000), loss=st.sampled_from(["logistic", "squared_hinge"]),
       l1_ratio=st.sampled_from([0.0, 0.5]),
       Cs=st.lists(st.sampled_from([0.01, 0.1, 1.0, 10.0]), min_size=1, max_size=3), warm=st.booleans())
def test_the_fits_of_a_path_on_one_layout_are_those_of_fit_linear(seed, loss, l1_ratio, Cs, warm):
    """What a path's fits keep from its shards' layout (the gradient at zero, the reduction, column blocks) changes
    no bit."""
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning import products, sharded

    X, y = problem_with_singletons(seed)
    X = csc_matrix(X)
    saved = products.BLOCK_NNZ
    products.BLOCK_NNZ = 1  # column blocks even for a small matrix
    try:
        shards, init = sharded.Shards.here([sharded.whole_shard({"F": X})]), None
        d = shards.map("select", "F", y, None, None)[0]
        _, layout = sharded._prepare(shards, False, l1_ratio, d, 1)
        for C in Cs:
            settings = dict(l1_ratio=l1_ratio, tol=1e-6, max_iter=200, init=init)
            w, c = sharded._fit(shards, layout, y, C, loss=loss, **settings)
            ref_w, ref_c = fit_linear(X, y, C=C, loss=loss, **settings)
            assert w.tobytes() == ref_w.tobytes() and c == ref_c
            init = numpy.append(w, c) if warm else None
    finally:
        products.BLOCK_NNZ = saved


def test_pattern_structure_is_checked():
    from spacy_treeboost.learning._vectors import check_pattern

    with pytest.raises(ValueError, match="outside"):
        check_pattern(numpy.array([0, 2], dtype=numpy.int32), numpy.array([0, 5], dtype=numpy.int32), 3)
    with pytest.raises(ValueError, match="one CSC matrix"):
        check_pattern(numpy.array([0, 3], dtype=numpy.int32), numpy.array([0, 1], dtype=numpy.int32), 3)
    with pytest.raises(ValueError, match="must not decrease"):
        check_pattern(numpy.array([0, 2, 1, 2], dtype=numpy.int32), numpy.array([0, 1], dtype=numpy.int32), 3)


@pytest.mark.determinism
@settings(SETTINGS, max_examples=20)
@given(st.integers(0, 10**6), st.sampled_from(["logistic", "squared_hinge"]))
def test_tron_on_column_blocks_is_the_same_for_any_threads_and_reaches_the_optimum(seed, loss):
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning import products

    X, y = problem_with_singletons(seed)
    ref_w, ref_c = fit_linear(csc_matrix(X), y, C=1.0, loss=loss, tol=1e-9, max_iter=5000)
    saved = products.BLOCK_NNZ
    products.BLOCK_NNZ = 1
    try:
        fits = [fit_linear(csc_matrix(X), y, C=1.0, loss=loss, tol=1e-9, max_iter=5000, threads=t)
                for t in (1, 2, 5)]
    finally:
        products.BLOCK_NNZ = saved
    for w, c in fits[1:]:
        numpy.testing.assert_array_equal(w, fits[0][0])
        assert c == fits[0][1]
    ours, theirs = objective(*fits[0], X, y, C=1.0, loss=loss), objective(ref_w, ref_c, X, y, C=1.0, loss=loss)
    assert abs(ours - theirs) <= 1e-7 * max(1.0, abs(theirs))


@SETTINGS
@given(st.integers(0, 10**6))
def test_column_scaling_of_csc_and_csr_matches_the_dense_matrix(seed):
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning.features import scale_columns

    rng = numpy.random.default_rng(seed)
    X, _ = random_problem(seed, n=int(rng.integers(1, 30)), d=int(rng.integers(1, 20)))
    scale = rng.normal(size=X.shape[1])
    scaled = scale_columns(csc_matrix(X), scale)
    assert scaled.format == "csc"
    numpy.testing.assert_array_equal(scaled.toarray(), X * scale)
    numpy.testing.assert_array_equal(scale_columns(csr_matrix(X), scale).toarray(), X * scale)


@SETTINGS
@given(st.integers(0, 10**6), st.sampled_from([numpy.int32, numpy.int64]), st.sampled_from(["csc", "csr"]))
def test_fold_split_is_the_dense_rows_in_and_out_of_the_fold(seed, index_dtype, fmt):
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning.sharded import fold_split

    rng = numpy.random.default_rng(seed)
    n, d = int(rng.integers(1, 40)), int(rng.integers(1, 25))
    X = numpy.where(rng.random((n, d)) < 0.3, rng.normal(size=(n, d)), 0.0)
    folds = rng.integers(-1, 3, n)
    fold = int(rng.integers(-1, 3))
    M = csc_matrix(X) if fmt == "csc" else csr_matrix(X)
    M.indices = M.indices.astype(index_dtype)
    for threads in (1, 2, 5):
        train, test = fold_split(M, folds, fold, threads)
        for part, rows in ((train, folds != fold), (test, folds == fold)):
            assert part.format == "csc" and part.shape == (int(rows.sum()), d)
            numpy.testing.assert_array_equal(part.toarray(), X[rows])
            assert part.has_sorted_indices and part.nnz == numpy.count_nonzero(X[rows])
            assert part.indptr[-1] == part.nnz


def piecewise_dot(a, b, piece):
    """a . b as the solver sums it: each piece of `piece` entries added in index order from 0.0 (numpy's cumsum
    adds in order), the pieces' sums in piece order."""
    total = 0.0
    for lo in range(0, len(a), piece):
        total += float(numpy.cumsum(numpy.concatenate([[0.0], a[lo:lo + piece] * b[lo:lo + piece]]))[-1])
    return total


def hessian_product(X, curvature, l2):
    """v -> H v for the Hessian of the weights and the unpenalized intercept at the loss's `curvature`."""
    def hessian(v):
        u = curvature * (X @ v[:-1] + v[-1])
        return numpy.concatenate([X.T @ u + l2 * v[:-1], [u.sum()]])

    return hessian


def textbookpcg(X, curvature, l2, g, M, delta, piece):
    """Steihaug's preconditioned CG written with a new vector per operation and `piecewise_dot` as the dot
    product in its loop: the reference of `_pcg`."""
    import math

    hessian = hessian_product(X, curvature, l2)

    def dot(a, b):
        return piecewise_dot(a, b, piece)

    s, r = numpy.zeros_like(g), -g
    z = r / M
    d = z.copy()
    zr = dot(z, r)
    tol = 0.1 * math.sqrt(zr)
    for _ in range(len(g)):
        if math.sqrt(max(zr, 0.0)) <= tol:
            break
        Hd = hessian(d)
        alpha = zr / dot(d, Hd)
        s = s + alpha * d
        if math.sqrt(dot(s, M * s)) > delta:
            s = s - alpha * d
            sMd, sMs, dMd = float(s @ (M * d)), float(s @ (M * s)), float(d @ (M * d))
            rad = math.sqrt(max(sMd * sMd + dMd * (delta * delta - sMs), 0.0))
            alpha = (delta * delta - sMs) / (sMd + rad) if sMd >= 0 else (rad - sMd) / dMd
            return s + alpha * d, r - alpha * Hd
        r = r - alpha * Hd
        z = r / M
        zr_new = dot(z, r)
        d = z + (zr_new / zr) * d
        zr = zr_new
    return s, r


@SETTINGS
@given(st.integers(0, 10**6), st.floats(1e-3, 1e3), st.booleans(), st.sampled_from([1, 3, 7, 1 << 16]),
       st.sampled_from([1, 2, 3]))
def test_in_place_cg_steps_are_the_textbook_steps_bit_for_bit(seed, delta, blocks, piece, threads):
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning import products
    from spacy_treeboost.learning.products import ColumnBlocks
    from spacy_treeboost.learning.solver import pcg
    from spacy_treeboost.threads import ThreadTeam

    rng = numpy.random.default_rng(seed)
    X, _ = random_problem(seed, n=int(rng.integers(1, 30)), d=int(rng.integers(1, 40)))
    A = ColumnBlocks(csc_matrix(X), 2) if blocks else csc_matrix(X)
    curvature, l2 = rng.random(X.shape[0]), float(rng.uniform(0.01, 10))
    g, M = rng.normal(size=X.shape[1] + 1), rng.uniform(0.5, 2.0, size=X.shape[1] + 1)
    team = ThreadTeam(threads)
    saved, products.CG_PIECE = products.CG_PIECE, piece
    try:
        step, residual = pcg(hessian_product(A, curvature, l2), g, M, delta, team)
    finally:
        products.CG_PIECE = saved
        team.close()
    want_step, want_residual = textbookpcg(A, curvature, l2, g, M, delta, piece)
    numpy.testing.assert_array_equal(step, want_step)
    numpy.testing.assert_array_equal(residual, want_residual)


@SETTINGS
@given(st.integers(0, 10**6), st.integers(0, 40), st.integers(0, 40), st.floats(-3, 3))
def test_cg_vector_kernels_are_their_numpy_forms(seed, lo, length, alpha):
    from spacy_treeboost.learning._vectors import cg_direction_range, cg_residual_range, cg_step_range, dot_range

    rng = numpy.random.default_rng(seed)
    n = lo + length + int(rng.integers(0, 5))
    a, b, M = rng.normal(size=n), rng.normal(size=n), rng.uniform(0.5, 2.0, size=n)
    hi = lo + length
    assert dot_range(a, b, lo, hi) == piecewise_dot(a[lo:hi], b[lo:hi], max(length, 1))
    s, want = a.copy(), a.copy()
    want[lo:hi] = a[lo:hi] + alpha * b[lo:hi]
    assert cg_step_range(s, b, M, alpha, lo, hi) == piecewise_dot(want[lo:hi], M[lo:hi] * want[lo:hi], max(length, 1))
    numpy.testing.assert_array_equal(s, want)
    r, want_r = a.copy(), a.copy()
    want_r[lo:hi] = a[lo:hi] - alpha * b[lo:hi]
    total = cg_residual_range(r, b, M, alpha, lo, hi)
    assert total == piecewise_dot(want_r[lo:hi] / M[lo:hi], want_r[lo:hi], max(length, 1))
    numpy.testing.assert_array_equal(r, want_r)
    d, want_d = a.copy(), a.copy()
    want_d[lo:hi] = b[lo:hi] / M[lo:hi] + alpha * a[lo:hi]
    cg_direction_range(d, b, M, alpha, lo, hi)
    numpy.testing.assert_array_equal(d, want_d)
    with pytest.raises(ValueError, match="does not lie within"):
        dot_range(a, b, 0, n + 1)
    with pytest.raises(ValueError, match="differ in length"):
        cg_step_range(s, numpy.append(b, 0.0), M, alpha, 0, 0)


def _exact_lowest(costs):
    return min(range(len(costs)), key=lambda k: (costs[k], k))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 0), st.sampled_from([0.0, 0.5, 1.0, 37.25, 1e4])), min_size=1, max_size=9),
       st.lists(st.floats(-1e-14, 1e-14), min_size=18, max_size=18))
def test_the_lowest_cost_is_chosen_whatever_the_last_bits(keys, noise):
    """Costs of far-apart values (integers, and log-losses that differ by more than 1e-12 relative) give the
    exact rule's choice, the first lowest; perturbing every log-loss by up to 1e-14 relative (the last bits
    another CPU's kernels round differently) changes nothing, where the exact rule takes the least noisy."""
    costs = [(float(a), b) for a, b in keys]
    want = _exact_lowest(costs)
    assert first_lowest(costs) == want
    noisy = [(a, b * (1.0 + e) + e) for (a, b), e in zip(costs, noise)]
    assert first_lowest(noisy) == want
    assert first_lowest([costs[k] for k in range(want, len(costs))]) == 0


def test_costs_within_the_tie_tolerance_count_as_equal_and_the_earlier_wins():
    assert first_lowest([(0.0, 2.0 + 1e-13), (0.0, 2.0)]) == 0
    assert first_lowest([(0.0, 2.0 + 1e-10), (0.0, 2.0)]) == 1
    assert first_lowest([(-5.0, 9.0), (-6.0, 9.5), (-6.0, 9.5 - 5e-12)]) == 1
    assert first_lowest([(-5.0, 9.0), (-6.0, 9.5), (-6.0, 9.5 - 5e-11)]) == 2
    assert first_lowest([(1e6,), (1e6 - 1e-7,)]) == 0


@pytest.mark.determinism
@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 4), st.sampled_from([1, 3]), st.sampled_from(["logistic", "squared_hinge"]))
def test_equal_columns_get_the_same_weight_bit_for_bit_wherever_they_are(seed, copies, threads, loss):
    """A linear model's rules are ordered by |weight|, ties in mined order: that order is the same on every
    machine because equal columns (subtrees that occur in the same documents as often) get the same weight bit
    for bit, whatever their position, since each weight's arithmetic reads only its own column. Checked on a
    problem with copies of one column (of several documents and of one) spread over the matrix."""
    rng = numpy.random.default_rng(seed)
    X, y = random_problem(seed, n=60, d=20)
    X[:, 3] = 0.0
    X[rng.integers(0, 60), 3] = 1.0
    order = rng.permutation(20 + 2 * copies)
    X = numpy.hstack([X, *[X[:, [0]]] * copies, *[X[:, [3]]] * copies])[:, order]
    groups = [numpy.flatnonzero((order == 0) | (order >= 20) & (order < 20 + copies)),
              numpy.flatnonzero((order == 3) | (order >= 20 + copies))]
    w, _ = fit_linear(csr_matrix(X), y, C=1.0, loss=loss, threads=threads)
    for group in groups:
        assert len(group) == copies + 1
        assert len({w[j].tobytes() for j in group}) == 1, w[group]


@SETTINGS
@given(st.integers(0, 10**6), st.integers(1, 3), st.booleans())
def test_presence_without_stored_values_splits_multiplies_and_fits_as_stored_ones_bit_for_bit(seed, threads, blocks):
    """`features.presence(stored=False)` (one read-only 1.0 at every entry): its fold split, its column values and
    the fit on it (`products.newton_pattern`, column blocks or scipy) are those of the stored ones."""
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning import products
    from spacy_treeboost.learning.features import presence
    from spacy_treeboost.learning.sharded import fold_split

    rng = numpy.random.default_rng(seed)
    n, d = int(rng.integers(2, 40)), int(rng.integers(1, 30))
    counts = csc_matrix((rng.random((n, d)) < 0.3) * rng.integers(1, 4, (n, d)))
    y = numpy.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    stored, bare = presence(counts), presence(counts, stored=False)
    assert bare.data.strides[0] == 0 and not bare.data.flags.writeable
    numpy.testing.assert_array_equal(products.column_values(bare), products.column_values(stored))
    folds = rng.integers(0, 3, n)
    for a, b in zip(fold_split(stored, folds, 1, threads), fold_split(bare, folds, 1, threads)):
        assert (a != b).nnz == 0 and a.indices.tobytes() == b.indices.tobytes()
    saved = products.BLOCK_NNZ
    products.BLOCK_NNZ = 1 if blocks else saved
    try:
        fits = [fit_linear(X, y, C=1.0, tol=1e-9, max_iter=500, threads=threads) for X in (stored, bare)]
    finally:
        products.BLOCK_NNZ = saved
    assert fits[0][0].tobytes() == fits[1][0].tobytes() and fits[0][1] == fits[1][1]
