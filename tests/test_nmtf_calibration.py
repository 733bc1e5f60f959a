"""Calibration of the NMTF scores: Platt scaling against a brute-force minimizer, the temperature,
log-loss and ECE against direct computations, and the component's probabilities."""
import numpy as np
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from spacy.training import Example

from spacy_treeboost.nmtf.calibration import (
    Calibration, expected_calibration_error, label_folds, log_loss, platt)
from spacy_treeboost.nmtf import document_term_matrix
from spacy_treeboost.nmtf.lexicons import Lexicon

scores_and_labels = st.integers(min_value=4, max_value=60).flatmap(lambda n: st.tuples(
    st.lists(st.floats(-5, 5, allow_nan=False), min_size=n, max_size=n),
    st.lists(st.booleans(), min_size=n, max_size=n)))


def smoothed_loss(params, s, positive):
    n_pos, n_neg = positive.sum(), (~positive).sum()
    t = np.where(positive, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    z = params[0] * s + params[1]
    return float(np.sum(np.logaddexp(0, z) - t * z))


@settings(max_examples=60, deadline=None)
@given(scores_and_labels, st.sampled_from([1.0, 1e3, 1e6]))
def test_platt_reaches_the_minimum_of_its_smoothed_loss_at_any_scale(data, scale):
    """Scores a thousand or a million times larger (the sigmoid saturates at Newton's usual start) have the same
    minimum, at the slope divided by the scale."""
    s, positive = np.array(data[0]), np.array(data[1])
    if positive.all() or not positive.any():
        positive[0] = not positive[0]
    a, b = platt(s * scale, positive)
    reference = minimize(smoothed_loss, x0=[0.0, 0.0], args=(s, positive), method="Nelder-Mead",
                         options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000, "maxfev": 40000})
    assert np.isfinite([a, b]).all()
    assert smoothed_loss([a * scale, b], s, positive) <= reference.fun + 1e-7


def test_platt_recovers_a_known_logistic_model():
    rng = np.random.default_rng(0)
    s = rng.normal(size=20000)
    positive = rng.random(20000) < 1 / (1 + np.exp(-(2.0 * s - 0.5)))
    a, b = platt(s, positive)
    assert a == pytest.approx(2.0, abs=0.1) and b == pytest.approx(-0.5, abs=0.05)


def test_separable_labels_give_a_finite_map_and_never_exactly_0_or_1():
    s = np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    y = np.array([1, 1, 1, 0, 0, 0])
    calibration = Calibration.fit(s, y)
    assert calibration.method == "platt" and np.isfinite(calibration.slope) and calibration.slope > 0
    p = calibration.positive_probability(np.array([-1e6, -40.0, 0.0, 40.0, 1e6]))
    assert (p > 0).all() and (p < 1).all() and np.all(np.diff(p) >= 0)


def test_without_labels_of_both_classes_the_temperature_is_one_standard_deviation():
    s = np.array([-2.0, -1.0, 0.5, 3.0])
    for y in (None, np.full(4, -1), np.array([0, -1, 0, -1])):
        calibration = Calibration.fit(s, y)
        assert calibration.method == "temperature" and calibration.intercept == 0.0
        assert calibration.slope == pytest.approx(1 / np.std(s))
        assert calibration.positive_probability(np.array([np.std(s)]))[0] == pytest.approx(1 / (1 + np.exp(-1)))
    assert Calibration.fit(np.zeros(3), None).slope == 1.0


def test_scores_that_are_not_finite_are_refused():
    with pytest.raises(ValueError, match="not finite"):
        Calibration.fit(np.array([np.nan, 1.0]), np.array([0, 1]))


def test_round_trip_and_checked_loading():
    calibration = Calibration(1.5, -0.25, "platt")
    assert Calibration.from_dict(calibration.to_dict()) == calibration
    with pytest.raises(ValueError, match="finite"):
        Calibration.from_dict({"slope": float("inf"), "intercept": 0.0, "method": "platt"})
    with pytest.raises(ValueError, match="method"):
        Calibration.from_dict({"slope": 1.0, "intercept": 0.0, "method": "isotonic"})


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-1, 1), min_size=1, max_size=40), st.integers(1, 4))
def test_label_folds_deal_each_class_in_turn(labels, n_folds):
    y = np.array(labels)
    folds = label_folds(y, n_folds)
    assert (folds[y == -1] == -1).all()
    for k in (0, 1):
        members = folds[y == k]
        assert list(members) == [i % n_folds for i in range(len(members))]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.booleans()), min_size=1, max_size=50))
