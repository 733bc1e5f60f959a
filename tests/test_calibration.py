"""Calibrated boosted rule lists: out-of-fold Platt scaling folded into the rules."""
import numpy
import pytest
import srsly

from reference import random_trees
from spacy_treeboost.learning.calibration import CalibratedBoostClassifier, scaled_rules
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.learning.classifier_files import classifier_from_dict, classifier_to_dict
from spacy_treeboost.learning.selection import stratified_folds
from spacy_treeboost.trees.forest import Forest


def data(seed=3, n=24):
    f = Forest.from_trees(random_trees(seed, min_docs=n, max_docs=n, max_nodes=10)[0])
    rng = numpy.random.default_rng(seed)
    y = ["+1" if v else "-1" for v in rng.random(n) < 0.5]
    y[0], y[1] = "+1", "-1"
    return f, y


def test_scaled_rules_score_the_affine_map_of_the_margin():
    f, y = data()
    booster = TreeBoostClassifier("frequency", n_rounds=8).fit(f, y)
    F = booster.rules_.margins(f)[:, 0]
    out = scaled_rules(booster.rules_, [0.7], [-0.3])
    numpy.testing.assert_allclose(out.margins(f)[:, 0], (0.7 * F - 0.3) / 2, atol=1e-12)
    assert [code for code, *_ in out.rules(0)] == [code for code, *_ in booster.rules_.rules(0)]


@pytest.mark.parametrize("seed", [2, 5])
def test_calibration_is_platt_scaling_of_out_of_fold_margins(seed):
    """Against scikit-learn's logistic regression on the out-of-fold margins with Platt's smoothed targets
    (each margin once as a positive, weight t, and once as a negative, weight 1 - t); with seed 5 its slope
    is negative, so the slope is clipped at 0 and every probability is sigmoid(intercept)."""
    sklearn_linear = pytest.importorskip("sklearn.linear_model")
    f, y = data(seed, 30)
    params = dict(algorithm="presence", n_rounds=6, max_pattern_size=2)
    clf = CalibratedBoostClassifier(TreeBoostClassifier(**params), cv=3).fit(f, y)
    t = numpy.array([1 if v == "+1" else -1 for v in y])
    folds = stratified_folds(t, 3)
    oof = numpy.zeros(len(y))
    for k in range(3):
        tr, te = numpy.flatnonzero(folds != k), numpy.flatnonzero(folds == k)
        part = TreeBoostClassifier(**params).fit(f.subset(tr), [y[i] for i in tr])
        oof[te] = part.decision_function(f.subset(te))
    n_pos, n_neg = int((t > 0).sum()), int((t < 0).sum())
    target = numpy.where(t > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    ref = sklearn_linear.LogisticRegression(C=1e10, tol=1e-12, max_iter=10000).fit(
        numpy.concatenate([oof, oof])[:, None], numpy.repeat([1, -1], len(oof)),
        sample_weight=numpy.concatenate([target, 1 - target]))
    assert clf.scales_[0] == pytest.approx(max(ref.coef_[0, 0], 0.0), abs=1e-3)
    assert clf.offsets_[0] == pytest.approx(ref.intercept_[0], abs=1e-3)
    booster = TreeBoostClassifier(**params).fit(f, y)
    F = booster.decision_function(f)
    P = clf.predict_proba(f)[:, clf.classes_.index("+1")]
    assert (ref.coef_[0, 0] > 0) == (seed == 2)
    if seed == 2:
        expected = ref.predict_proba(F[:, None])[:, list(ref.classes_).index(1)]
    else:
        expected = numpy.full(len(F), 1 / (1 + numpy.exp(-ref.intercept_[0])))
    numpy.testing.assert_allclose(P, expected, atol=1e-3)


def test_round_trip_and_bad_cv():
    f, y = data()
    clf = CalibratedBoostClassifier(TreeBoostClassifier("bact", n_rounds=4), cv=2).fit(f, y)
    again = classifier_from_dict(srsly.msgpack_loads(srsly.msgpack_dumps(classifier_to_dict(clf))))
    numpy.testing.assert_array_equal(again.decision_function(f), clf.decision_function(f))
    assert type(again) is CalibratedBoostClassifier and again.estimator.algorithm == "bact"
    with pytest.raises(ValueError, match="cv=1 is invalid"):
        CalibratedBoostClassifier(cv=1).fit(f, y)
