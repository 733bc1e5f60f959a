"""TreeBoostClassifier: whole boosting runs against the reference loop, one-vs-rest, API and bad input."""
import math

import numpy
import pytest
import srsly
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference import (
    all_subtrees,
    forest_docs,
    forests,
    random_trees,
    random_weights_and_labels,
    reference_boost,
)
from spacy_treeboost.learning.learner import TreeBoostClassifier, boosting_weights
from spacy_treeboost.trees.forest import Forest
from spacy_treeboost.exceptions import NotFittedError

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

LEARNERS = [
    ("bact", "iwakura", "adaboost"),
    ("bact", "iwakura", "arcgv"),
    ("frequency", "iwakura", "adaboost"),
    ("frequency", "z", "adaboost"),
    ("presence", "iwakura", "adaboost"),
    ("presence", "z", "adaboost"),
]

NO_OP = 1e-9


def split_no_op_tail(rules):
    """(rules before the first no-op rule, the rest). A rule with |a|, |b| <= 1e-9 changes nothing; it
    arises when the best gain is 0 up to rounding: then alpha is a rounding residue of either sign, so
    whether Arc-GV stops at that round or one later is decided by rounding, not by the algorithm."""
    for r, rule in enumerate(rules):
        if abs(rule[2]) <= NO_OP and abs(rule[3]) <= NO_OP:
            return rules[:r], rules[r:]
    return rules, []


def compare_run(trees, y_pm, algorithm, criterion, boosting, n_rounds, k, minsup, include_root, smoothing=None):
    f = Forest.from_trees(trees)
    docs = forest_docs(f)
    if not all_subtrees(docs, k, include_root=include_root, min_support=minsup):
        return None
    vocab = f.vocab.to_list()
    clf = TreeBoostClassifier(algorithm, criterion=criterion, boosting=boosting, n_rounds=n_rounds,
                              max_pattern_size=k, min_support=minsup, include_root_patterns=include_root,
                              smoothing=smoothing)
    classes = ["+1" if v > 0 else "-1" for v in y_pm]
    clf.fit(f, classes)
    head = clf.heads_[0]
    assert head.name == "+1" and head.y.tolist() == list(y_pm)
    rules, tail = split_no_op_tail(clf.rules_.rules(0))
    trace = clf.trace_[: len(rules)]
    ref = reference_boost(docs, list(y_pm), vocab, algorithm=algorithm, criterion=criterion, n_rounds=n_rounds,
                          max_pattern_size=k, min_support=minsup, smoothing=smoothing, boosting=boosting,
                          include_root=include_root)
    ref_rules, ref_tail = split_no_op_tail(ref["rules"])
    assert len(rules) == len(ref_rules), (rules, ref_rules)
    assert all(abs(r[2]) <= NO_OP and abs(r[3]) <= NO_OP for r in tail + ref_tail)
    if not tail and not ref_tail:
        assert bool(head.stopped) == ref["stopped"]
        assert len(rules) == len(clf.trace_)
    for r, ((code, z, a, b), (rcode, rz, ra, rb), entry, rentry) in enumerate(zip(rules, ref_rules, trace, ref["rounds"])):
        assert (code, z) == (rcode, rz), f"round {r + 1}"
        assert a == pytest.approx(ra, abs=1e-9) and b == pytest.approx(rb, abs=1e-9), f"round {r + 1}"
        assert entry["Z"] == pytest.approx(rentry["Z"], abs=1e-9)
        assert entry["value"] == pytest.approx(rentry["value"], abs=1e-9)
        assert entry["z"] == rz and entry["round"] == r + 1 and entry["head"] == "+1"
    assert numpy.allclose(head.scores, ref["scores"], atol=1e-9, rtol=0)
    assert clf.n_rounds_ == len(clf.trace_)
    return clf, ref, tail


