"""SSMFLK's label levers from the third round of the label ablation: a labelled start weighted by the words'
labelled document frequency (`start_weights`) and the labels' word polarities in the prior F0
(`label_prior`), each against a dense, loop-by-loop reference."""
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from spacy_treeboost.nmtf import SSMFLK, align_clusters, lexicon_classes, one_hot
from spacy_treeboost.nmtf.common import label_word_prior
from differences import first_difference
from nmtf_problems import PINNED_RTOL, fitted_factors, pinned_fit, pinned_reference
from nmtf_problems import (T8_F0, _pinned_problem, dense_objective, problems, random_problem, start_classes,  # noqa: F401
                       t8_X, unit_priors)


def _labelled_problem(problem, share=0.4):
    seed, m, n, density, _ = problem
    X, F0, y = random_problem(seed, m, n, density, labelled=share)
    y[0] = 0 if y[0] == -1 else y[0]
    return X, F0, y, m, n


def _dense_word_shares(X, y, min_docs):
    """Per word: the share of its weight over the labelled documents of each class, 0 below min_docs."""
    Xd = X.toarray().T
    m, n = Xd.shape
    shares = np.zeros((m, 2))
    for i in range(m):
        if sum(1 for j in range(n) if y[j] != -1 and Xd[i, j] > 0) < min_docs:
            continue
        for j in range(n):
            if y[j] != -1:
                shares[i, y[j]] += Xd[i, j]
        total = shares[i].sum()
        if total > 0:
            shares[i] /= total
    return shares


@pytest.mark.reference
def test_defaults_reproduce_the_previous_ssmflk():
    """The defaults, and label_prior = 0 with start_weights = "uniform" set explicitly, give the factors of the
    code before the third round (commit ce9a77e) on the pinned problem, committed in
    tests/data/nmtf_pinned.msgpack: the iteration count exactly, the factors and objective within PINNED_RTOL
    of each matrix's largest entry (its docstring derives the bound); the two spellings give the same bytes."""
    defaults = pinned_fit("ssmflk")
    explicit = pinned_fit("ssmflk", label_prior=0.0, start_weights="uniform")
    assert fitted_factors(explicit) == fitted_factors(defaults)
    for name, model in (("ssmflk", defaults), ("ssmflk_other", pinned_fit("ssmflk_other"))):
        difference = first_difference(fitted_factors(model), pinned_reference(name), PINNED_RTOL)
        assert difference is None, f"{name} differs from its reference at {difference}"


@settings(max_examples=30, deadline=None)
@given(problems, st.integers(1, 3))
def test_label_word_prior_matches_a_dense_computation(problem, min_docs):
    X, _, y, _, n = _labelled_problem(problem)
    labelled = y != -1
    shares = label_word_prior(X.T.tocsr(), one_hot(y), labelled, min_docs)
    np.testing.assert_allclose(shares, _dense_word_shares(X, y, min_docs), rtol=1e-12, atol=1e-15)
    sums = shares.sum(axis=1)
    assert np.all((np.abs(sums - 1) < 1e-12) | (sums == 0))


@settings(max_examples=30, deadline=None)
@given(problems, st.floats(0.01, 1.0), st.integers(1, 3))
def test_frequency_weighted_start_matches_a_dense_computation(problem, label_start, min_docs):
    """start_weights = "frequency": the class sums are each word's class shares times the number of
    labelled documents it occurs in; the rest of the start is as with uniform weights."""
    X, F0, y, m, n = _labelled_problem(problem)
    model = SSMFLK(lexicon_prior=F0, label_start=label_start, label_min_docs=min_docs,
                   start_weights="frequency").initialize(X, y)
    Xd = X.toarray().T
    counts = np.array([sum(1 for j in range(n) if y[j] != -1 and Xd[i, j] > 0) for i in range(m)])
    sums = _dense_word_shares(X, y, min_docs) * counts[:, None]
    base = F0 + 0.2
    norms = np.linalg.norm(sums, axis=0)
    F = base + label_start * np.linalg.norm(base, axis=0) * sums / np.where(norms > 0, norms, 1.0)
    F = F / np.linalg.norm(F, axis=0)
    np.testing.assert_allclose(model.F_, F, rtol=1e-12, atol=1e-15)
    G = one_hot(align_clusters(X, F0, start_classes(X, model))) + 0.2
    G[y != -1] = one_hot(y)[y != -1] + 0.2
    np.testing.assert_allclose(model.G_, G / np.linalg.norm(G, axis=0), rtol=1e-12, atol=1e-15)


