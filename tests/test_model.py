"""RuleSet: margins against direct counting, serialization round trips, format errors."""
import io
import os
import tempfile

import numpy
import pytest
import srsly
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference import (
    all_subtrees,
    count_embeddings,
    forest_docs,
    forests,
    random_trees,
    random_weights_and_labels,
    reference_margins,
)
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.models.rules import ModelFormatError, RuleSet, pattern_to_sexpr
from spacy_treeboost.trees.forest import ROOT_LABEL, Forest
from spacy_treeboost.trees.bact import read_bact, write_bact

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

LEARNERS = [("bact", "iwakura", "adaboost"), ("bact", "iwakura", "arcgv"), ("frequency", "iwakura", "adaboost"),
            ("frequency", "z", "adaboost"), ("presence", "iwakura", "adaboost"), ("presence", "z", "adaboost")]


def fitted(trees, y, learner, n_rounds=5, k=3, include_root=False):
    algorithm, criterion, boosting = learner
    f = Forest.from_trees(trees)
    if not all_subtrees(forest_docs(f), k, include_root=include_root):
        return f, None
    clf = TreeBoostClassifier(algorithm, criterion=criterion, boosting=boosting, n_rounds=n_rounds,
                              max_pattern_size=k, include_root_patterns=include_root)
    return f, clf.fit(f, y)


def classes_for(seed, m):
    _, y = random_weights_and_labels(seed, m)
    return ["+1" if v > 0 else "-1" for v in y]


@SETTINGS
@given(st.one_of(forests(st, max_docs=6, max_nodes=8), st.integers(0, 2**32 - 1).map(random_trees)),
       st.sampled_from(LEARNERS), st.booleans(), st.integers(0, 2**32 - 1),
       st.integers(0, 2**32 - 1).map(lambda s: random_trees(s, max_docs=5)[0]))
def test_margins_equal_training_scores_reference_and_survive_round_trips(data, learner, include_root, seed, unseen):
    f, clf = fitted(data[0], classes_for(seed, len(data[0])), learner, include_root=include_root)
    assume(clf is not None)
    rules = clf.rules_
    # the compact model reproduces the boosting scores on the training documents
    F = rules.margins(f)
    assert F.shape == (len(f), 1)
    assert numpy.allclose(F[:, 0], clf.heads_[0].scores, atol=1e-9, rtol=0)
    assert numpy.array_equal(clf.decision_function(f), F[:, 0])
    # on unseen documents (own vocabulary, labels partly unknown to the model) margins equal direct counting
    g = Forest.from_trees(unseen)
    assert rules.include_root_patterns == include_root
    ref = reference_margins(rules.rules(0), forest_docs(g), g.vocab.to_list(), allow_root=include_root)
    assert numpy.allclose(rules.margins(g)[:, 0], ref, atol=1e-9, rtol=0)
    # round trips give identical margins
    again = RuleSet.from_bytes(rules.to_bytes())
    assert numpy.array_equal(again.margins(f), F) and numpy.array_equal(again.margins(g), rules.margins(g))
    assert again.rules(0) == rules.rules(0) and again.heads == rules.heads and again.algorithm == rules.algorithm
    assert again.include_root_patterns == rules.include_root_patterns
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "rules.msgpack")
        rules.to_disk(path)
        from_disk = RuleSet.from_disk(path)
    assert numpy.array_equal(from_disk.margins(f), F) and numpy.array_equal(from_disk.margins(g), rules.margins(g))


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1), st.booleans())
def test_match_counts_equal_brute_force(seed, seed2, include_root):
    trees, _ = random_trees(seed)
    f, clf = fitted(trees, classes_for(seed, len(trees)), LEARNERS[2], n_rounds=6, include_root=include_root)
    assume(clf is not None)
    g = Forest.from_trees(random_trees(seed2)[0])
    doc, pat, cnt = clf.rules_.match_counts(g)
    got = {(d, p): c for d, p, c in zip(doc.tolist(), pat.tolist(), cnt.tolist())}
    expected = {}
    for i, (labels, parents) in enumerate(forest_docs(g)):
        strings = [g.vocab[x] for x in labels]
        for p, code in enumerate(clf.rules_.patterns):
            c = count_embeddings(code, strings, parents, allow_root=clf.rules_.include_root_patterns)
            if c:
                expected[(i, p)] = c
    assert got == expected


