"""Fits on document shards: their sums against dense references, and the same numbers, bit for bit, however the shards
are grouped on workers (the shards of shard files, cut here from a matrix's rows)."""
import pickle

import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy.sparse import csc_matrix

from one_shard import cut_shards, fit_on_row_shards
from reference import linear_objective, random_trees
from spacy_treeboost.learning import selection, sharded, solver
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.trees.forest import Forest

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def random_problem(seed: int, n: int, d: int, binary: bool):
    rng = numpy.random.default_rng(seed)
    X = (rng.random((n, d)) < 0.2) * (1 if binary else rng.integers(1, 4, (n, d)))
    y = numpy.where(rng.random(n) < 0.5, -1.0, 1.0)
    y[0], y[-1] = 1.0, -1.0
    return X.astype(numpy.float64), y


class GroupedShards(sharded.Shards):
    """The shards in runs of consecutive shards, each run's calls made on a pickled copy of the call's arguments and
    answered through pickle, as Ray actors holding the runs are."""

    def __init__(self, shards, n_groups):
        cuts = numpy.linspace(0, len(shards), min(n_groups, len(shards)) + 1).round().astype(int)
        self.groups = [pickle.loads(pickle.dumps(shards[a:b])) for a, b in zip(cuts[:-1], cuts[1:])]

    def runs(self, method, *args):
        for run in self.groups:
            sent = pickle.loads(pickle.dumps(args))
            yield pickle.loads(pickle.dumps([getattr(shard, method)(*sent) for shard in run]))


def dense_smooth(x, X, y, loss, l2):
    w, c = x[:-1], x[-1]
    m = y * (X @ w + c)
    if loss == "logistic":
        value, d = numpy.logaddexp(0, -m).sum(), -1 / (1 + numpy.exp(m))
    else:
        h = numpy.maximum(0, 1 - m)
        value, d = (h * h).sum(), -2 * h
    return value + 0.5 * l2 * (w @ w), numpy.append(X.T @ (y * d) + l2 * w, (y * d).sum())


@SETTINGS
@given(st.integers(0, 10**6), st.integers(2, 30), st.integers(1, 15), st.integers(1, 12),
       st.sampled_from(["logistic", "squared_hinge"]), st.booleans())
def test_shard_sums_are_the_dense_sums(seed, n, d, size, loss, keep_all):
    X, y = random_problem(seed, n, d, binary=False)
    shards = sharded.Shards.here(cut_shards({"F": csc_matrix(X)}, size))
    assert shards.map("select", "F", y, None, None)[0] == d
    shards.map("scale", None)
    layout = sharded._Layout(shards, d, keep_all=keep_all)
    problem = sharded.ShardedNewton(shards, loss, 0.7)
    rng = numpy.random.default_rng(seed + 1)
    z = layout.reduce(rng.normal(size=d + 1))
    x = layout.expand(z)
    numpy.testing.assert_allclose(layout.reduce(x), z, atol=1e-12)
    value, grad = problem.value_grad(z)
    want_value, want_grad = dense_smooth(x, X, y, loss, 0.7)
    numpy.testing.assert_allclose(value, want_value, rtol=1e-10)
    numpy.testing.assert_allclose(numpy.linalg.norm(grad), numpy.linalg.norm(want_grad), rtol=1e-8, atol=1e-10)
    if keep_all:
        numpy.testing.assert_allclose(grad, want_grad, atol=1e-10)
        M = problem.preconditioner(z)
        m = y * (X @ z[:-1] + z[-1])
        curvature = solver.curvature(m, loss)
        numpy.testing.assert_allclose(M, 0.7 + 0.01 * numpy.append((X * X).T @ curvature, curvature.sum()),
                                      atol=1e-12)
        v = rng.normal(size=d + 1)
        u = (X @ v[:-1] + v[-1]) * curvature
        numpy.testing.assert_allclose(problem.hessp(v), numpy.append(0.7 * v[:-1] + X.T @ u, u.sum()), atol=1e-10)