@settings(max_examples=30, deadline=None)
@given(problems, st.floats(0.01, 5.0), st.integers(1, 3))
def test_label_prior_builds_F0_from_lexicon_and_labels(problem, label_prior, min_docs):
    """label_prior = lambda: F0 = lexicon + lambda * word shares, in the start (label_start = 0: F0 + 0.2 and
    its document classes), in the prior's support C1 and, unit-scaled, in the objective."""
    X, F0, y, m, n = _labelled_problem(problem)
    model = SSMFLK(lexicon_prior=F0, label_prior=label_prior, label_min_docs=min_docs,
                   label_start=0.0).initialize(X, y)
    combined = F0 + label_prior * _dense_word_shares(X, y, min_docs)
    F = combined + 0.2
    np.testing.assert_allclose(model.F_, F / np.linalg.norm(F, axis=0), rtol=1e-12, atol=1e-15)
    G = one_hot(align_clusters(X, combined, lexicon_classes(X, combined))) + 0.2
    G[y != -1] = one_hot(y)[y != -1] + 0.2
    np.testing.assert_allclose(model.G_, G / np.linalg.norm(G, axis=0), rtol=1e-12, atol=1e-15)
    assert np.array_equal(model._c1, combined.sum(axis=1) > 0)
    F0u, G0u = unit_priors(combined, y, n)
    assert model.objective_[0] == pytest.approx(
        dense_objective(X, model.F_, model.S_, model.G_, F0u, G0u, 0.5, model.beta_), rel=1e-9, abs=1e-9)


@settings(max_examples=25, deadline=None)
@given(problems, st.floats(0.01, 5.0), st.sampled_from(["uniform", "frequency"]))
def test_objective_never_increases_with_the_label_levers(problem, label_prior, start_weights):
    X, F0, y, _, _ = _labelled_problem(problem)
    model = SSMFLK(lexicon_prior=F0, label_prior=label_prior, start_weights=start_weights, max_iter=15, tol=0).fit(X, y)
    steps = np.diff(model.objective_)
    assert np.all(steps <= 1e-9 * np.abs(np.asarray(model.objective_[:-1])) + 1e-12)
    assert np.isfinite(model.F_).all() and (model.F_ > 0).all()


@settings(max_examples=20, deadline=None)
@given(problems, st.floats(0.01, 5.0), st.sampled_from(["uniform", "frequency"]))
def test_without_labels_the_levers_do_nothing(problem, label_prior, start_weights):
    seed, m, n, density, _ = problem
    X, F0, _ = random_problem(seed, m, n, density)
    unlabelled = -np.ones(n, dtype=int)
    plain = SSMFLK(lexicon_prior=F0, max_iter=5).fit(X, unlabelled)
    levers = SSMFLK(lexicon_prior=F0, label_prior=label_prior, start_weights=start_weights, max_iter=5).fit(X, unlabelled)
    assume(np.isfinite(plain.F_).all())
    for name in ("F_", "S_", "G_"):
        assert np.array_equal(getattr(levers, name), getattr(plain, name))


@pytest.mark.parametrize(
    "params,message",
    [
        ({"start_weights": "idf"}, "^start_weights=.* is invalid: choose one of uniform, frequency"),
        ({"label_prior": -0.5}, "^label_prior=.* is invalid: use a number >= 0"),
        ({"label_prior": float("nan")}, "^label_prior=.* is invalid: use a number >= 0"),
    ],
)
def test_bad_label_lever_settings_name_the_setting(t8_X, params, message):
    with pytest.raises(ValueError, match=message):
        SSMFLK(lexicon_prior=T8_F0, **params).fit(t8_X, np.array([0, -1, -1]))


def test_component_learner_block_takes_the_label_levers():
    """start_weights and label_prior in the nmtf_sentiment learner block train like the estimator with them."""
    from spacy_treeboost.nmtf import build_vocabulary, document_term_matrix, lexicon_prior, word_weights
    from nmtf_pipes import LEXICON, TEXTS, make_nlp, train

    settings = {"start_weights": "frequency", "label_prior": 0.5, "label_min_docs": 1, "tol": 0.0}
    nlp = make_nlp(**settings)
    assert {k: nlp.get_pipe("nmtf_sentiment").cfg["learner"][k] for k in settings} == settings
    examples, losses = train(nlp, steps=4)
    tokens = [[t.lower_ for t in eg.predicted] for eg in examples]
    vocabulary = build_vocabulary(tokens)
    X = document_term_matrix(tokens, vocabulary, word_weights=word_weights(document_term_matrix(tokens, vocabulary)))
    y = np.array([-1 if label is None else int(label == "neg") for _, label in TEXTS])
    F0 = lexicon_prior(vocabulary, LEXICON.positive, LEXICON.negative)
    n_iter = nlp.get_pipe("nmtf_sentiment").fit_info_["iterations"]
    reference = SSMFLK(lexicon_prior=F0, max_iter=n_iter, **settings).fit(X, y)
    assert losses["nmtf_sentiment"] == pytest.approx(reference.objective_[-1])
    plain = SSMFLK(lexicon_prior=F0, max_iter=n_iter, tol=0.0).fit(X, y)
    assert reference.objective_[-1] != plain.objective_[-1]
