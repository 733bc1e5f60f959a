"""max_rules="auto": the subtrees of a share of the total contribution, chosen on the folds, against brute force."""
from unittest import mock

import numpy
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from reference import forests, random_binary_classes
from spacy_treeboost.learning import pruning
from spacy_treeboost.learning.features import column_sums, level_margins
from spacy_treeboost.learning.pruning import PRUNE_SHARES, share_levels
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.trees.forest import Forest

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                            HealthCheck.data_too_large])
SHARES = st.lists(st.floats(0.05, 0.999), min_size=1, max_size=4).map(lambda s: sorted(set(s)) + [1.0])


def brute_kept(contribution, share):
    """The fewest columns of largest contribution (ties: the first column) whose sum reaches share of the total."""
    if share >= 1.0:
        return set(range(len(contribution)))
    ranked = sorted(range(len(contribution)), key=lambda j: (-contribution[j], j))
    total, running = float(numpy.sum(contribution[ranked])), 0.0
    for k, j in enumerate(ranked):
        running += contribution[j]
        if running >= share * total:
            return set(ranked[:k + 1])
    return set(ranked)


@pytest.mark.parametrize("block", [3, pruning.BLOCK])
@SETTINGS
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]) | st.floats(0, 10), min_size=1, max_size=30), SHARES)
def test_share_levels_are_the_fewest_largest_columns_of_each_share(block, values, shares):
    contribution = numpy.array(values)
    saved, pruning.BLOCK = pruning.BLOCK, block  # small blocks: running sums and ties that cross blocks
    try:
        level, kept = share_levels(contribution, shares)
    finally:
        pruning.BLOCK = saved
    for L, share in enumerate(shares):
        expected = brute_kept(contribution, share)
        assert set(numpy.flatnonzero(level <= L).tolist()) == expected
        assert kept[L] == len(expected)


def test_share_levels_refuse_a_negative_contribution():
    with pytest.raises(ValueError, match="cannot be negative"):
        share_levels(numpy.array([1.0, -0.5]), PRUNE_SHARES)


@st.composite
def matrices(draw):
    rows, cols = draw(st.integers(1, 8)), draw(st.integers(1, 10))
    entries = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, 0.5, 2.0]), min_size=rows * cols, max_size=rows * cols))
    X = numpy.array(entries).reshape(rows, cols)
    w = numpy.array(draw(st.lists(st.floats(-3, 3), min_size=cols, max_size=cols)))
    level = numpy.array(draw(st.lists(st.integers(0, 3), min_size=cols, max_size=cols)))
    return X, w, level, draw(st.floats(-1, 1))


@SETTINGS
@given(matrices(), st.booleans(), st.sampled_from(["csc", "csr"]))
def test_level_margins_are_the_restricted_rows_times_the_weights(data, tfidf, fmt):
    X, w, level, c = data
    margins = level_margins(sp.csc_matrix(X).asformat(fmt), w, c, level, 4, tfidf)
    for L in range(4):
        R = X * (level <= L)
        if tfidf:
            norm = numpy.sqrt((R ** 2).sum(axis=1))
            expected = numpy.where(norm > 0, (R @ w) / numpy.where(norm > 0, norm, 1.0), 0.0) + c
        else:
            expected = R @ w + c
        numpy.testing.assert_allclose(margins[L], expected, atol=1e-9)
    numpy.testing.assert_allclose(column_sums(sp.csc_matrix(X).asformat(fmt)), X.sum(axis=0), atol=1e-12)


def feature_values(rules, forest, value):
    """The (documents, patterns) features of a rule set's patterns in a forest, found by its matcher: presence,
    or (1 + log count) unnormalized for tf-idf (the idf is the rule's)."""
    doc, pat, count = rules.match_counts(forest)
    X = numpy.zeros((len(forest), rules.n_patterns))
    X[doc, pat] = {"stump": numpy.ones(len(count)),
                   "tfidf": 1.0 + numpy.log(numpy.maximum(count, 1))}[value]
    return X