@SETTINGS
@given(st.one_of(forests(st, max_docs=6, max_nodes=8), st.integers(0, 2**32 - 1).map(lambda s: random_trees(s, max_docs=6))),
       st.sampled_from(LEARNERS), st.integers(3, 5), st.integers(1, 3), st.sampled_from([1, 1, 2]), st.booleans(),
       st.integers(0, 2**32 - 1))
def test_boosting_equals_the_reference_loop(data, learner, n_rounds, k, minsup, include_root, yseed):
    trees = data[0]
    _, y = random_weights_and_labels(yseed, len(trees))
    algorithm, criterion, boosting = learner
    compare_run(trees, y, algorithm, criterion, boosting, n_rounds, k, minsup, include_root)


@pytest.mark.parametrize("learner", LEARNERS)
@pytest.mark.parametrize("seed", range(4))
def test_boosting_equals_the_reference_loop_on_seeded_forests(learner, seed):
    trees, _ = random_trees(1000 + seed, min_docs=5, max_docs=8)
    _, y = random_weights_and_labels(seed, len(trees))
    algorithm, criterion, boosting = learner
    out = compare_run(trees, y, algorithm, criterion, boosting, 5, 3, 1, seed % 2 == 1, smoothing=0.05)
    assert out is not None


def test_resuming_equals_one_run():
    trees, _ = random_trees(5, min_docs=6)
    y = ["+1", "-1"] * 3 + ["+1"] * (len(trees) - 6)
    f = Forest.from_trees(trees)
    for algorithm in ("bact", "frequency"):
        one = TreeBoostClassifier(algorithm, n_rounds=5, max_pattern_size=2).fit(f, y)
        two = TreeBoostClassifier(algorithm, n_rounds=0, max_pattern_size=2).fit(f, y).boost(2).boost(3)
        assert one.rules_.rules(0) == two.rules_.rules(0)
        assert numpy.array_equal(one.heads_[0].scores, two.heads_[0].scores)


def test_classifier_dict_round_trip():
    from spacy_treeboost.learning.classifier_files import classifier_from_dict, classifier_to_dict

    trees, _ = random_trees(21, min_docs=6)
    f = Forest.from_trees(trees)
    y = ["b (x)", "a", "c"] * 2 + ["a"] * (len(f) - 6)
    for algorithm in ("bact", "frequency"):
        clf = TreeBoostClassifier(algorithm, n_rounds=3, max_pattern_size=2).fit(f, y)
        again = classifier_from_dict(srsly.msgpack_loads(srsly.msgpack_dumps(classifier_to_dict(clf))))
        g = Forest.from_trees(random_trees(22)[0])
        assert numpy.array_equal(again.decision_function(g), clf.decision_function(g))
        assert again.predict(g) == clf.predict(g) and again.classes_ == clf.classes_


def test_boosting_weights():
    """Hand-computed: exp(-y s) = (1, 2, 3, 2) gives weights (1, 2, 3, 2) / 8; margins of +-800
    give (0, 1, 0, 0) without overflow."""
    scores = numpy.array([0.0, -math.log(2), math.log(3), math.log(2)])
    y = numpy.array([1, 1, -1, -1])
    numpy.testing.assert_allclose(boosting_weights(scores, y), [1 / 8, 2 / 8, 3 / 8, 2 / 8], rtol=1e-14)
    w = boosting_weights(numpy.array([800.0, -800.0, 0.0, 3.0]), y)
    assert w.tolist() == [0.0, 1.0, 0.0, 0.0]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.floats(-3, 3), min_size=4, max_size=4), max_size=6), st.lists(st.sampled_from([-1, 1]), min_size=4, max_size=4))
def test_boosting_weights_equal_the_round_by_round_update(rounds, y):
    """w_{r+1} = w_r exp(-y h_r) / Z_r from w_1 = 1/m (docs/algorithms.md §3.3), against the closed form in the score."""
    y = numpy.array(y)
    w = numpy.full(4, 0.25)
    for h in rounds:
        w = w * numpy.exp(-y * numpy.array(h))
        w = w / w.sum()
    scores = numpy.sum(rounds, axis=0) if rounds else numpy.zeros(4)
    numpy.testing.assert_allclose(boosting_weights(scores, y), w, rtol=1e-9, atol=1e-300)