def test_log_loss_and_ece_match_direct_computations(pairs):
    p = np.array([q for q, _ in pairs])
    positive = np.array([t for _, t in pairs])
    clipped = np.clip(p, 1e-12, 1 - 1e-12)
    expected = -np.mean([np.log(q) if t else np.log(1 - q) for q, t in zip(clipped, positive)])
    assert log_loss(p, positive) == pytest.approx(expected)
    bins = {}
    for q, t in zip(p, positive):
        confidence = max(q, 1 - q)
        k = min(int((confidence - 0.5) * 20), 9)
        bins.setdefault(k, []).append((confidence, (q >= 0.5) == t))
    ece = sum(len(v) * abs(np.mean([c for _, c in v]) - np.mean([c for c, _ in v])) for v in bins.values()) / len(p)
    assert expected_calibration_error(p, positive) == pytest.approx(ece)


def test_perfectly_calibrated_probabilities_have_a_small_ece():
    rng = np.random.default_rng(1)
    p = rng.random(50000)
    positive = rng.random(50000) < p
    assert expected_calibration_error(p, positive) < 0.01
    assert expected_calibration_error(np.where(p >= 0.5, 1.0, 0.0), positive) > 0.2


LEXICON = Lexicon(["good", "great", "superb", "fun"], ["bad", "awful", "boring", "dull"])
TEXTS = [("a good and great film", "pos"), ("a bad and awful plot", "neg"), ("great fun , good acting", "pos"),
         ("dull and bad , an awful script", "neg"), ("superb film , great story", "pos"),
         ("boring , dull story", "neg"), ("good fun plot", "pos"), ("awful boring acting", "neg"),
         ("the cast and the film", None), ("good story but boring acting", None)]


def trained(learner, **settings):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("nmtf_sentiment", config={"positive_label": "pos", "negative_label": "neg",
                                                  "learner": {"@learners": learner, **settings}})
    examples = [Example.from_dict(nlp.make_doc(text), {"cats": {} if label is None else
                                                       {"pos": float(label == "pos"), "neg": float(label == "neg")}})
                for text, label in TEXTS]
    pipe.initialize(lambda: examples, nlp=nlp, lexicon=LEXICON)
    for _ in range(3):
        nlp.update(examples)
    return nlp, pipe


def fold_models(pipe):
    """The training labels and matrix, and the component's two fold models rebuilt: each without one fold of the
    labels, not yet iterated."""
    from spacy_treeboost.nmtf.calibration import label_folds

    y = np.array([-1 if label is None else int(label == "neg") for _, label in TEXTS])
    X, folds = pipe._estimator._Xt, label_folds(y, 2)
    estimator = pipe._estimator
    return y, X, [type(estimator)(**estimator.get_params()).initialize(X, np.where(folds == k, -1, y)) for k in (0, 1)]


@pytest.mark.parametrize("learner", ["spacy_treeboost.SSMFLKSelfTrained.v1", "spacy_treeboost.SSMFLKNaiveBayes.v1",
                                     "spacy_treeboost.SSMFLK.v1", "spacy_treeboost.MFLK.v1"])
def test_component_probabilities_are_calibrated_scores_and_survive_saving(learner, tmp_path):
    nlp, pipe = trained(learner)
    assert pipe.calibration.method == "platt"
    assert (pipe.fit_info_ is None) == (learner == "spacy_treeboost.MFLK.v1")
    texts = ["great", "awful", "good fun", "dull boring", "nothing known"]
    docs = list(nlp.pipe(texts))
    assert all(0 < d.cats["pos"] < 1 and d.cats["pos"] + d.cats["neg"] == pytest.approx(1) for d in docs)
    assert docs[0].cats["pos"] > 0.5 > docs[1].cats["pos"]
    nlp.to_disk(tmp_path / "p")
    loaded = spacy.load(tmp_path / "p")
    assert [d.cats for d in loaded.pipe(texts)] == [d.cats for d in docs]
    assert loaded.get_pipe("nmtf_sentiment").calibration == pipe.calibration