def brute_margins(rules, forest, kept):
    """Head 0's margins of a rule set's rules on the patterns `kept` only, computed from the matches."""
    pid, _, a, b = (numpy.asarray(c) for c in rules.rule_arrays(0))
    X = feature_values(rules, forest, rules.value)[:, pid] * numpy.isin(pid, kept)
    if rules.value == "tfidf":
        X = X * b
        norm = numpy.sqrt((X ** 2).sum(axis=1))
        X = X / numpy.where(norm > 0, norm, 1.0)[:, None]
    return rules.intercepts[0] + X @ a


@SETTINGS
@given(forests(st, min_docs=6), st.integers(0, 10**6), st.sampled_from(["presence", "nb", "tfidf"]))
def test_pruned_model_is_the_whole_model_restricted_to_its_share(data, seed, features):
    """Without calibration, the pruned model's rules are the whole model's on the kept subtrees, unchanged, its
    decision function the whole model's restricted to them, and the kept subtrees the fewest of largest contribution
    (|w_t| times the sum of feature t over the training documents) that reach the share the folds chose."""
    f = Forest.from_trees(data[0])
    assume(f.n_nodes > len(f))
    y = random_binary_classes(len(f), seed)
    settings = dict(max_pattern_size=2, min_support=1, features=features, C=1.0, nb_beta=1.0, calibrate=False, cv=2)
    whole = SubtreeLinearClassifier(max_rules=None, **settings).fit(f, y)
    with mock.patch.object(pruning, "PRUNE_MIN_SCORED", 0):
        pruned = SubtreeLinearClassifier(max_rules="auto", **settings).fit(f, y)
    info = pruned.fit_info_[0]["pruned"]
    assert info["share"] in PRUNE_SHARES
    event("pruned" if info["share"] < 1.0 else "whole")
    full = {code: (a, b) for code, _, a, b in whole.rules_.rules(0)}
    kept = {code: (a, b) for code, _, a, b in pruned.rules_.rules(0)}
    assert kept.items() <= full.items()
    assert pruned.rules_.intercepts == whole.rules_.intercepts
    pid, _, a, b = (numpy.asarray(c) for c in whole.rules_.rule_arrays(0))
    inside = numpy.array([whole.rules_.pattern(p) in kept for p in pid], dtype=bool)
    assert info["rules"] == int(numpy.count_nonzero(a[inside]))
    numpy.testing.assert_allclose(pruned.decision_function(f), brute_margins(whole.rules_, f, pid[inside]), atol=1e-9)
    X = feature_values(whole.rules_, f, whole.rules_.value)[:, pid]
    if whole.rules_.value == "tfidf":
        X = X * b
        X = X / numpy.maximum(numpy.sqrt((X ** 2).sum(axis=1)), 1e-300)[:, None]
    contribution = numpy.abs(a) * X.sum(axis=0)
    if info["share"] < 1.0:
        total = contribution.sum()
        assert contribution[inside].sum() >= info["share"] * total * (1 - 1e-9)
        if (~inside).any():
            assert contribution[inside].min() >= contribution[~inside].max() - 1e-9
            assert contribution[inside].sum() - contribution[inside].min() < info["share"] * total * (1 + 1e-9)
    else:
        assert inside.all()


def test_folds_of_few_documents_keep_every_subtree():
    """Below `PRUNE_MIN_SCORED` scored documents the default keeps the whole model."""
    rng = numpy.random.default_rng(1)
    trees = [("ROOT", [(f"w{v}", []) for v in rng.integers(0, 12, 6)]) for _ in range(40)]
    y = random_binary_classes(len(trees), 1)
    f = Forest.from_trees(trees)
    settings = dict(max_pattern_size=1, min_support=1, cv=2)
    pruned = SubtreeLinearClassifier(**settings).fit(f, y)
    whole = SubtreeLinearClassifier(max_rules=None, **settings).fit(f, y)
    assert pruned.fit_info_[0]["pruned"]["share"] == 1.0
    assert pruned.rules_.to_dict() == whole.rules_.to_dict()
