"""The solver benchmark's matrix and its two solvers on a tiny corpus, in this process."""
import numpy
import pytest

from bench import bench_solver
from spacy_treeboost.learning import sharded, solver
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.trees.bact import read_bact

C, TOL = 0.1, 1e-3


def corpus(n: int = 240, seed: int = 3) -> list:
    """BACT lines of word chains; "+1" documents hold the chain w1 -> w2 more often."""
    rng = numpy.random.default_rng(seed)
    lines = []
    for i in range(n):
        label = "+1" if i % 2 else "-1"
        words = [f"w{k}" for k in rng.integers(0, 40, size=8)]
        if label == "+1" and rng.random() < 0.7:
            words[3:5] = ["w1", "w2"]
        lines.append(f"{label} (ROOT" + "".join(f"({w}" for w in words) + ")" * (len(words) + 1))
    return lines


@pytest.fixture(scope="module")
def learner_fit():
    """The matrix, labels and gradient tolerance of the default learner's final fit at C (presence), as the
    solver receives them."""
    seen = []
    tron = sharded.tron

    def spy(problem, x0, max_iter, gtol):
        X, y = problem.shards.map("reduced")[0]
        seen.append((X.copy(), y.copy(), problem.l2, gtol))
        return tron(problem, x0, max_iter, gtol)

    sharded.tron = spy
    try:
        forest, labels = read_bact(corpus())
        SubtreeLinearClassifier(C=C, features="presence", calibrate=False).fit(forest, labels)
    finally:
        sharded.tron = tron
    assert len(seen) == 1
    return seen[0]


def test_the_benchmark_matrix_is_the_learners(learner_fit):
    X, y = bench_solver.reduced_matrix(corpus())
    seen_X, seen_y, l2, gtol = learner_fit
    assert l2 == pytest.approx(1.0 / C)
    assert X.shape == seen_X.shape and (X != seen_X).nnz == 0
    numpy.testing.assert_array_equal(y, seen_y)
    # LIBLINEAR's -e stops it at the learner's gradient norm: eps min(pos, neg) / l |g(0)| = gtol
    eps = bench_solver.liblinear_eps(X, y, C, TOL)
    at_zero = numpy.linalg.norm(bench_solver.gradient(X, y, numpy.zeros(X.shape[1]), 0.0, C))
    fewer = min((y > 0).sum(), (y < 0).sum())
    assert eps * fewer / len(y) * at_zero == pytest.approx(gtol, rel=1e-9)


def test_objective_and_gradient_are_the_solvers():
    X, y = bench_solver.reduced_matrix(corpus(120, seed=5))
    rng = numpy.random.default_rng(0)
    x = rng.normal(size=X.shape[1] + 1)
    value, grad = bench_solver.one_shard_problem(X, y, C).value_grad(x)
    assert bench_solver.objective(X, y, x[:-1], x[-1], C) == pytest.approx(value, rel=1e-12)
    numpy.testing.assert_allclose(bench_solver.gradient(X, y, x[:-1], x[-1], C), grad, rtol=1e-10, atol=1e-12)


def test_both_solvers_reach_the_objective():
    pytest.importorskip("liblinear.liblinearutil")
    X, y = bench_solver.reduced_matrix(corpus())
    w_ref, c_ref, _ = bench_solver.solve_tron(X, y, C, 1e-10)
    best = bench_solver.objective(X, y, w_ref, c_ref, C)
    x0 = solver.start_point(y, X.shape[1], "logistic")
    gtol = TOL * numpy.linalg.norm(bench_solver.gradient(X, y, x0[:-1], x0[-1], C))
    solutions = {"tron": bench_solver.solve_tron(X, y, C, TOL, threads=2),
                 "liblinear": bench_solver.solve_liblinear(X, y, C, bench_solver.liblinear_eps(X, y, C, TOL))}
    for name, (w, c, info) in solutions.items():
        assert info["newton_steps"] >= 1 and info["hessian_products"] >= 1, name
        assert numpy.linalg.norm(bench_solver.gradient(X, y, w, c, C)) <= gtol * (1 + 1e-9), name
        assert -1e-12 <= (bench_solver.objective(X, y, w, c, C) - best) / best < TOL, name