@pytest.mark.parametrize("seed", range(3))
def test_truncate(seed):
    trees, _ = random_trees(seed + 40, min_docs=5)
    f, clf = fitted(trees, classes_for(seed, len(trees)), LEARNERS[2], n_rounds=6)
    rules = clf.rules_
    g = Forest.from_trees(random_trees(seed + 80)[0])
    for n in (0, 1, 3, 6, 10):
        cut = rules.truncate(n)
        assert cut.rules(0) == rules.rules(0)[:n]
        ref = reference_margins(rules.rules(0)[:n], forest_docs(g), g.vocab.to_list(), allow_root=False)
        assert numpy.allclose(cut.margins(g)[:, 0], ref, atol=1e-9, rtol=0)
    assert numpy.array_equal(rules.truncate(0).margins(g), numpy.zeros((len(g), 1)))


def test_hand_computed_margins():
    """F = B + sum over present t of ((c >= z ? a : -a) - b), B = sum of b (docs/algorithms.md §3.9)."""
    rs = RuleSet(["pos", "neg"])
    rs.add(0, ((0, "a"), (1, "b")), 2, 0.5, -0.25)
    rs.add(0, ((0, "c"),), 1, 1.0, 0.125)
    rs.add(0, ((0, "a"), (1, "b")), 3, -2.0, 0.0)
    rs.add(1, ((0, "b"),), 1, 0.75, -0.75)
    f = Forest.from_trees([("ROOT", (("a", (("b", ()), ("b", ()))),)),  # a(b) twice
                           ("ROOT", (("a", (("b", ()),)), ("c", ()))),  # a(b) once, c
                           ("ROOT", (("d", ()),))])
    B0 = -0.25 + 0.125 + 0.0
    expected0 = [B0 + (0.5 + 0.25) + (2.0 - 0.0),
                 B0 + (-0.5 + 0.25) + (1.0 - 0.125) + (2.0 - 0.0),
                 B0]
    expected1 = [-0.75 + 1.5, -0.75 + 1.5, -0.75]
    assert numpy.allclose(rs.margins(f), numpy.array([expected0, expected1]).T, rtol=0, atol=1e-15)
    assert len(rs) == 4 and rs.n_rules(0) == 3 and len(rs.patterns) == 3


def test_listing_and_describe():
    rs = RuleSet(["pos (x)"])
    rs.add(0, ((0, ROOT_LABEL), (1, "not good"), (2, "(x)")), 1, 0.5, -0.5)
    rs.add(0, ((0, "a"),), 3, 0.25, 0.125)
    assert pattern_to_sexpr(rs.patterns[0]) == "(ROOT(not%20good(%28x%29)))"
    text = rs.listing()
    assert text.splitlines()[0] == "# pos (x): 2 rules"
    assert "(ROOT(not%20good(%28x%29))) present → +0.5000 | absent → -0.5000" in text
    assert "(a) ≥ 3 → +0.2500 | < 3 → -0.2500 | absent → +0.1250" in text


def test_rules_with_brackets_and_spaces_round_trip():
    """Class and node labels with brackets and spaces, written as BACT, learned, saved and reloaded."""
    lines = ["good%20%28one%29 (ROOT(not%20%28so%29(bad)))", "bad%20one (ROOT(not%20%28so%29))",
             "good%20%28one%29 (ROOT(very(bad)))", "bad%20one (ROOT(very))"]
    f, y = read_bact(lines)
    assert y == ["good (one)", "bad one", "good (one)", "bad one"]
    assert f.vocab.to_list() == [ROOT_LABEL, "not (so)", "bad", "very"]
    clf = TreeBoostClassifier("frequency", n_rounds=3, max_pattern_size=2).fit(f, y)
    assert clf.heads_[0].name == "good (one)"
    again = RuleSet.from_bytes(clf.rules_.to_bytes())
    assert again.heads == clf.rules_.heads
    assert numpy.array_equal(again.margins(f), clf.rules_.margins(f))
    assert clf.predict(f) == y
    buf = io.StringIO()
    write_bact(buf, f, y)
    assert buf.getvalue().splitlines() == lines


