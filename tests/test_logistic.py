"""The regularized linear solver against scikit-learn and against its own objective, on random data."""
import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse import csr_matrix

from spacy_treeboost.learning.logistic import check_settings, choose_C, fit_linear, make_path, objective, stratified_folds

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


@SETTINGS
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
@SETTINGS
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
    chosen, scores, _, _ = choose_C(csr_matrix(X), y, [make_path(False, Cs, 1.0, ())], cv=4)
    C = chosen.C
    folds = stratified_folds(y, 4)
    manual = []
    for Cv in Cs:
        right = 0
        for k in range(4):
            tr, te = folds != k, folds == k
            w, c = fit_linear(csr_matrix(X[tr]), y[tr], C=Cv)
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
        check_settings(**settings_)


def test_solvers_run_on_one_blas_thread_and_restore_the_setting(monkeypatch):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from spacy_treeboost.learning import logistic

    def blas_threads():
        return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}

    seen = []
    real = logistic.fit_linear

    def spy(*args, **kwargs):
        seen.append(blas_threads())
        return real(*args, **kwargs)

    monkeypatch.setattr(logistic, "fit_linear", spy)
    X, y = random_problem(3)
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        logistic.fit_head(csr_matrix(X), y, C=None, Cs=[0.1, 1.0], cv=2, nb=True)
        after = blas_threads()
    assert len(seen) == 5 and all(s and set(s.values()) == {1} for s in seen)
    assert after == before
