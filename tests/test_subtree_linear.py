"""The subtree-linear learner: mined counts against the brute-force enumeration, rules against the linear model."""
import os
import pickle
from pathlib import Path

import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference import random_binary_classes, all_subtrees, forest_docs, forests, random_trees
from spacy_treeboost.learning.features import nb_ratio
from one_shard import fit_linear
from spacy_treeboost.models.rules import RuleSet
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier, mine_subtrees
from spacy_treeboost.trees.forest import Forest

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def labels_for(f: Forest, seed: int):
    return random_binary_classes(len(f), seed, ("pos", "neg"))


@SETTINGS
@given(forests(st), st.integers(1, 3), st.integers(1, 3), st.booleans())
def test_mined_counts_are_the_brute_force_counts(data, k, min_support, include_root):
    f = Forest.from_trees(data[0])
    counts, codes = mine_subtrees(f, max_pattern_size=k, min_support=min_support,
                                  include_root_patterns=include_root, max_cache_mb=64)
    vocab = f.vocab.to_list()
    ref = all_subtrees(forest_docs(f), k, include_root=include_root, min_support=min_support)
    got = {}
    dense = counts.toarray()
    for j, code in enumerate(codes):
        key = tuple((d, vocab.index(l)) for d, l in code)
        got[key] = {i: int(c) for i, c in enumerate(dense[:, j]) if c}
    assert got == ref
    by_frequency, same_codes, inverse = mine_subtrees(f, max_pattern_size=k, min_support=min_support,
                                                      include_root_patterns=include_root, max_cache_mb=64,
                                                      by_frequency=True)
    df = numpy.diff(counts.indptr)
    assert same_codes == codes and sorted(inverse.tolist()) == list(range(len(codes)))
    # columns by decreasing document frequency, ties in mined order; the mined column j is inverse[j]
    assert [(-df[j], j) for j in numpy.argsort(inverse)] == sorted((-df[j], j) for j in range(len(codes)))
    assert (by_frequency[:, inverse] != counts).nnz == 0
    reference = counts[:, numpy.argsort(inverse)]
    for a in ("indptr", "indices", "data"):
        numpy.testing.assert_array_equal(getattr(by_frequency, a), getattr(reference, a))


# the model as fitted: no interpolation of its weights, no calibration of its margin
RAW = {"nb_beta": 1.0, "calibrate": False, "max_rules": None}


def reference_features(f: Forest, codes, features: str, y):
    counts, mined = mine_subtrees(f, max_pattern_size=2, min_support=1, include_root_patterns=False, max_cache_mb=64)
    assert mined == codes
    C = counts.toarray()
    P = (C > 0).astype(float)
    if features == "presence":
        return P, numpy.ones(C.shape[1])
    p = P[y > 0].sum(axis=0) + 1.0
    q = P[y < 0].sum(axis=0) + 1.0
    r = numpy.log(p / p.sum()) - numpy.log(q / q.sum())
    return P * r, r


@SETTINGS
@given(forests(st, min_docs=4), st.integers(0, 10**6), st.sampled_from(["nb", "presence"]),
       st.sampled_from(["logistic", "squared_hinge"]))
def test_rules_score_exactly_the_linear_model(data, seed, features, loss):
    f = Forest.from_trees(data[0])
    assume(f.n_nodes > len(f))
    y = labels_for(f, seed)
    clf = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, features=features, loss=loss, C=1.0,
                                  **RAW).fit(f, y)
    t = numpy.array([1 if v == "pos" else -1 for v in y])
    _, codes = mine_subtrees(f, max_pattern_size=2, min_support=1, include_root_patterns=False, max_cache_mb=64)
    X, _ = reference_features(f, codes, features, t)
    w, c = fit_linear(X, t, C=1.0, loss=loss)
    numpy.testing.assert_allclose(clf.decision_function(f), (X @ w + c) / 2, atol=1e-9)
    again = RuleSet.from_bytes(clf.rules_.to_bytes())
    numpy.testing.assert_array_equal(again.margins(f)[:, 0], clf.rules_.margins(f)[:, 0])