@pytest.mark.determinism
@SETTINGS
@given(st.integers(0, 10**6), st.integers(6, 40), st.integers(1, 20), st.integers(1, 15), st.integers(1, 5),
       st.sampled_from([0.0, 0.5]), st.booleans(), st.sampled_from(["logistic", "squared_hinge"]))
def test_any_grouping_of_the_shards_fits_the_same_bits_at_the_whole_matrix_optimum(seed, n, d, size, groups, l1_ratio,
                                                                                   nb, loss):
    X, y = random_problem(seed, n, d, binary=nb)
    F = csc_matrix(X)
    fit = dict(l1_ratio=l1_ratio, loss=loss, max_iter=5000, tol=1e-8)
    shards = cut_shards({"F": F}, size)
    one = sharded.final_fit(sharded.Shards.here(shards), "F", y, 1.0, nb=nb, **fit)
    grouped = sharded.final_fit(GroupedShards(shards, groups), "F", y, 1.0, nb=nb, **fit)
    numpy.testing.assert_array_equal(grouped.weights, one.weights)
    assert grouped.intercept == one.intercept
    whole = sharded.final_fit(sharded.Shards.here([sharded.whole_shard({"F": F})]), "F", y, 1.0, nb=nb, **fit)
    assert (one.scale is None) == (grouped.scale is None) == (whole.scale is None) == (not nb)
    if nb:
        numpy.testing.assert_array_equal(grouped.scale, one.scale)
        numpy.testing.assert_allclose(one.scale, whole.scale, rtol=1e-12)
    Xs = X * one.scale if nb else X
    ours = linear_objective(one.weights, one.intercept, Xs, y, C=1.0, l1_ratio=l1_ratio, loss=loss)
    theirs = linear_objective(whole.weights, whole.intercept, Xs, y, C=1.0, l1_ratio=l1_ratio, loss=loss)
    assert ours == pytest.approx(theirs, rel=1e-6, abs=1e-6)


@pytest.mark.determinism
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(8, 40), st.integers(1, 15), st.integers(1, 15), st.integers(2, 4))
def test_fold_margins_on_shards_are_the_whole_matrix_margins_and_the_same_for_any_grouping(seed, n, d, size, groups):
    X, y = random_problem(seed, n, d, binary=True)
    F = csc_matrix(X)
    folds = selection.cv_folds(y, 3)
    paths = [selection.make_path(True, [0.3, 3.0], None, (0.25, 1.0)), selection.make_path(False, [1.0], None, (1.0,))]
    fit = dict(l1_ratio=0.0, loss="logistic", max_iter=5000, tol=1e-10)
    shards = cut_shards({"F": F}, size)
    for fold in range(int(folds.max()) + 1):
        got = sharded.fold_margins(sharded.Shards.here(shards), "F", y, folds, fold, paths, **fit)
        grouped = sharded.fold_margins(GroupedShards(shards, groups), "F", y, folds, fold, paths, **fit)
        numpy.testing.assert_array_equal(grouped, got)
        want = sharded.fold_margins(sharded.Shards.here([sharded.whole_shard({"F": F})]), "F", y, folds, fold, paths,
                                    **fit)
        numpy.testing.assert_allclose(got, want, atol=1e-5 * max(1.0, numpy.abs(want).max()))


def labelled_forest(seed, n_docs=24, n_classes=2):
    trees, _ = random_trees(seed, min_docs=n_docs, max_docs=n_docs, max_labels=6)
    f = Forest.from_trees(trees)
    y = [str(v) for v in numpy.random.default_rng(seed).integers(0, n_classes, size=len(f))]
    return f, y


@pytest.mark.determinism
@pytest.mark.slow
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(1, 9), st.sampled_from([2, 3, 40]), st.sampled_from(["nb", "auto"]),
       st.booleans())
