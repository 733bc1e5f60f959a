"""Rule sets stored as flat arrays: `RuleSet.from_arrays` against `add`, the flat file layout, and memory."""
import gc
import pickle
import tracemalloc

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from match_strategies import matcher_of
from reference import count_embeddings, forest_docs, random_tree_arrays, reference_margins
from spacy_treeboost.files import seal
from spacy_treeboost.models import rules as rules_module
from spacy_treeboost.models._match import PatternMatcher
from spacy_treeboost.models.rules import FORMAT_NAME, SEALED_VERSION, ModelFormatError, RuleSet
from spacy_treeboost.trees.forest import Forest

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                           HealthCheck.data_too_large])
LABELS = ["b", "a", "é", "ROOT", "a b", "(x)"]


@st.composite
def codes(draw, labels=LABELS, max_size=4):
    size = draw(st.integers(1, max_size))
    code = [(0, draw(st.sampled_from(labels)))]
    for _ in range(size - 1):
        code.append((draw(st.integers(1, code[-1][0] + 1)), draw(st.sampled_from(labels))))
    return tuple(code)


@st.composite
def rule_lists(draw):
    """(n_heads, value, rules as (head, code, z, a, b), intercepts)."""
    value = draw(st.sampled_from(["stump", "tfidf"]))
    n_heads = draw(st.integers(1, 3))
    pool = draw(st.lists(codes(), min_size=1, max_size=8, unique=True))
    weight = st.floats(-4, 4, allow_nan=False).filter(lambda x: x != 0)
    rules = []
    for _ in range(draw(st.integers(0, 14))):
        z = draw(st.integers(1, 3)) if value == "stump" else 1
        b = draw(st.floats(0.1, 3)) if value == "tfidf" else draw(weight)
        rules.append((draw(st.integers(0, n_heads - 1)), draw(st.sampled_from(pool)), z, draw(weight), b))
    intercepts = [draw(st.floats(-2, 2)) for _ in range(n_heads)]
    return n_heads, value, rules, pool, intercepts


@st.composite
def scoring_forests(draw):
    trees = []
    for _ in range(draw(st.integers(1, 5))):
        n = draw(st.integers(1, 9))
        parents = random_tree_arrays(draw, st, n, draw(st.sampled_from(["random", "chain", "flat"])))
        labels = ["ROOT"] + [draw(st.sampled_from(LABELS + ["zzz"])) for _ in range(n - 1)]
        trees.append(nested(labels, parents))
    return Forest.from_trees(trees)


def nested(labels, parents):
    children = [[] for _ in labels]
    for v in range(len(labels) - 1, 0, -1):
        children[parents[v]].insert(0, v)

    def build(v):
        return (labels[v], tuple(build(c) for c in children[v]))

    return build(0)


def built_by_add(n_heads, value, rules, intercepts):
    """The rules added head by head (the order in which `from_arrays` numbers the patterns)."""
    rs = RuleSet([f"h{h}" for h in range(n_heads)], algorithm="linear-nb", value=value)
    for h, code, z, a, b in sorted(rules, key=lambda r: r[0]):
        rs.add(h, code, z, a, b)
    rs.intercepts = list(intercepts)
    return rs


def built_from_arrays(n_heads, value, rules, pool, intercepts, order, threads=1):
    """The same rules through `from_arrays` (on `threads` threads), with the patterns (and unused ones) in the order
    `order` of the pool, and the label strings in reverse code-point order."""
    patterns = [pool[i] for i in order]
    strings = sorted({l for code in patterns for _, l in code}, reverse=True)
    depth = [d for code in patterns for d, _ in code]
    label = [strings.index(l) for code in patterns for _, l in code]
    code_start = numpy.cumsum([0] + [len(code) for code in patterns])
    ids = {code: i for i, code in enumerate(patterns)}
    columns = []
    for h in range(n_heads):
        mine = [(ids[code], z, a, b) for k, code, z, a, b in rules if k == h]
        columns.append(tuple(numpy.array(c, dtype=t) for c, t in
                             zip(zip(*mine) if mine else ([], [], [], []), (numpy.int64, numpy.int32, float, float))))
    return RuleSet.from_arrays([f"h{h}" for h in range(n_heads)], algorithm="linear-nb", value=value,
                               strings=strings, depth=numpy.array(depth, dtype=numpy.int32),
                               label=numpy.array(label, dtype=numpy.int32), code_start=code_start, rules=columns,
                               intercepts=intercepts, threads=threads)


