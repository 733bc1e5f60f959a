"""Forests index like arrays and the learners follow scikit-learn's classifier protocol, so that
cross-validation and grid search work on them unchanged."""
from pathlib import Path

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import random_trees
from spacy_treeboost import SubtreeLinearClassifier, TreeBoostClassifier, read_bact
from spacy_treeboost.trees.forest import Forest

DATA = Path(__file__).parent / "data" / "synthetic_small.tree"


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6))
def test_indexing_selects_the_same_documents_as_a_list_of_trees(seed):
    trees = random_trees(seed, min_docs=1, max_docs=8)[0]
    forest = Forest.from_trees(trees)
    trees = [forest.tree(i) for i in range(len(forest))]
    n = len(trees)
    rng = numpy.random.default_rng(seed)
    picks = rng.integers(-n, n, size=rng.integers(0, 2 * n + 1)).tolist()
    mask = rng.random(n) < 0.5
    cases = [(picks, [trees[i] for i in picks]), (numpy.array(picks, dtype=numpy.int64), [trees[i] for i in picks]),
             (mask, [t for t, m in zip(trees, mask) if m]), (slice(1, None, 2), trees[1::2]),
             ((picks, Ellipsis), [trees[i] for i in picks])]
    for key, expected in cases:
        got = forest[key]
        assert [got.tree(i) for i in range(len(got))] == expected
    assert forest[-1].tree(0) == trees[-1] and forest[0].tree(0) == trees[0]
    assert forest.shape == (n,)


def test_bad_indices_are_index_errors():
    forest = Forest.from_trees(random_trees(0, min_docs=3, max_docs=3)[0])
    for key in (3, -4, [0, 3], numpy.array([True, False]), numpy.array([0.5])):
        with pytest.raises(IndexError):
            forest[key]


def test_cross_validation_equals_fitting_the_folds_by_hand():
    from sklearn.model_selection import KFold, cross_val_score

    X, y = read_bact(DATA)
    y = numpy.array(y)
    folds = KFold(3, shuffle=True, random_state=0)
    scores = cross_val_score(TreeBoostClassifier(n_rounds=15), X, y, cv=folds)
    by_hand = []
    for train, test in folds.split(numpy.zeros(len(X))):
        clf = TreeBoostClassifier(n_rounds=15).fit(X.subset(train.tolist()), y[train])
        by_hand.append(numpy.mean(numpy.array(clf.predict(X.subset(test.tolist()))) == y[test]))
    numpy.testing.assert_allclose(scores, by_hand)


def test_grid_search_picks_the_setting_with_the_best_cross_validated_score_and_refits():
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    X, y = read_bact(DATA)
    y = numpy.array(y)
    sizes = [1, 2]
    folds = StratifiedKFold(3)
    search = GridSearchCV(SubtreeLinearClassifier(C=1.0), {"max_pattern_size": sizes}, cv=folds).fit(X, y)
    by_hand = []
    for size in sizes:
        accuracies = []
        for train, test in folds.split(numpy.zeros(len(X)), y):
            clf = SubtreeLinearClassifier(C=1.0, max_pattern_size=size).fit(X.subset(train.tolist()), y[train])
            accuracies.append(numpy.mean(numpy.array(clf.predict(X.subset(test.tolist()))) == y[test]))
        by_hand.append(numpy.mean(accuracies))
    numpy.testing.assert_allclose(search.cv_results_["mean_test_score"], by_hand)
    assert search.best_params_ == {"max_pattern_size": sizes[int(numpy.argmax(by_hand))]}
    refit = SubtreeLinearClassifier(C=1.0, max_pattern_size=search.best_params_["max_pattern_size"]).fit(X, y)
    numpy.testing.assert_array_equal(search.best_estimator_.decision_function(X), refit.decision_function(X))
    assert 0.5 < search.score(X, y) <= 1.0