@pytest.mark.parametrize("learner", ["spacy_treeboost.SSMFLKSelfTrained.v1", "spacy_treeboost.SSMFLK.v1"])
def test_initialize_runs_the_iterations_the_held_out_labels_choose(learner):
    """By hand: fold models with half of the labels hidden, scored on those labels every iterations_per_update
    iterations; the latest checkpoint within one standard error of the best is the model's iteration count."""
    from spacy_treeboost.nmtf.calibration import label_folds

    nlp, pipe = trained(learner, tol=0.0)
    y, X, models = fold_models(pipe)
    folds = label_folds(y, 2)
    labelled = folds >= 0
    step, max_iter = pipe.cfg["iterations_per_update"], models[0].max_iter
    checkpoints, accuracy = [], []
    for n in range(0, max_iter + 1, step):
        if n:
            for m in models:
                m.iterate(step)
        score = np.zeros(len(y))
        for k, m in enumerate(models):
            score[folds == k] = m.decision_function(X[np.flatnonzero(folds == k)])
        checkpoints.append(n)
        accuracy.append(np.mean((score[labelled] >= 0) == (y[labelled] == 0)))
    best = max(accuracy)
    within = [n for n, a in zip(checkpoints, accuracy) if a >= best - np.sqrt(best * (1 - best) / labelled.sum())]
    assert pipe.fit_info_["checkpoints"] == checkpoints
    assert pipe.fit_info_["held_out_accuracy"] == pytest.approx(accuracy)
    assert pipe._estimator.n_iter_ == pipe.fit_info_["iterations"] == within[-1]
    reference = type(pipe._estimator)(**pipe._estimator.get_params()).initialize(X, y).iterate(within[-1])
    np.testing.assert_allclose(reference.F_, pipe._estimator.F_)


@pytest.mark.parametrize("learner", ["spacy_treeboost.SSMFLKSelfTrained.v1", "spacy_treeboost.MFLK.v1"])
def test_training_steps_do_not_change_the_model(learner):
    nlp, pipe = trained(learner)
    texts = ["great", "awful", "good fun", "dull boring", "nothing known"]
    before = ([d.cats for d in nlp.pipe(texts)], pipe.calibration, pipe._estimator.n_iter_)
    losses = {}
    for _ in range(3):
        pipe.update([], losses=losses)
    assert ([d.cats for d in nlp.pipe(texts)], pipe.calibration, pipe._estimator.n_iter_) == before
    assert losses["nmtf_sentiment"] == pipe._estimator.objective_[-1]
    if learner.endswith("MFLK.v1") and "SS" not in learner:
        assert pipe._estimator.n_iter_ == pipe._estimator.max_iter or pipe._estimator.converged_


def test_a_model_file_without_a_calibration_loads_with_the_plain_normalization():
    nlp, pipe = trained("spacy_treeboost.SSMFLK.v1")
    data = pipe._model_data()
    assert data["calibration"]["method"] == "platt"
    del data["calibration"]
    other = spacy.blank("en").add_pipe("nmtf_sentiment", config={
        "positive_label": "pos", "negative_label": "neg", "learner": {"@learners": "spacy_treeboost.SSMFLK.v1"}})
    other._load_model_bytes(pipe._sealed(data), cfg_loaded=False)
    assert other.calibration is None
    doc = other(spacy.blank("en").make_doc("great fun"))
    X = document_term_matrix([["great", "fun"]], other.vocabulary, word_weights=other._word_weights)
    assert [doc.cats["pos"], doc.cats["neg"]] == list(other._estimator.predict_proba(X)[0])
    data["calibration"] = {"slope": 1.0, "intercept": None, "method": "platt"}
    with pytest.raises(ValueError, match="calibration"):
        other._load_model_bytes(pipe._sealed(data), cfg_loaded=False)


def test_hybrid_model_file_needs_its_naive_bayes_values():
    nlp, pipe = trained("spacy_treeboost.SSMFLKNaiveBayes.v1")
    data = pipe._model_data()
    del data["learner_state"]
    with pytest.raises(ValueError, match="learner's fitted values are missing"):
        pipe._load_model_bytes(pipe._sealed(data))


@pytest.mark.determinism
def test_training_twice_gives_the_same_probabilities_bit_for_bit():
    texts = ["great", "awful", "good fun", "dull boring", "the film"]
    runs = []
    for _ in range(2):
        nlp, pipe = trained("spacy_treeboost.SSMFLKSelfTrained.v1")
        runs.append(([d.cats for d in nlp.pipe(texts)], pipe.calibration, pipe._model_bytes()))
    assert runs[0] == runs[1]


def test_the_iteration_choice_ends_when_the_fold_models_converge():
    nlp, pipe = trained("spacy_treeboost.SSMFLK.v1", tol=0.05, max_iter=1000)
    checkpoints = pipe.fit_info_["checkpoints"]
    assert checkpoints == list(range(0, 10 * len(checkpoints), 10)) and checkpoints[-1] < 1000
    assert all(m.iterate(checkpoints[-1]).converged_ for m in fold_models(pipe)[2])
