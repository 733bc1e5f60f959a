"""Totally-corrective refits: the rule list reproduces the linear model over brute-force rule features."""
import pickle

import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference import random_binary_classes, count_embeddings, forest_docs, forests, random_trees
from spacy_treeboost.learning.corrective import CorrectiveBoostClassifier, corrective_rules
from spacy_treeboost.learning.learner import TreeBoostClassifier
from one_shard import fit_linear
from spacy_treeboost.trees.forest import Forest

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def labels_for(f: Forest, seed: int):
    return random_binary_classes(len(f), seed)


def brute_features(rules, head, forest):
    """Columns [count >= 1] and [count >= z] of head's distinct (pattern, z), counted by the reference."""
    docs = forest_docs(forest)
    vocab = forest.vocab.to_list()
    cols = []
    for code, z, _, _ in rules.rules(head):
        for key in ((code, 1), (code, z)):
            if key not in cols:
                cols.append(key)
    X = numpy.zeros((len(forest), len(cols)))
    for j, (code, z) in enumerate(cols):
        ids = tuple((d, vocab.index(l)) for d, l in code)
        for i, (labels, parents) in enumerate(docs):
            X[i, j] = count_embeddings(ids, labels, parents, allow_root=rules.include_root_patterns) >= z
    return X


@SETTINGS
@given(forests(st, min_docs=4), st.integers(0, 10**6), st.sampled_from(["frequency", "presence", "bact"]),
       st.sampled_from([0.1, 1.0, 10.0]), st.sampled_from(["presence", "nb"]))
def test_refit_rules_score_exactly_the_linear_model_over_reference_features(data, seed, algorithm, C, features):
    f = Forest.from_trees(data[0])
    assume(f.n_nodes > len(f))
    y = labels_for(f, seed)
    booster = TreeBoostClassifier(algorithm, n_rounds=6, max_pattern_size=3).fit(f, y)
    refit, info = corrective_rules(booster.rules_, f, [booster.heads_[0].y], CorrectiveBoostClassifier(C=C, features=features))
    X = brute_features(booster.rules_, 0, f)
    t = booster.heads_[0].y
    if features == "nb":
        p, q = X[t > 0].sum(axis=0) + 1, X[t < 0].sum(axis=0) + 1
        X = X * (numpy.log(p / p.sum()) - numpy.log(q / q.sum()))
    w, c = fit_linear(X, t, C=C)
    numpy.testing.assert_allclose(refit.margins(f)[:, 0], (X @ w + c) / 2, atol=1e-9)
    assert info[0]["features"] == X.shape[1]


def test_listing_and_explanations_work_on_refit_rules():
    f = Forest.from_trees(random_trees(5, min_docs=8, max_docs=8)[0])
    y = labels_for(f, 1)
    clf = CorrectiveBoostClassifier(TreeBoostClassifier("frequency", n_rounds=5), C=1.0).fit(f, y)
    listing = clf.rules_.listing()
    assert listing.startswith("# +1:")
    assert "bias" in listing
    F = clf.decision_function(f)
    for i in range(len(f)):
        contrib = sum(e["contribution"] for e in clf.rules_.contributions(f, i, 0))
        absent = sum(b for _, _, _, b in clf.rules_.rules(0))
        assert F[i] == pytest.approx(clf.rules_.intercepts[0] + absent + contrib)


def test_probabilities_are_logistic_and_the_booster_is_not_changed():
    f = Forest.from_trees(random_trees(9, min_docs=8, max_docs=8)[0])
    y = labels_for(f, 2)
    booster = TreeBoostClassifier("presence", n_rounds=4)
    clf = CorrectiveBoostClassifier(booster, C=0.5).fit(f, y)
    assert not hasattr(booster, "rules_")
    P = clf.predict_proba(f)
    F = clf.decision_function(f)
    pos = clf.classes_.index("+1")
    numpy.testing.assert_allclose(P[:, pos], 1 / (1 + numpy.exp(-2 * F)))
    assert len(clf.boosted_rules_) == 4