@SETTINGS
@given(forests(st, min_docs=4), st.integers(0, 10**6), st.integers(1, 6), st.sampled_from(["nb", "presence"]))
def test_max_rules_keeps_the_largest_contributions_refitted(data, seed, k, features):
    f = Forest.from_trees(data[0])
    assume(f.n_nodes > len(f))
    y = labels_for(f, seed)
    t = numpy.array([1 if v == "pos" else -1 for v in y])
    counts, codes = mine_subtrees(f, max_pattern_size=2, min_support=1, include_root_patterns=False, max_cache_mb=64)
    X, scale = reference_features(f, codes, features, t)
    w, _ = fit_linear(X, t, C=1.0)
    contribution = numpy.abs(w * scale) * (counts.toarray() > 0).sum(axis=0)
    assume(numpy.count_nonzero(w) > k)
    ranked = sorted(range(len(codes)), key=lambda j: (-contribution[j], j))
    assume(k == len(ranked) or contribution[ranked[k - 1]] - contribution[ranked[k]] > 1e-6)
    keep = sorted(ranked[:k])
    Xk, _ = reference_features(f, codes, features, t)
    if features == "nb":
        P = (counts.toarray()[:, keep] > 0).astype(float)
        p, q = P[t > 0].sum(axis=0) + 1.0, P[t < 0].sum(axis=0) + 1.0
        Xk = P * (numpy.log(p / p.sum()) - numpy.log(q / q.sum()))
    else:
        Xk = Xk[:, keep]
    wk, ck = fit_linear(Xk, t, C=1.0)
    clf = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, features=features, C=1.0,
                                  **{**RAW, "max_rules": k}).fit(f, y)
    assert len(clf.rules_) <= k
    assert {code for code, *_ in clf.rules_.rules(0)} <= {codes[j] for j in keep}
    numpy.testing.assert_allclose(clf.decision_function(f), (Xk @ wk + ck) / 2, atol=1e-7)



@settings(SETTINGS, max_examples=25)
@given(forests(st, min_docs=6), st.integers(0, 10**6), st.sampled_from([None, 1, 3]), st.integers(0, 300))
def test_auto_on_the_miners_integer_counts_is_the_fit_on_float_counts(data, seed, max_rules, repeats):
    """"auto" takes its counts from the miners as bytes (int32 when a count passes 255): the rules are those of
    the same fit on float64 counts, bit for bit, with and without max_rules."""
    from spacy_treeboost.learning import mining

    # one more document: a root with `repeats` children labeled "a" (a count past 255 from 256 on)
    f = Forest.from_trees(list(data[0]) + [("ROOT", [("a", [])] * repeats)])
    assume(f.n_nodes > len(f))
    y = labels_for(f, seed)
    assume(len(set(y)) == 2)
    settings = dict(max_pattern_size=2, min_support=1, C=1.0, max_rules=max_rules, cv=2)
    got = SubtreeLinearClassifier(**settings).fit(f, y)
    real = mining.gather_columns
    try:
        mining.gather_columns = lambda shards, places, order, threads=1, dtype=None: real(
            shards, places, order, threads, numpy.float64)
        want = SubtreeLinearClassifier(**settings).fit(f, y)
    finally:
        mining.gather_columns = real
    assert got.rules_.to_bytes() == want.rules_.to_bytes()

def test_nb_ratio_matches_the_formula():
    P = numpy.array([[1, 0, 1], [1, 1, 0], [0, 1, 0]], dtype=float)
    y = numpy.array([1, 1, -1])
    from scipy.sparse import csr_matrix

    r = nb_ratio(csr_matrix(P), y)
    p, q = numpy.array([3, 2, 2]), numpy.array([1, 2, 1])
    numpy.testing.assert_allclose(r, numpy.log(p / 7) - numpy.log(q / 4))


def test_separable_task_is_learned_and_probabilities_are_not_saturated():
    trees = [("ROOT", [("good", [("film", [])])]) if i % 2 else ("ROOT", [("bad", [("film", [])])]) for i in range(20)]
    f = Forest.from_trees(trees)
    y = ["pos" if i % 2 else "neg" for i in range(20)]
    clf = SubtreeLinearClassifier(max_pattern_size=2, min_support=2, cv=2).fit(f, y)
    assert clf.predict(f) == y
    P = clf.predict_proba(f)
    assert P.min() > 1e-4
    assert "(good)" in clf.rules_.listing() or "(good(film))" in clf.rules_.listing()


@pytest.mark.determinism
def test_multiclass_multilabel_determinism_clone_and_pickle():
    f = Forest.from_trees(random_trees(21, min_docs=9, max_docs=9)[0])
    y = ["a", "b", "c"] * 3
    clf = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=None, cv=3).fit(f, y)
    assert clf.rules_.heads == ["a", "b", "c"]
    twin = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=None, cv=3).fit(f, y)
    assert clf.rules_.to_bytes() == twin.rules_.to_bytes()
    ym = [["a"], ["a", "b"], [], ["b"], ["a"], ["b"], ["a", "b"], [], ["b"]]
    m = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=1.0).fit(f, ym)
    assert m.multilabel_ and m.decision_function(f).shape == (9, 2)
    sklearn_base = pytest.importorskip("sklearn.base")
    assert sklearn_base.clone(clf).get_params() == clf.get_params()
    again = pickle.loads(pickle.dumps(clf))
    numpy.testing.assert_array_equal(again.decision_function(f), clf.decision_function(f))