# ---------------------------------------------------------------------------------------------
# Several classes


def test_one_vs_rest_heads_equal_binary_reference_runs():
    trees, _ = random_trees(11, min_docs=7, max_docs=8)
    f = Forest.from_trees(trees)
    classes = ["pos", "neg", "mixed (x)"]
    y = [classes[i % 3] for i in range(len(f))]
    clf = TreeBoostClassifier("frequency", n_rounds=4, max_pattern_size=2).fit(f, y)
    assert clf.classes_ == sorted(classes) and [h.name for h in clf.heads_] == sorted(classes)
    docs, vocab = forest_docs(f), f.vocab.to_list()
    for k, c in enumerate(clf.classes_):
        y_pm = [1 if v == c else -1 for v in y]
        assert clf.heads_[k].y.tolist() == y_pm
        ref = reference_boost(docs, y_pm, vocab, algorithm="frequency", n_rounds=4, max_pattern_size=2)
        assert [(r[0], r[1]) for r in clf.rules_.rules(k)] == [(r[0], r[1]) for r in ref["rules"]]
        assert numpy.allclose([r[2:] for r in clf.rules_.rules(k)], [r[2:] for r in ref["rules"]], atol=1e-9, rtol=0)
        assert numpy.allclose(clf.heads_[k].scores, ref["scores"], atol=1e-9, rtol=0)
    F = clf.decision_function(f)
    assert F.shape == (len(f), 3)
    assert numpy.allclose(F, numpy.stack([h.scores for h in clf.heads_], axis=1), atol=1e-9, rtol=0)
    assert clf.predict(f) == [clf.classes_[j] for j in F.argmax(axis=1)]
    P = clf.predict_proba(f)
    assert numpy.allclose(P.sum(axis=1), 1) and (P.argmax(axis=1) == F.argmax(axis=1)).all()


def test_multilabel():
    f = Forest.from_sentences([[["a", "b"]], [["b"]], [["c"]], [["a"]]])
    y = [["x", "y"], ["y"], [], ["x"]]
    clf = TreeBoostClassifier("frequency", n_rounds=3, max_pattern_size=2).fit(f, y)
    assert clf.multilabel_ and clf.classes_ == ["x", "y"]
    docs, vocab = forest_docs(f), f.vocab.to_list()
    for k, c in enumerate(clf.classes_):
        y_pm = [1 if c in v else -1 for v in y]
        ref = reference_boost(docs, y_pm, vocab, algorithm="frequency", n_rounds=3, max_pattern_size=2)
        assert numpy.allclose(clf.heads_[k].scores, ref["scores"], atol=1e-9, rtol=0)
    F = clf.decision_function(f)
    assert clf.predict(f) == [[c for c, v in zip(clf.classes_, row) if v > 0] for row in F]
    assert numpy.allclose(clf.predict_proba(f), 1 / (1 + numpy.exp(-2 * F)))


# ---------------------------------------------------------------------------------------------
# Binary API


def test_predict_and_proba_follow_the_margin_and_sign_of_zero_is_negative():
    f = Forest.from_sentences([[["a"]], [["b"]], [["a", "b"]], [["c"]]])
    clf = TreeBoostClassifier("frequency", n_rounds=0).fit(f, ["-1", "+1", "+1", "-1"])
    assert numpy.array_equal(clf.decision_function(f), numpy.zeros(4))
    assert clf.predict(f) == ["-1"] * 4
    clf = TreeBoostClassifier("frequency", n_rounds=3).fit(f, ["-1", "+1", "+1", "-1"])
    F = clf.decision_function(f)
    assert clf.predict(f) == ["+1" if v > 0 else "-1" for v in F]
    P = clf.predict_proba(f)
    assert clf.classes_ == ["+1", "-1"]
    assert numpy.allclose(P[:, 0], 1 / (1 + numpy.exp(-2 * F))) and numpy.allclose(P.sum(axis=1), 1)