def test_any_number_of_workers_fits_the_same_sharded_model(seed, size, workers, features, multi):
    from spacy_treeboost.learning.classifier_files import classifier_to_bytes

    f, y = labelled_forest(seed, n_classes=3 if multi else 2)
    assume(len(set(y)) > 1)
    opts = dict(max_pattern_size=2, min_support=1, C=None, Cs=[0.3, 3.0], cv=2, features=features)
    with pytest.MonkeyPatch.context() as monkeypatch:
        fit_on_row_shards(monkeypatch, size)
        one = classifier_to_bytes(SubtreeLinearClassifier(**opts).fit(f, y))
        assert classifier_to_bytes(SubtreeLinearClassifier(**opts, n_workers=workers).fit(f, y)) == one


def test_the_whole_matrices_are_one_shard_not_copied():
    F = csc_matrix(numpy.eye(4))
    shard = sharded.whole_shard({"F": F, "T": None})
    assert list(shard.matrices) == ["F"] and numpy.shares_memory(shard.matrices["F"].data, F.data)


def test_a_shard_sent_elsewhere_holds_its_rows_alone():
    X, y = random_problem(4, 12, 6, binary=True)
    shard = sharded.whole_shard({"F": csc_matrix(X)})
    shards = sharded.Shards.here([shard])
    sharded.final_fit(shards, "F", y, 1.0, nb=True, l1_ratio=0.0, loss="logistic", max_iter=100, tol=1e-6)
    assert shard.train is not None
    copy = pickle.loads(pickle.dumps(shard))
    assert copy.train is None and copy.A is None and copy.index == 0 and copy.start == 0
    assert (copy.matrices["F"] != shard.matrices["F"]).nnz == 0


@pytest.mark.parametrize("max_rules", ["auto", 4])
def test_pruning_and_the_refits_of_max_rules_run_on_shards_and_fit_the_model_of_one_shard(monkeypatch, max_rules):
    """max_rules="auto" (its folds' refits and held-out margins) and a whole number of rules (its refit of the kept
    subtrees) on shards of the rows: the shards answer, and the model is that of one shard but for the last bits."""
    from spacy_treeboost.learning import pruning

    monkeypatch.setattr(pruning, "PRUNE_MIN_SCORED", 0)
    f, y = labelled_forest(3, n_docs=40)
    opts = dict(max_pattern_size=2, min_support=1, C=1.0, cv=2, features="nb", max_rules=max_rules)
    calls = []
    real = sharded.DocumentShard.select
    monkeypatch.setattr(sharded.DocumentShard, "select", lambda self, *a: calls.append(self.index) or real(self, *a))
    one = SubtreeLinearClassifier(**opts).fit(f, y)
    assert set(calls) == {0}
    calls.clear()
    fit_on_row_shards(monkeypatch, 7)
    many = SubtreeLinearClassifier(**opts).fit(f, y)
    assert set(calls) == set(range(6))
    if max_rules == "auto":
        assert many.fit_info_[0]["pruned"] == one.fit_info_[0]["pruned"]
    assert [r[0] for r in many.rules_.rule_arrays(0)[:2]] == [r[0] for r in one.rules_.rule_arrays(0)[:2]]
    numpy.testing.assert_allclose(many.rules_.rule_arrays(0)[2], one.rules_.rule_arrays(0)[2], rtol=1e-6)


def test_the_fits_run_on_shards(monkeypatch):
    calls = []
    for name in ("fold_margins", "final_fit"):
        real = getattr(sharded, name)
        monkeypatch.setattr(sharded, name, lambda *a, _real=real, _name=name, **k: calls.append(_name) or _real(*a, **k))
    f, y = labelled_forest(2)
    SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=None, Cs=[0.3, 3.0], cv=2).fit(f, y)
    assert calls.count("final_fit") == 1 and calls.count("fold_margins") == 2 * 3  # 2 folds, 3 paths of "auto"