@pytest.mark.parametrize("name,kwargs", [
    ("features=", dict(features="bm25")), ("nb_beta=", dict(nb_beta=1.5)), ("max_pattern_size=", dict(max_pattern_size=0)),
    ("min_support=", dict(min_support=0)), ("C=", dict(C=-2.0)), ("loss=", dict(loss="hinge")),
    ("l1_ratio=", dict(l1_ratio=3)), ("max_cache_mb=", dict(max_cache_mb=0)), ("max_rules=", dict(max_rules=0)),
])
def test_bad_settings_name_the_setting(name, kwargs):
    f = Forest.from_trees(random_trees(1, min_docs=4, max_docs=4)[0])
    with pytest.raises(ValueError, match=name):
        SubtreeLinearClassifier(**kwargs).fit(f, labels_for(f, 0))


def test_one_class_and_empty_input_are_clear_errors():
    f = Forest.from_trees(random_trees(1, min_docs=4, max_docs=4)[0])
    with pytest.raises(ValueError, match="only one class"):
        SubtreeLinearClassifier().fit(f, ["pos"] * 4)
    with pytest.raises(ValueError, match="labels for"):
        SubtreeLinearClassifier().fit(f, ["pos", "neg"])


@SETTINGS
@given(forests(st), st.integers(1, 4), st.integers(1, 3), st.integers(0, 4), st.booleans())
def test_rare_small_subtrees_are_kept_and_larger_ones_need_min_support(data, k, min_support, rare, include_root):
    f = Forest.from_trees(data[0])
    counts, codes = mine_subtrees(f, max_pattern_size=k, min_support=min_support,
                                  include_root_patterns=include_root, max_cache_mb=64, keep_rare_up_to=rare)
    vocab = f.vocab.to_list()
    ref = {code: docs for code, docs in all_subtrees(forest_docs(f), k, include_root=include_root).items()
           if len(docs) >= min_support or len(code) <= rare}
    dense = counts.toarray()
    got = {}
    for j, code in enumerate(codes):
        key = tuple((d, vocab.index(l)) for d, l in code)
        assert key not in got
        got[key] = {i: int(c) for i, c in enumerate(dense[:, j]) if c}
    assert got == ref


@pytest.mark.determinism
@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forests(st, min_docs=6), st.integers(0, 10**6), st.sampled_from([1.0, None]), st.booleans(),
       st.sampled_from([None, 0.5]), st.sampled_from(["nb", "presence", "auto"]), st.sampled_from([2, 3]),
       st.booleans())
def test_any_number_of_workers_gives_the_same_model(data, seed, C, calibrate, beta, features, workers, multi):
    f = Forest.from_trees(data[0])
    assume(f.n_nodes > len(f))
    rng = numpy.random.default_rng(seed)
    y = [str(v) for v in rng.integers(0, 3 if multi else 2, size=len(f))]
    assume(len(set(y)) > 1)
    opts = dict(max_pattern_size=2, min_support=1, C=C, Cs=[0.3, 3.0], cv=2, calibrate=calibrate, nb_beta=beta,
                features=features)
    one = SubtreeLinearClassifier(**opts).fit(f, y)
    many = SubtreeLinearClassifier(**opts, n_workers=workers).fit(f, y)
    assert many.rules_.to_bytes() == one.rules_.to_bytes()
    assert [i["C"] for i in many.fit_info_] == [i["C"] for i in one.fit_info_]


def test_execution_settings_are_checked():
    f = Forest.from_trees([("ROOT", (("a", ()),)), ("ROOT", (("b", ()),))])
    for kwargs, message in (({"n_workers": 0}, "n_workers=0 is invalid"), ({"backend": "threads"}, "backend='threads' is invalid"),
                            ({"ray_address": "auto"}, "ray_address='auto' is only used with backend='ray'"),
                            ({"backend": "local", "n_workers": 2}, "backend='local' runs one worker")):
        with pytest.raises(ValueError, match=message):
            SubtreeLinearClassifier(**kwargs).fit(f, ["x", "y"])