@pytest.mark.parametrize("classes,expected", [
    (["+1", "-1"], "+1"), ([1, -1], 1), (["1", "0"], "1"), (["neg", "pos"], "pos"), (["b (x)", "a b"], "b (x)"),
])
def test_positive_class_default(classes, expected):
    f = Forest.from_sentences([[["a"]], [["b"]]])
    clf = TreeBoostClassifier("bact", n_rounds=1, max_pattern_size=1).fit(f, classes)
    assert clf.heads_[0].name == str(expected)
    assert clf.heads_[0].y.tolist() == [1 if c == expected else -1 for c in classes]
    assert clf.predict(f) == classes  # one perfect stump separates the two documents


def test_positive_class_parameter_and_class_labels_with_brackets_and_spaces():
    f = Forest.from_sentences([[["a (1)"]], [["b c"]], [["a (1)", "b c"]]])
    y = ["not good (really)", "good one", "not good (really)"]
    clf = TreeBoostClassifier("frequency", n_rounds=2, positive_class="not good (really)").fit(f, y)
    assert clf.heads_[0].name == "not good (really)"
    assert clf.predict(f) == y
    assert "(a%20%281%29)" in clf.rules_.listing() or "(b%20c)" in clf.rules_.listing()
    with pytest.raises(ValueError, match="positive_class"):
        TreeBoostClassifier("frequency", positive_class="other").fit(f, y)


def test_arcgv_stop_appends_no_rule():
    """When Arc-GV stops (alpha <= 0) no rule is added (a regression test)."""
    f = Forest.from_sentences([[["a"]], [["a", "b"]], [["b"]], [["c"]]])
    clf = TreeBoostClassifier("bact", boosting="arcgv", n_rounds=4, max_pattern_size=1).fit(f, ["+1", "+1", "-1", "-1"])
    assert clf.heads_[0].stopped
    assert clf.rules_.n_rules(0) == 1 and len(clf.trace_) == 1


def test_arcgv_stops_after_a_perfect_stump():
    f = Forest.from_sentences([[["a"]], [["a", "b"]], [["b"]], [["c"]]])
    clf = TreeBoostClassifier("bact", boosting="arcgv", n_rounds=4, max_pattern_size=1).fit(f, ["+1", "+1", "-1", "-1"])
    assert clf.heads_[0].stopped
    first = clf.rules_.rules(0)[0]
    assert first[0] == ((0, "a"),)
    assert first[2] == pytest.approx(0.5 * math.log((2 - 1e-9) / 1e-9))
    assert clf.predict(f) == ["+1", "+1", "-1", "-1"]


# ---------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize("params,match", [
    (dict(algorithm="adaboost"), "algorithm"),
    (dict(criterion="gini"), "criterion"),
    (dict(boosting="logit"), "boosting"),
    (dict(max_pattern_size=0), "max_pattern_size"),
    (dict(max_pattern_size=1000), "max_pattern_size"),
    (dict(max_pattern_size=2.5), "max_pattern_size"),
    (dict(min_support=0), "min_support"),
    (dict(n_rounds=-1), "n_rounds"),
    (dict(smoothing=-0.1), "smoothing"),
    (dict(smoothing=float("nan")), "smoothing"),
    (dict(max_cache_mb=0), "max_cache_mb"),
])
def test_invalid_parameters(params, match):
    f = Forest.from_sentences([[["a"]], [["b"]]])
    with pytest.raises(ValueError, match=match):
        TreeBoostClassifier(**params).fit(f, ["+1", "-1"])


def test_single_class():
    f = Forest.from_sentences([[["a"]], [["b"]]])
    with pytest.raises(ValueError, match="only one class"):
        TreeBoostClassifier().fit(f, ["+1", "+1"])


