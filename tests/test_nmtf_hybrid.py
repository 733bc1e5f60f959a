"""SSMFLKNaiveBayes: naive Bayes against a brute-force count, the paper's SSMFLK unchanged inside it, the combined
score, registration and model files."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.util import registry

from spacy_treeboost.nmtf import SSMFLK, SSMFLKNaiveBayes
from spacy_treeboost.nmtf.hybrid import naive_bayes_log_odds
from spacy_treeboost.pipeline.learners import nmtf_learners


def problem(seed=0, n=40, m=12):
    rng = np.random.default_rng(seed)
    X = rng.random((n, m)) * (rng.random((n, m)) < 0.4)
    X[np.arange(n), rng.integers(0, m, n)] = 0.5
    F0 = np.zeros((m, 2))
    F0[:3, 0] = 1
    F0[3:6, 1] = 1
    y = np.where(rng.random(n) < 0.3, rng.integers(0, 2, n), -1)
    y[:2] = [0, 1]
    return sp.csr_matrix(X), F0, y


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12), st.integers(1, 6), st.integers(0, 10_000), st.floats(0.1, 3.0))
def test_naive_bayes_log_odds_match_a_brute_force_count(n, m, seed, smoothing):
    rng = np.random.default_rng(seed)
    X = rng.random((n, m)) * (rng.random((n, m)) < 0.6)
    y = rng.integers(-1, 2, n)
    y[0], y[1 % n] = 0, 1
    if n == 1:
        return
    coef, intercept = naive_bayes_log_odds(sp.csr_matrix(X), y, smoothing)
    for w in range(m):
        pos = sum(X[j, w] for j in range(n) if y[j] == 0)
        neg = sum(X[j, w] for j in range(n) if y[j] == 1)
        pos_total = sum(X[j, v] for j in range(n) for v in range(m) if y[j] == 0) + m * smoothing
        neg_total = sum(X[j, v] for j in range(n) for v in range(m) if y[j] == 1) + m * smoothing
        expected = np.log((pos + smoothing) / pos_total) - np.log((neg + smoothing) / neg_total)
        assert coef[w] == pytest.approx(expected, rel=1e-9, abs=1e-9)
    assert intercept == pytest.approx(np.log(np.sum(y == 0) / np.sum(y == 1)))


def test_the_factorization_is_the_papers_ssmflk_bit_for_bit():
    X, F0, y = problem()
    paper = SSMFLK(lexicon_prior=F0, max_iter=30, tol=0.0).fit(X, y)
    hybrid = SSMFLKNaiveBayes(lexicon_prior=F0, max_iter=30, tol=0.0).fit(X, y)
    for name in ("F_", "S_", "G_"):
        assert np.array_equal(getattr(paper, name), getattr(hybrid, name))
    assert paper.objective_ == hybrid.objective_


@pytest.mark.parametrize("features", ["binary", "weights"])
def test_the_score_is_the_sum_of_the_two_scaled_scores(features):
    X, F0, y = problem(1)
    model = SSMFLKNaiveBayes(lexicon_prior=F0, nb_weight=0.3, nb_features=features, max_iter=20).fit(X, y)
    free = y == -1
    log_ratio = np.log(model.G_[:, 0]) - np.log(model.G_[:, 1])
    counted = (X > 0).astype(float) if features == "binary" else X
    coef, intercept = naive_bayes_log_odds(counted, y, 1.0)
    t = counted @ coef + intercept
    g = model.fold_in(X)
    d = g[:, 0] - g[:, 1]
    np.testing.assert_allclose(model.transductive_score(), log_ratio / log_ratio[free].std() + 0.3 * t / t[free].std())
    np.testing.assert_allclose(model.decision_function(X), d / d[free].std() + 0.3 * t / t[free].std())
    assert np.array_equal(model.labels_, np.where(model.transductive_score() >= 0, 0, 1))
    assert np.array_equal(model.predict(X), np.where(model.decision_function(X) >= 0, 0, 1))
    proba = model.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1) and np.array_equal(proba[:, 0] > 0.5, model.decision_function(X) > 0)


def test_without_labels_of_both_classes_it_is_ssmflk():
    X, F0, y = problem(2)
    only_positive = np.where(y == 1, -1, y)
    model = SSMFLKNaiveBayes(lexicon_prior=F0, max_iter=10).fit(X, only_positive)
    reference = SSMFLK(lexicon_prior=F0, max_iter=10).fit(X, only_positive)
    assert not model.nb_coef_.any() and model.nb_intercept_ == 0.0
    assert np.array_equal(model.labels_, reference.labels_)


def test_parameters_registration_and_bad_settings():
    model = SSMFLKNaiveBayes(nb_weight=0.2, beta=2.0, alpha=0.3)
    params = model.get_params()
    assert params["nb_weight"] == 0.2 and params["beta"] == 2.0 and params["alpha"] == 0.3
    assert set(SSMFLK().get_params()) < set(params)
    assert nmtf_learners()["spacy_treeboost.SSMFLKNaiveBayes.v1"] is SSMFLKNaiveBayes
    assert registry.learners.get("spacy_treeboost.SSMFLKNaiveBayes.v1") is SSMFLKNaiveBayes
    X, F0, y = problem()
    with pytest.raises(ValueError, match="nb_smoothing"):
        SSMFLKNaiveBayes(lexicon_prior=F0, nb_smoothing=0.0).fit(X, y)
    with pytest.raises(ValueError, match="nb_weight"):
        SSMFLKNaiveBayes(lexicon_prior=F0, nb_weight=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="nb_features=.* is invalid: choose one of binary, weights"):
        SSMFLKNaiveBayes(lexicon_prior=F0, nb_features="counts").fit(X, y)


def test_fitted_state_round_trip_and_checks():
    X, F0, y = problem(3)
    model = SSMFLKNaiveBayes(lexicon_prior=F0, max_iter=10).fit(X, y)
    copy = SSMFLKNaiveBayes()
    copy.F_, copy.S_ = model.F_, model.S_
    copy.load_fitted_state(model.fitted_state())
    assert np.array_equal(copy.decision_function(X), model.decision_function(X))
    state = model.fitted_state()
    with pytest.raises(ValueError, match="three positive scales"):
        copy.load_fitted_state(dict(state, scales=[1.0, 0.0, 1.0]))