@pytest.mark.determinism
@pytest.mark.slow
def test_ray_actors_fit_the_same_model_file_as_one_worker(ray_session):
    """On Ray actors, as on processes: the scheduling itself is tested in this process (tests/test_tasks.py)."""
    seed = 0
    from spacy_treeboost.learning.classifier_files import classifier_to_bytes

    trees, _ = random_trees(seed, min_docs=30, max_docs=30, max_labels=6)
    f = Forest.from_trees(trees)
    rng = numpy.random.default_rng(seed)
    y = [str(v) for v in rng.integers(0, 3, size=len(f))]
    for opts in (dict(C=None, Cs=[0.3, 3.0]), dict(C=1.0, nb_beta=None)):
        opts.update(max_pattern_size=2, min_support=1, cv=2)
        one = classifier_to_bytes(SubtreeLinearClassifier(**opts).fit(f, y))
        for workers in (2, 3):
            many = SubtreeLinearClassifier(**opts, n_workers=workers, backend="ray").fit(f, y)
            assert classifier_to_bytes(many) == one


def test_the_ray_backend_without_ray_names_the_extra(monkeypatch):
    import sys

    trees, _ = random_trees(3, min_docs=12, max_docs=12)
    f = Forest.from_trees(trees)
    y = ["a", "b"] * 6
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(ImportError, match=r'from a clone of the repository: pip install "\.\[ray\]"'):
        SubtreeLinearClassifier(max_pattern_size=2, min_support=1, cv=2, n_workers=2, backend="ray").fit(f, y)


@pytest.mark.determinism
@SETTINGS
@given(forests(st), st.integers(1, 4), st.integers(1, 3), st.integers(0, 3), st.booleans(), st.integers(2, 5),
       st.integers(0, 10**6), st.integers(0, 4))
def test_mining_split_by_root_label_gives_the_one_miner_result(data, k, min_support, rare, include_root, n_shards,
                                                               seed, roots_at):
    from spacy_treeboost.learning.backends import assign_root_labels
    from spacy_treeboost.learning.classifier import _label_rank
    from scipy.sparse import csc_matrix

    from spacy_treeboost.learning.mining import _mine_shard, gather_columns, merged_columns

    def merge_shards(shards):
        places, table = merged_columns(shards)
        return gather_columns(shards, places, numpy.arange(len(table[0]))), table

    f = Forest.from_trees(data[0])
    vocab = f.vocab.to_list()
    mine = dict(max_pattern_size=k, min_support=min_support, rare_up_to=min(rare, k) if min_support > 1 else 0,
                include_root=include_root, max_cache_bytes=64 << 20)
    forest = (f.labels, f.parents, f.offsets, _label_rank(vocab))
    one = _mine_shard(forest, mine, None)
    whole = merge_shards([one])
    assert whole[0][2].dtype == numpy.float64
    numpy.testing.assert_array_equal(whole[0][2], one["matrix"][2])
    balanced = assign_root_labels(f.labels, f.parents, len(vocab), n_shards, include_root)
    scattered = numpy.random.default_rng(seed).integers(0, n_shards, len(vocab))
    for owners in (balanced, scattered):
        matrix, table = merge_shards([_mine_shard(forest, mine, owners == s, s == roots_at % n_shards)
                                      for s in range(n_shards)])
        for want, got in zip(whole[0] + whole[1], matrix + table):
            assert got.dtype == want.dtype
            numpy.testing.assert_array_equal(got, want)
    # any order of the merged columns, gathered from the shards, is that order of the one miner's columns
    shards = [_mine_shard(forest, mine, balanced == s, s == roots_at % n_shards) for s in range(n_shards)]
    places, _ = merged_columns(shards)
    indptr, docs, counts = whole[0]
    one_matrix = csc_matrix((counts, docs, indptr), shape=(len(f), len(indptr) - 1))
    order = numpy.random.default_rng(seed).permutation(len(indptr) - 1)
    got = csc_matrix(gather_columns(shards, places, order, threads=2)[::-1], shape=one_matrix.shape)
    want = one_matrix[:, order]
    for a in ("indptr", "indices", "data"):
        numpy.testing.assert_array_equal(getattr(got, a), getattr(want, a))


@pytest.mark.determinism
@pytest.mark.slow
def test_mining_on_worker_processes_gives_the_one_miner_result():
    from spacy_treeboost.trees.bact import read_bact

    with open(Path(__file__).resolve().parent / "data" / "synthetic_120.tree", encoding="utf-8") as f:
        X, _ = read_bact(f)
    settings = dict(max_pattern_size=3, min_support=2, include_root_patterns=False, max_cache_mb=64,
                    keep_rare_up_to=2)
    one, codes = mine_subtrees(X, **settings)
    for n_workers in (2, 3):
        many, many_codes = mine_subtrees(X, n_workers=n_workers, min_shard_documents=1, **settings)
        assert many_codes == codes
        for a in ("indptr", "indices", "data"):
            numpy.testing.assert_array_equal(getattr(many, a), getattr(one, a))