def test_multiclass_and_multilabel_refit_one_head_per_class():
    f = Forest.from_trees(random_trees(4, min_docs=8, max_docs=8)[0])
    y = ["a", "b", "c", "a", "b", "c", "a", "b"]
    clf = CorrectiveBoostClassifier(TreeBoostClassifier("frequency", n_rounds=3), C=1.0).fit(f, y)
    assert clf.rules_.heads == ["a", "b", "c"]
    assert clf.decision_function(f).shape == (8, 3)
    ym = [["a"], ["a", "b"], [], ["b"], ["a"], ["b"], ["a", "b"], []]
    clf = CorrectiveBoostClassifier(TreeBoostClassifier("presence", n_rounds=3), C=None, cv=2).fit(f, ym)
    assert all(set(p) <= {"a", "b"} for p in clf.predict(f))


@pytest.mark.determinism
def test_elastic_net_drops_rules_and_the_result_is_deterministic():
    f = Forest.from_trees(random_trees(12, min_docs=8, max_docs=8, max_nodes=10)[0])
    y = labels_for(f, 3)
    make = lambda: CorrectiveBoostClassifier(TreeBoostClassifier("frequency", n_rounds=20), C=0.05,
                                             l1_ratio=1.0).fit(f, y)
    a, b = make(), make()
    assert a.rules_.to_bytes() == b.rules_.to_bytes()
    assert len(a.rules_) < len(a.boosted_rules_) * 2


def test_clone_pickle_and_bad_settings():
    sklearn_base = pytest.importorskip("sklearn.base")
    clf = CorrectiveBoostClassifier(TreeBoostClassifier("bact", n_rounds=3), C=2.0)
    twin = sklearn_base.clone(clf)
    assert twin.C == 2.0 and twin.estimator.algorithm == "bact" and twin.estimator is not clf.estimator
    assert clf.get_params()["estimator__n_rounds"] == 3
    clf.set_params(estimator__n_rounds=4, l1_ratio=0.5)
    assert clf.estimator.n_rounds == 4 and clf.l1_ratio == 0.5
    f = Forest.from_trees(random_trees(2, min_docs=6, max_docs=6)[0])
    y = labels_for(f, 0)
    clf.fit(f, y)
    again = pickle.loads(pickle.dumps(clf))
    numpy.testing.assert_array_equal(again.decision_function(f), clf.decision_function(f))
    for name, bad in (("C=", dict(C=0.0)), ("l1_ratio=", dict(l1_ratio=-0.1)), ("cv=", dict(C=None, cv=1)),
                      ("Cs=", dict(C=None, Cs=[-1.0]))):
        with pytest.raises(ValueError, match=name):
            CorrectiveBoostClassifier(**bad).fit(f, y)
    with pytest.raises(ValueError, match="no parameter 'c'"):
        clf.set_params(c=1)


def test_refit_every_k_rounds_ends_with_the_refit_of_its_own_rules():
    f = Forest.from_trees(random_trees(13, min_docs=10, max_docs=10, max_nodes=10)[0])
    y = labels_for(f, 4)
    clf = CorrectiveBoostClassifier(TreeBoostClassifier("presence", n_rounds=9, max_pattern_size=2), C=2.0,
                                    refit_every=3).fit(f, y)
    assert clf.n_rounds_ <= 9
    again, _ = corrective_rules(clf.boosted_rules_, f, [clf.heads_[0].y], clf)
    numpy.testing.assert_array_equal(again.margins(f), clf.rules_.margins(f))
    once = CorrectiveBoostClassifier(TreeBoostClassifier("presence", n_rounds=9, max_pattern_size=2), C=2.0).fit(f, y)
    same = CorrectiveBoostClassifier(TreeBoostClassifier("presence", n_rounds=9, max_pattern_size=2), C=2.0,
                                     refit_every=9).fit(f, y)
    assert same.rules_.to_bytes() == once.rules_.to_bytes()
    with pytest.raises(ValueError, match="refit_every=-1 is invalid"):
        CorrectiveBoostClassifier(refit_every=-1).fit(f, y)
