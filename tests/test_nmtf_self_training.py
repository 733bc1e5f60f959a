"""SSMFLKSelfTrained: the logistic regression against scikit-learn's on random inputs, the teacher's classes as
its targets, the teacher's naive Bayes weight by document length, the factorization unchanged, model state."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.util import registry

from spacy_treeboost.nmtf import SSMFLK, SSMFLKNaiveBayes, SSMFLKSelfTrained
from spacy_treeboost.nmtf.hybrid import logistic_regression, mean_distinct_words
from spacy_treeboost.pipeline.learners import nmtf_learners
from spacy_treeboost.exceptions import NotFittedError


def objective(w, b, X, positive, C, s):
    t = np.where(positive, 1.0, -1.0)
    return C * np.sum(s * np.logaddexp(0, -t * (X @ w + b))) + 0.5 * w @ w


@settings(max_examples=20, deadline=None)
@given(st.integers(3, 30), st.integers(1, 8), st.integers(0, 10_000), st.sampled_from([0.1, 1.0, 10.0]))
def test_logistic_regression_reaches_scikit_learns_optimum(n, m, seed, C):
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    X = rng.random((n, m)) * (rng.random((n, m)) < 0.7)
    positive = rng.random(n) < 0.5
    positive[0], positive[1] = True, False
    s = rng.uniform(0.5, 3.0, n)
    w, b = logistic_regression(sp.csr_matrix(X), positive, C, s)
    reference = LogisticRegression(C=C, tol=1e-10, max_iter=10_000).fit(X, positive.astype(int), sample_weight=s)
    ours = objective(w, b, X, positive, C, s)
    theirs = objective(reference.coef_[0], reference.intercept_[0], X, positive, C, s)
    assert ours <= theirs + 1e-6 * max(1.0, abs(theirs))
    np.testing.assert_allclose(np.concatenate([w, [b]]), np.concatenate([reference.coef_[0], reference.intercept_]),
                               atol=1e-3)


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


def test_the_student_learns_the_labels_and_the_teachers_classes():
    X, F0, y = problem(1)
    model = SSMFLKSelfTrained(lexicon_prior=F0, lr_C=2.0, lr_label_weight=3.0, max_iter=20).fit(X, y)
    teacher = SSMFLKNaiveBayes(lexicon_prior=F0, max_iter=20).fit(X, y)
    np.testing.assert_array_equal(model.teacher_score(), teacher.transductive_score())
    labelled = y >= 0
    targets = np.where(labelled, y == 0, teacher.transductive_score() >= 0)
    w, b = logistic_regression(X, targets, 2.0, np.where(labelled, 3.0, 1.0))
    np.testing.assert_array_equal(model.lr_coef_, w)
    assert model.lr_intercept_ == b
    np.testing.assert_allclose(model.decision_function(X), X @ w + b)
    np.testing.assert_array_equal(model.labels_, np.where(X @ w + b >= 0, 0, 1))
    for name in ("F_", "S_", "G_"):
        assert np.array_equal(getattr(model, name), getattr(SSMFLK(lexicon_prior=F0, max_iter=20).fit(X, y), name))


def test_registration_parameters_state_and_bad_settings():
    assert nmtf_learners()["spacy_treeboost.SSMFLKSelfTrained.v1"] is SSMFLKSelfTrained
    assert registry.learners.get("spacy_treeboost.SSMFLKSelfTrained.v1") is SSMFLKSelfTrained
    params = SSMFLKSelfTrained(lr_C=3.0, nb_weight=0.2).get_params()
    assert params["lr_C"] == 3.0 and params["nb_weight"] == 0.2 and set(SSMFLKNaiveBayes().get_params()) < set(params)
    X, F0, y = problem(2)
    model = SSMFLKSelfTrained(lexicon_prior=F0, max_iter=10).fit(X, y)
    copy = SSMFLKSelfTrained()
    copy.F_, copy.S_ = model.F_, model.S_
    copy.load_fitted_state(model.fitted_state())
    assert np.array_equal(copy.decision_function(X), model.decision_function(X))
    with pytest.raises(ValueError, match="one finite coefficient per word"):
        copy.load_fitted_state(dict(model.fitted_state(), lr_coef=[1.0]))
    with pytest.raises(ValueError, match="lr_C=0.* is invalid: use a number > 0"):
        SSMFLKSelfTrained(lexicon_prior=F0, lr_C=0.0).fit(X, y)
    with pytest.raises(NotFittedError, match="not fitted"):
        SSMFLKSelfTrained().decision_function(X)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 10), st.integers(0, 10_000))
def test_mean_distinct_words_counts_the_nonzero_entries_of_each_row(n, m, seed):
    rng = np.random.default_rng(seed)
    dense = rng.random((n, m)) * (rng.random((n, m)) < 0.5)
    X = sp.csr_matrix(dense)
    X.data[: len(X.data) // 3] = 0.0
    dense = X.toarray()
    expected = sum(sum(1 for v in row if v != 0) for row in dense) / n
    assert mean_distinct_words(X) == pytest.approx(expected)
    assert mean_distinct_words(dense) == pytest.approx(expected)


@pytest.mark.parametrize("long", [False, True])
def test_the_teachers_naive_bayes_weight_follows_the_document_length(long):
    X, F0, y = problem(3)
    words = mean_distinct_words(X)
    threshold = words if long else words + 0.5
    model = SSMFLKSelfTrained(lexicon_prior=F0, nb_weight=0.1, long_nb_weight=0.7, long_document_words=threshold,
                              max_iter=20).fit(X, y)
    weight = 0.7 if long else 0.1
    assert model.nb_weight_ == weight
    teacher = SSMFLKNaiveBayes(lexicon_prior=F0, nb_weight=weight, max_iter=20).fit(X, y)
    np.testing.assert_array_equal(model.teacher_score(), teacher.transductive_score())
    np.testing.assert_array_equal(model.labels_, np.where(model.decision_function(X) >= 0, 0, 1))
    copy = SSMFLKSelfTrained()
    copy.F_, copy.S_ = model.F_, model.S_
    copy.load_fitted_state(model.fitted_state())
    assert copy.nb_weight_ == weight
    older = {k: v for k, v in model.fitted_state().items() if k != "nb_weight"}
    copy.load_fitted_state(older)
    assert copy.nb_weight_ == copy.nb_weight
    with pytest.raises(ValueError, match="naive Bayes weight of the state"):
        copy.load_fitted_state(dict(model.fitted_state(), nb_weight=-1.0))
    with pytest.raises(ValueError, match="long_document_words=0.* is invalid: use a number > 0"):
        SSMFLKSelfTrained(lexicon_prior=F0, long_document_words=0).fit(X, y)