def assert_same(x, y, forest):
    assert x.to_dict() == y.to_dict() and x.to_bytes() == y.to_bytes()
    assert x.patterns == y.patterns and x.n_patterns == y.n_patterns == len(x.patterns)
    assert all(x.pattern(i) == y.pattern(i) for i in range(x.n_patterns))
    assert x.label_strings == y.label_strings and len(x) == len(y)
    for h in range(len(x.heads)):
        assert x.rules(h) == y.rules(h) and x.n_rules(h) == y.n_rules(h)
        for i in range(len(forest)):
            assert x.contributions(forest, i, h) == y.contributions(forest, i, h)
    assert x.listing() == y.listing()
    assert numpy.array_equal(x.margins(forest), y.margins(forest))


@SETTINGS
@given(rule_lists(), scoring_forests(), st.randoms(use_true_random=False))
def test_from_arrays_equals_add(case, forest, rnd):
    n_heads, value, rules, pool, intercepts = case
    order = list(range(len(pool)))
    rnd.shuffle(order)
    by_add = built_by_add(n_heads, value, rules, intercepts)
    by_arrays = built_from_arrays(n_heads, value, rules, pool, intercepts, order)
    assert_same(by_add, by_arrays, forest)
    assert_same(by_add, built_from_arrays(n_heads, value, rules, pool, intercepts, order, threads=3), forest)
    assert_same(by_add, RuleSet.from_bytes(by_arrays.to_bytes()), forest)
    if value == "stump":
        ref = reference_margins(by_add.rules(0), forest_docs(forest), forest.vocab.to_list(), allow_root=False)
        assert numpy.allclose(by_arrays.margins(forest)[:, 0], ref + intercepts[0], atol=1e-9, rtol=0)
    assert_same(by_add.truncate(2), by_arrays.truncate(2), forest)


@SETTINGS
@given(rule_lists(), scoring_forests(), st.randoms(use_true_random=False))
def test_from_arrays_of_every_pattern_once_in_order_equals_add(case, forest, rnd):
    """A tf-idf model's table uses every mined pattern once, in mined order (the numbering is then kept as it is)."""
    n_heads, value, _, pool, intercepts = case
    cuts = sorted(rnd.randint(0, len(pool)) for _ in range(n_heads - 1))
    heads = [sum(i >= c for c in cuts) for i in range(len(pool))]
    rules = [(h, code, 1, rnd.uniform(0.1, 2.0), 0.5 if value == "tfidf" else 0.0) for h, code in zip(heads, pool)]
    by_add = built_by_add(n_heads, value, rules, intercepts)
    by_arrays = built_from_arrays(n_heads, value, rules, pool, intercepts, list(range(len(pool))))
    assert_same(by_add, by_arrays, forest)
    assert_same(by_add, RuleSet.from_bytes(by_arrays.to_bytes()), forest)


@SETTINGS
@given(rule_lists(), scoring_forests())
def test_flat_layout_round_trip(case, forest):
    n_heads, value, rules, pool, intercepts = case
    rs = built_by_add(n_heads, value, rules, intercepts)
    lists = RuleSet.from_bytes(rs.to_bytes())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rules_module, "FLAT_MIN_RULES", -1)
        data = rs.to_dict()
        assert data["version"] == 2 and isinstance(data["patterns"]["depth"], bytes)
        flat = RuleSet.from_bytes(rs.to_bytes())
        assert flat.to_bytes() == rs.to_bytes()
    assert_same(lists, flat, forest)
    assert flat.intercepts == rs.intercepts and flat.value == rs.value


def test_layout_is_chosen_by_the_number_of_rules():
    rs = random_rule_set(rules_module.FLAT_MIN_RULES, seed=1)
    assert rs.to_dict()["version"] == 1
    rs.add(0, ((0, "new"),), 1, 0.5, 0.0)
    data = rs.to_dict()
    assert data["version"] == 2 and len(data["rules"]) == 2
    again = RuleSet.from_bytes(rs.to_bytes())
    assert again.rules(0)[-1] == (((0, "new"),), 1, 0.5, 0.0) and again.to_bytes() == rs.to_bytes()
    forest = random_forest(numpy.random.default_rng(2), 40, 300)
    assert numpy.array_equal(again.margins(forest), rs.margins(forest))