def test_labeled_document_root_is_matched_as_in_training():
    """Without root patterns, training never matches a pattern at a document root, even a labeled
    one; the rule set must do the same (a regression test)."""
    f = Forest.from_trees([("c", ()), ("ROOT", (("c", ()),)), ("ROOT", (("d", ()),))])
    clf = TreeBoostClassifier("frequency", n_rounds=1, max_pattern_size=1).fit(f, ["-1", "+1", "-1"])
    assert numpy.allclose(clf.decision_function(f), clf.heads_[0].scores, atol=1e-12)


def test_unknown_labels_in_a_shared_vocabulary_do_not_match():
    """Unknown labels (-1, from read_bact with add_labels=False) must not be taken as the vocabulary's
    last label (a regression test)."""
    train = Forest.from_sentences([[["a", "b"]], [["c"]]])
    rs = RuleSet(["pos"])
    rs.add(0, ((0, "c"),), 1, 1.0, -1.0)
    test, _ = read_bact(["+1 (ROOT(zzz))"], train.vocab, add_labels=False)
    assert test.labels.tolist() == [0, -1]
    assert rs.margins(test).tolist() == [[-1.0]]
    assert len(rs.match_counts(test)[0]) == 0


# ---------------------------------------------------------------------------------------------
# Format errors


def model_bytes():
    rs = RuleSet(["pos", "neg"])
    rs.add(0, ((0, "a"), (1, "b")), 2, 0.5, -0.25)
    rs.add(1, ((0, "b"),), 1, 0.75, -0.75)
    return rs.to_bytes(), rs.to_dict()


def test_every_truncation_is_a_format_error():
    data, _ = model_bytes()
    for n in range(len(data)):
        with pytest.raises(ModelFormatError):
            RuleSet.from_bytes(data[:n])


@pytest.mark.parametrize("foreign", [
    b"", b"hello world", b"\x00\x01\x02\xff" * 8, srsly.msgpack_dumps([1, 2, 3]), srsly.msgpack_dumps("rules"),
    srsly.msgpack_dumps({"format": "something.else", "version": 1}),
    srsly.json_dumps({"format": "spacy-treeboost.rules"}).encode("utf8"),
])
def test_foreign_bytes(foreign):
    with pytest.raises(ModelFormatError):
        RuleSet.from_bytes(foreign)


def corrupt(change):
    """A sealed rule file (its checksum matches) whose content is changed by `change`."""
    from spacy_treeboost.files import seal
    from spacy_treeboost.models.rules import FORMAT_NAME, SEALED_VERSION

    _, d = model_bytes()
    change(d)
    return seal(d, FORMAT_NAME, SEALED_VERSION)


@pytest.mark.parametrize("change,match", [
    (lambda d: d.update(version=3), "version"),
    (lambda d: d.pop("heads"), "corrupt"),
    (lambda d: d.pop("patterns"), "corrupt"),
    (lambda d: d.update(rules=[[[5], [1], [0.5], [0.5]], [[], [], [], []]]), "pattern"),
    (lambda d: d.update(rules=[[[0], [1], [0.5], [0.5]], [[-1], [1], [0.5], [0.5]]]), "pattern"),
])
def test_corrupt_model_data(change, match):
    with pytest.raises(ModelFormatError, match=match):
        RuleSet.from_bytes(corrupt(change))


def test_more_rule_lists_than_heads():
    with pytest.raises(ModelFormatError, match="heads"):
        RuleSet.from_bytes(corrupt(lambda d: d["rules"].append([[0], [1], [0.5], [0.5]])))


@pytest.mark.parametrize("patterns", [
    [[[0, 2], ["a", "b"]], [[0], ["b"]]],          # depth jumps by two
    [[[1], ["a"]], [[0], ["b"]]],                  # does not start at depth 0
    [[[], []], [[0], ["b"]]],                      # empty
    [[[0, 1], ["a", "b"]], [[0, 1], ["a", "b"]]],  # the same pattern twice
])
def test_invalid_patterns_in_a_model_file(patterns):
    with pytest.raises(ModelFormatError, match="pattern"):
        RuleSet.from_bytes(corrupt(lambda d: d.update(patterns=patterns)))


def test_from_disk_names_the_path(tmp_path):
    path = tmp_path / "not_a_model.bin"
    path.write_bytes(b"\x93\x01\x02")
    with pytest.raises(ModelFormatError, match="not_a_model"):
        RuleSet.from_disk(path)