def test_other_bad_input():
    f = Forest.from_sentences([[["a"]], [["b"]]])
    with pytest.raises(ValueError, match="labels"):
        TreeBoostClassifier().fit(f, ["+1"])
    with pytest.raises(TypeError, match="Forest"):
        TreeBoostClassifier().fit([["a"]], ["+1"])
    with pytest.raises(ValueError, match="no subtree"):
        TreeBoostClassifier().fit(Forest.from_sentences([[], []]), ["+1", "-1"])
    with pytest.raises(ValueError, match="no subtree"):
        TreeBoostClassifier(min_support=3).fit(f, ["+1", "-1"])
    with pytest.raises(NotFittedError, match="before boost"):
        TreeBoostClassifier().boost(1)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        TreeBoostClassifier().predict(f)


def test_ten_thousand_token_sentence():
    rng = numpy.random.default_rng(1)
    words = [f"w{int(i)}" for i in rng.integers(0, 20, 10_000)]
    f = Forest.from_sentences([[words], [words[:50]], [["w1", "w2"]]])
    clf = TreeBoostClassifier("frequency", n_rounds=2, max_pattern_size=3).fit(f, ["+1", "-1", "-1"])
    F = clf.decision_function(f)
    assert numpy.allclose(F, clf.heads_[0].scores, atol=1e-9)


@pytest.mark.determinism
def test_same_data_and_settings_give_the_same_rules_bit_for_bit():
    trees, _ = random_trees(7, max_docs=8, max_nodes=10)
    y = ["+1", "-1"] * 4
    models = []
    for _ in range(2):
        f = Forest.from_trees(trees[:8])
        clf = TreeBoostClassifier("frequency", n_rounds=6, max_pattern_size=3).fit(f, y[: len(f)])
        models.append(clf.rules_.to_bytes())
    assert models[0] == models[1]


def test_clone_pickle_and_deepcopy_fitted_and_unfitted():
    import copy
    import pickle

    sklearn_base = pytest.importorskip("sklearn.base")
    f = Forest.from_trees(random_trees(7, min_docs=6, max_docs=6)[0])
    y = ["+1", "-1", "+1", "-1", "+1", "-1"]
    clf = TreeBoostClassifier("frequency", n_rounds=4, max_pattern_size=2)
    for est in (clf, TreeBoostClassifier("bact", n_rounds=3).fit(f, y)):
        twin = sklearn_base.clone(est)
        assert twin.get_params() == est.get_params() and not hasattr(twin, "rules_")
        for copied in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
            assert copied.get_params() == est.get_params()
            if hasattr(est, "rules_"):
                numpy.testing.assert_array_equal(copied.decision_function(f), est.decision_function(f))
                with pytest.raises(RuntimeError, match="cannot resume boosting"):
                    copied.boost(1)
    clf.set_params(n_rounds=2, algorithm="presence")
    assert clf.get_params()["n_rounds"] == 2 and clf.algorithm == "presence"
    with pytest.raises(ValueError, match="no parameter 'rounds'"):
        clf.set_params(rounds=3)


def test_integer_and_boolean_classes_survive_save_and_load():
    from spacy_treeboost.learning.classifier_files import classifier_from_dict, classifier_to_dict

    f = Forest.from_trees(random_trees(8, min_docs=6, max_docs=6)[0])
    for y in ([0, 1, 0, 1, 0, 1], [True, False, True, False, True, False], [3, 1, 2, 3, 1, 2]):
        clf = TreeBoostClassifier("frequency", n_rounds=3).fit(f, y)
        again = classifier_from_dict(srsly.msgpack_loads(srsly.msgpack_dumps(classifier_to_dict(clf))))
        assert again.classes_ == clf.classes_ and type(again.classes_[0]) is type(y[0])
        assert again.predict(f) == clf.predict(f)