def random_rule_set(n_rules, seed, n_heads=2, vocab=300, heads=None):
    """A rule set of `n_rules` rules over distinct random chain patterns of 1-3 labels, in random heads."""
    rng = numpy.random.default_rng(seed)
    lengths = rng.integers(1, 4, size=2 * n_rules + 64)
    ids = rng.integers(0, vocab, size=(len(lengths), 3))
    ids[numpy.arange(3) >= lengths[:, None]] = -1
    keys = ((ids + 1) * (vocab + 1) ** numpy.arange(3)).sum(axis=1)
    _, first = numpy.unique(keys, return_index=True)
    keep = numpy.sort(first)[:n_rules]
    assert len(keep) == n_rules
    ids, lengths = ids[keep], lengths[keep]
    label = ids[ids >= 0].astype(numpy.int32)
    depth = numpy.broadcast_to(numpy.arange(3, dtype=numpy.int32), ids.shape)[ids >= 0]
    code_start = numpy.concatenate([[0], numpy.cumsum(lengths)])
    head = rng.integers(0, n_heads, size=n_rules)
    rules = []
    for h in range(n_heads):
        pid = rng.permutation(numpy.flatnonzero(head == h))
        rules.append((pid, numpy.ones(len(pid), numpy.int32), rng.normal(size=len(pid)), numpy.zeros(len(pid))))
    return RuleSet.from_arrays(heads or [f"h{h}" for h in range(n_heads)], algorithm="linear-presence",
                               strings=[f"w{i}" for i in range(vocab)], depth=depth, label=label,
                               code_start=code_start, rules=rules, intercepts=[0.25] * n_heads)


def test_classifier_files_carry_flat_rule_sets():
    """A classifier whose rule set is written flat: saved and loaded with the same scores; damaged flat rules in
    classifier data, which has no checksum, are refused by the rule checks."""
    from spacy_treeboost.learning.classifier_files import (classifier_from_bytes, classifier_from_dict,
                                                           classifier_to_bytes, classifier_to_dict)
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier

    rng = numpy.random.default_rng(5)
    forest = random_forest(rng, 30, 300)
    y = ["pos" if i % 2 else "neg" for i in range(len(forest))]
    clf = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=1.0, calibrate=False).fit(forest, y)
    clf.rules_ = random_rule_set(rules_module.FLAT_MIN_RULES + 1, seed=6, n_heads=1, heads=clf.rules_.heads)
    data = classifier_to_dict(clf)
    assert data["rules"]["version"] == 2
    again = classifier_from_bytes(classifier_to_bytes(clf))
    assert numpy.array_equal(again.decision_function(forest), clf.decision_function(forest))
    assert again.rules_.to_bytes() == clf.rules_.to_bytes()
    data["rules"]["patterns"]["label"] = data["rules"]["patterns"]["label"][:-2]
    with pytest.raises(ModelFormatError, match="whole number of 4-byte items"):
        classifier_from_dict(data)
    data = classifier_to_dict(clf)
    data["rules"]["rules"][0]["pattern"] = i64(*([clf.rules_.n_patterns] * clf.rules_.n_rules(0)))
    with pytest.raises(ModelFormatError, match=f"refers to pattern {clf.rules_.n_patterns}, which does not exist"):
        classifier_from_dict(data)
    data = classifier_to_dict(clf)
    data["rules"]["patterns"]["code_start"] = i64(*range(len(data["rules"]["patterns"]["code_start"]) // 8))
    with pytest.raises(ModelFormatError, match="code_start must run from 0"):
        classifier_from_dict(data)


def random_forest(rng, n_docs, vocab):
    trees = []
    for _ in range(n_docs):
        words = [f"w{i}" for i in rng.integers(0, vocab, size=rng.integers(1, 30))]
        trees.append([words])
    return Forest.from_sentences(trees)


def test_a_large_rule_set_creates_no_python_object_per_rule():
    """from_arrays, margins, to_bytes and from_bytes of 300,000 rules: the garbage-collected objects grow by far fewer
    than one per rule, and no step allocates more than 350 bytes per rule at its peak (traced by tracemalloc, numpy's
    arrays included). The rule set's own arrays take about 52 bytes per rule here; a Python tuple per rule with its
    two float objects would take about 140 more, and a tuple per pattern node as many again."""
    n = 300_000
    rng = numpy.random.default_rng(7)
    forest = random_forest(rng, 200, 5_000)
    lengths = rng.integers(1, 4, size=2 * n)
    ids = rng.integers(0, 50_000, size=(len(lengths), 3))
    ids[numpy.arange(3) >= lengths[:, None]] = -1
    _, first = numpy.unique(((ids + 1) * 50_001 ** numpy.arange(3)).sum(axis=1), return_index=True)
    keep = numpy.sort(first)[:n]
    ids, lengths = ids[keep], lengths[keep]
    arrays = dict(strings=[f"w{i}" for i in range(50_000)], label=ids[ids >= 0].astype(numpy.int32),
                  depth=numpy.broadcast_to(numpy.arange(3, dtype=numpy.int32), ids.shape)[ids >= 0],
                  code_start=numpy.concatenate([[0], numpy.cumsum(lengths)]))
    half = rng.permutation(n)
    rules = [(numpy.sort(p), numpy.ones(len(p), numpy.int32), rng.normal(size=len(p)), numpy.zeros(len(p)))
             for p in (half[: n // 2], half[n // 2:])]
    del ids, lengths, keep, first, half
    small = RuleSet.from_arrays(["pos", "neg"], algorithm="linear-presence", strings=["a"], depth=[0], label=[0],
                                code_start=[0, 1], rules=[([0], [1], [1.0], [0.0]), ([], [], [], [])])
    RuleSet.from_bytes(small.to_bytes()).margins(forest)
    gc.collect()
    tracemalloc.start()
    try:
        before = len(gc.get_objects())
        steps = {"from_arrays": lambda: RuleSet.from_arrays(["pos", "neg"], algorithm="linear-presence",
                                                             rules=rules, **arrays),
                 "margins": lambda: done["from_arrays"].margins(forest),
                 "to_bytes": lambda: done["from_arrays"].to_bytes(),
                 "from_bytes": lambda: RuleSet.from_bytes(done["to_bytes"]),
                 "margins again": lambda: done["from_bytes"].margins(forest)}
        done, peaks = {}, {}
        for name, step in steps.items():
            start = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            done[name] = step()
            peaks[name] = (tracemalloc.get_traced_memory()[1] - start) / n
        objects = len(gc.get_objects()) - before
    finally:
        tracemalloc.stop()
    assert len(done["from_bytes"]) == n and done["from_bytes"].to_bytes() == done["to_bytes"]
    assert numpy.array_equal(done["margins again"], done["margins"])
    assert objects < 1_000, objects
    assert max(peaks.values()) < 350, peaks


def flat_payload():
    """A small rule set's flat payload: patterns (a(b)), (b), (c); head 0 rules on 0 and 2, head 1 on 1."""
    rs = RuleSet(["pos", "neg"], algorithm="linear-tfidf", value="tfidf")
    rs.add(0, ((0, "a"), (1, "b")), 1, 0.5, 0.25)
    rs.add(1, ((0, "b"),), 1, 0.75, 1.5)
    rs.add(0, ((0, "c"),), 1, -1.0, 2.0)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rules_module, "FLAT_MIN_RULES", -1)
        return rs.to_dict()


def i32(*v):
    return numpy.array(v, dtype="<i4").tobytes()


def i64(*v):
    return numpy.array(v, dtype="<i8").tobytes()


def f64(*v):
    return numpy.array(v, dtype="<f8").tobytes()


def test_flat_payload_is_what_the_layout_says():
    d = flat_payload()
    assert d["version"] == 2 and d["patterns"]["strings"] == ["a", "b", "c"]
    assert d["patterns"]["depth"] == i32(0, 1, 0, 0) and d["patterns"]["label"] == i32(0, 1, 1, 2)
    assert d["patterns"]["code_start"] == i64(0, 2, 3, 4)
    assert d["rules"][0] == {"pattern": i64(0, 2), "z": i32(1, 1), "a": f64(0.5, -1.0), "b": f64(0.25, 2.0)}
    assert d["rules"][1] == {"pattern": i64(1), "z": i32(1), "a": f64(0.75), "b": f64(1.5)}
    assert RuleSet.from_bytes(seal(d, FORMAT_NAME, SEALED_VERSION)).rules(0)[1] == (((0, "c"),), 1, -1.0, 2.0)


def set_in(path, value):
    def change(d):
        target = d
        for key in path[:-1]:
            target = target[key]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return change


@pytest.mark.parametrize("change,match", [
    (set_in(["patterns", "depth"], i32(0, 1, 0, 0)[:-1]), "whole number of 4-byte items"),
    (set_in(["patterns", "depth"], i32(0, 1, 0)), "depth has 3 nodes and label 4"),
    (set_in(["patterns", "depth"], [0, 1, 0, 0]), "not bytes"),
    (set_in(["patterns", "depth"], i32(0, 2, 0, 0)), "pattern 0 has an invalid code"),
    (set_in(["patterns", "depth"], i32(0, 1, 1, 0)), "pattern 1 has an invalid code"),
    (set_in(["patterns", "label"], i32(0, 1, 1, 3)), "label id 3, outside strings"),
    (set_in(["patterns", "label"], i32(0, 1, 1, -1)), "label id -1"),
    (set_in(["patterns", "label"], i32(0, 1, 2, 2)), "patterns 1 and 2 are the same tree"),
    (set_in(["patterns", "code_start"], i64(0, 2, 3)), "code_start must run from 0"),
    (set_in(["patterns", "code_start"], i64(0, 3, 3, 4)), "pattern 1 has an empty code"),
    (set_in(["patterns", "code_start"], i64(1, 2, 3, 4)), "code_start must run from 0"),
    (set_in(["patterns", "strings"], ["a", "a", "c"]), "label twice"),
    (set_in(["patterns", "strings"], "abc"), "strings entry is not a list"),
    (set_in(["patterns", "strings"], KeyError), "patterns entry must be a map"),
    (set_in(["rules", 0, "pattern"], i64(0, 3)), "refers to pattern 3, which does not exist"),
    (set_in(["rules", 0, "pattern"], i64(0)), "different lengths"),
    (set_in(["rules", 0, "z"], i32(1, 0)), "threshold z = 0"),
    (set_in(["rules", 0, "a"], f64(0.5, float("nan"))), "not a finite number"),
    (set_in(["rules", 1, "b"], f64(float("inf"))), "not a finite number"),
    (set_in(["rules", 1, "b"], f64(0.0)), "idf b = 0.0 that is not positive"),
    (set_in(["rules", 1, "b"], f64(1.0) + b"\x00"), "whole number of 8-byte items"),
    (set_in(["rules", 1, "extra"], b""), "list of maps"),
    (set_in(["rules"], "x"), "list of maps"),
    (lambda d: d["rules"].pop(), "1 rule lists for 2 heads"),
    (set_in(["intercepts"], [0.0, float("nan")]), "intercepts"),
    (set_in(["version"], 3), "version 3 is not supported"),
])
def test_corrupt_flat_files_are_refused(change, match):
    """A damaged flat payload (sealed again, so that the checksum matches) is refused, naming what is wrong."""
    d = flat_payload()
    change(d)
    with pytest.raises(ModelFormatError, match=match):
        RuleSet.from_bytes(seal(d, FORMAT_NAME, SEALED_VERSION))


def test_damaged_flat_files_are_refused():
    data = seal(flat_payload(), FORMAT_NAME, SEALED_VERSION)
    rng = numpy.random.default_rng(3)
    for bit in rng.choice(8 * len(data), size=300, replace=False).tolist():
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        with pytest.raises(ModelFormatError):
            RuleSet.from_bytes(bytes(flipped))
    for n in range(len(data)):
        with pytest.raises(ModelFormatError):
            RuleSet.from_bytes(data[:n])


def from_arrays_kwargs(**change):
    kwargs = dict(algorithm="linear-nb", strings=["a", "b"], depth=numpy.array([0, 1, 0]),
                  label=numpy.array([0, 1, 1]), code_start=numpy.array([0, 2, 3]),
                  rules=[(numpy.array([0, 1]), numpy.array([1, 1]), numpy.array([0.5, -0.5]), numpy.zeros(2))])
    kwargs.update(change)
    return kwargs


@pytest.mark.parametrize("change,match", [
    (dict(strings=["a", "a"]), "label twice"),
    (dict(strings="ab"), "sequence of label strings"),
    (dict(depth=numpy.array([0.0, 1.0, 0.0])), "depth must hold whole numbers"),
    (dict(depth=numpy.array([[0, 1, 0]])), "1-d array"),
    (dict(depth=numpy.array([0, 2, 0])), "pattern 0 has an invalid code"),
    (dict(depth=numpy.array([0, 1, 1])), "pattern 1 has an invalid code"),
    (dict(label=numpy.array([0, 1, 2])), "label id 2, outside strings"),
    (dict(label=numpy.array([1, 1, 1]), depth=numpy.array([0, 0, 0]), code_start=numpy.array([0, 1, 2, 3])),
     "patterns 0 and 1 are the same tree"),
    (dict(code_start=numpy.array([0, 2, 2, 3])), "pattern 1 has an empty code"),
    (dict(code_start=numpy.array([0, 2])), "code_start must run from 0"),
    (dict(rules=[]), "0 rule lists for 1 heads"),
    (dict(rules=[(numpy.array([0, 2]), numpy.array([1, 1]), numpy.zeros(2), numpy.zeros(2))]),
     "refers to pattern 2"),
    (dict(rules=[(numpy.array([0]), numpy.array([1, 1]), numpy.zeros(2), numpy.zeros(2))]), "different lengths"),
    (dict(rules=[(numpy.array([0]), numpy.array([0]), numpy.zeros(1), numpy.zeros(1))]), "threshold z = 0"),
    (dict(rules=[(numpy.array([0]), numpy.array([1]), numpy.array([numpy.inf]), numpy.zeros(1))]), "not a finite"),
    (dict(rules=[(numpy.array([0]), numpy.array([1]), numpy.zeros(1))]), "must be 4 columns"),
    (dict(value="tfidf"), "idf b = 0.0 that is not positive"),
    (dict(intercepts=[0.0, 1.0]), "intercepts must be 1 finite numbers"),
])
def test_from_arrays_names_what_is_wrong(change, match):
    with pytest.raises(ValueError, match=match):
        RuleSet.from_arrays(["pos"], **from_arrays_kwargs(**change))


def test_from_arrays_drops_unused_patterns_and_leaves_the_inputs_alone():
    kwargs = from_arrays_kwargs(rules=[(numpy.array([1]), numpy.array([2]), numpy.array([0.5]), numpy.zeros(1))])
    a = kwargs["rules"][0][2]
    rs = RuleSet.from_arrays(["pos"], **kwargs)
    assert rs.patterns == [((0, "b"),)] and rs.label_strings == ["b"] and rs.rules(0) == [(((0, "b"),), 2, 0.5, 0.0)]
    a[0] = 9.0
    assert rs.rules(0)[0][2] == 0.5 and a.flags.writeable
    with pytest.raises(ValueError):
        rs.rule_arrays(0)[2][0] = 1.0


def test_from_arrays_of_every_pattern_in_order_leaves_the_inputs_alone():
    kwargs = from_arrays_kwargs(depth=numpy.array([0, 1, 0], dtype=numpy.int32),
                                label=numpy.array([0, 1, 1], dtype=numpy.int32),
                                code_start=numpy.array([0, 2, 3], dtype=numpy.int64))
    rs = RuleSet.from_arrays(["pos"], **kwargs)
    assert rs.n_patterns == 2 and rs.rules(0)[1] == (((0, "b"),), 1, -0.5, 0.0)
    arrays = [kwargs[k] for k in ("depth", "label", "code_start")] + list(kwargs["rules"][0])
    assert all(a.flags.writeable for a in arrays)
    kwargs["depth"][1] = 0
    assert rs.pattern(0) == ((0, "a"), (1, "b"))


@settings(max_examples=100, deadline=None)
@given(st.lists(codes(labels=[0, 1, 2]), max_size=8, unique=True), st.booleans(), st.data())
def test_matcher_from_arrays_counts_as_the_brute_force(patterns, match_roots, data):
    depth = numpy.array([d for code in patterns for d, _ in code], dtype=numpy.int32)
    label = numpy.array([l for code in patterns for _, l in code], dtype=numpy.int32)
    code_start = numpy.cumsum([0] + [len(code) for code in patterns]).astype(numpy.int64)
    matcher = PatternMatcher(depth, label, code_start, 3, match_roots)
    docs = []
    for _ in range(data.draw(st.integers(1, 4))):
        n = data.draw(st.integers(1, 10))
        parents = random_tree_arrays(data.draw, st, n, data.draw(st.sampled_from(["random", "chain", "flat"])))
        docs.append(([data.draw(st.integers(-1, 2)) for _ in range(n)], parents))
    labels = numpy.array([x for lab, _ in docs for x in lab], dtype=numpy.int32)
    offsets = numpy.cumsum([0] + [len(lab) for lab, _ in docs]).astype(numpy.int64)
    parents = numpy.array([p + offsets[i] if p >= 0 else -1 for i, (_, par) in enumerate(docs) for p in par],
                          dtype=numpy.int32)
    expected = {}
    for i, (lab, par) in enumerate(docs):
        for p, code in enumerate(patterns):
            c = count_embeddings(code, lab, par, allow_root=match_roots)
            if c:
                expected[(i, p)] = c
    for m in (matcher, matcher_of(patterns, 3, match_roots), pickle.loads(pickle.dumps(matcher))):
        doc, pat, cnt = m.count(labels, parents, offsets)
        assert dict(zip(zip(doc.tolist(), pat.tolist()), cnt.tolist())) == expected


@pytest.mark.parametrize("depth,label,code_start,match", [
    ([0, 1], [0, 1], [0, 1], "disagree"),
    ([0, 1], [0, 1, 1], [0, 2], "disagree"),
    ([1], [0], [0, 1], "start at depth 0"),
    ([0, 2], [0, 1], [0, 2], "depths must satisfy"),
    ([0], [5], [0, 1], "outside the vocabulary"),
    ([0, 0], [1, 1], [0, 1, 2], "the same tree"),
    ([0, 0], [1, 1], [0, 1, 1, 2], "empty"),
])
def test_matcher_from_arrays_refuses_invalid_codes(depth, label, code_start, match):
    with pytest.raises(ValueError, match=match):
        PatternMatcher(numpy.array(depth), numpy.array(label), numpy.array(code_start), 2)


@pytest.mark.parametrize("same", [True, False])
def test_long_patterns_are_compared_node_by_node(same):
    """Patterns too long for one integer key per pattern (70 nodes) are still found equal or distinct."""
    depth = numpy.tile(numpy.arange(70, dtype=numpy.int32), 3)
    label = numpy.zeros(210, dtype=numpy.int32)
    label[69] = 1
    label[139 if same else 138] = 1
    kwargs = dict(algorithm="linear-nb", strings=["a", "b"], depth=depth, label=label,
                  code_start=numpy.array([0, 70, 140, 210]),
                  rules=[(numpy.array([0, 1, 2]), numpy.ones(3, numpy.int32), numpy.ones(3), numpy.zeros(3))])
    if same:
        with pytest.raises(ValueError, match="patterns 0 and 1 are the same tree"):
            RuleSet.from_arrays(["pos"], **kwargs)
    else:
        assert RuleSet.from_arrays(["pos"], **kwargs).n_patterns == 3


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 5), max_size=12), st.data())
def test_codes_in_order_gathers_the_codes_as_a_node_index_does(lengths, data):
    from spacy_treeboost.threads import ThreadTeam
    from spacy_treeboost.models._match import codes_in_order

    code_start = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(numpy.int64)
    depth = numpy.arange(code_start[-1], dtype=numpy.int32)
    label = (depth * 7 % 5).astype(numpy.int32)
    order = numpy.array(data.draw(st.lists(st.integers(0, len(lengths) - 1), max_size=15)) if lengths else [],
                        dtype=numpy.int64)
    n = numpy.diff(code_start)[order]
    start = numpy.concatenate([[0], numpy.cumsum(n)]).astype(numpy.int64)
    nodes = numpy.repeat(code_start[:-1][order] - start[:-1], n) + numpy.arange(start[-1])
    threads, pieces = data.draw(st.sampled_from([(1, 1), (1, 3), (2, 2), (3, 4)]))
    with ThreadTeam(threads) as team:
        for got_depth, got_label, got_start in (codes_in_order(depth, label, code_start, order),
                                                codes_in_order(depth, label, code_start, order, team.map, pieces)):
            numpy.testing.assert_array_equal(got_start, start)
            numpy.testing.assert_array_equal(got_depth, depth[nodes])
            numpy.testing.assert_array_equal(got_label, label[nodes])
    with pytest.raises(ValueError, match="outside the"):
        codes_in_order(depth, label, code_start, numpy.array([len(lengths)], dtype=numpy.int64))
    with pytest.raises(ValueError, match="must run from 0"):
        codes_in_order(depth[:-1] if len(depth) else numpy.zeros(1, numpy.int32), label[:len(depth) - 1]
                       if len(depth) else numpy.zeros(1, numpy.int32), code_start, order)
