"""features="auto": the cross-validation folds choose between the presence family (naive Bayes scaled or plain)
and sublinear tf-idf for all heads together; the choice against a brute force that refits every candidate. And
max_pattern_size=None: the subtree size chosen by the training documents' length."""
import numpy
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from reference import forests, reference_tfidf
from spacy_treeboost.learning import products
from spacy_treeboost.learning.classifier_files import classifier_from_bytes, classifier_to_bytes
from spacy_treeboost.learning.features import tfidf_matrix
from spacy_treeboost.learning.selection import platt
from one_shard import fit_linear
from spacy_treeboost.learning.mining import PATTERN_SIZE, SHORT_DOCUMENT_NODES, SHORT_PATTERN_SIZE
from spacy_treeboost.learning.subtree_linear import (PRESENCE_C_RATIO,
                                                     TFIDF_C_RATIOS, TFIDF_LOSS,
                                                     SubtreeLinearClassifier, mine_subtrees, pattern_size)
from spacy_treeboost.trees.forest import Forest

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
BETAS = (1.0, 0.5, 0.25)


def brute_folds(strata: numpy.ndarray, k: int) -> numpy.ndarray:
    folds = numpy.empty(len(strata), dtype=int)
    for value in sorted(set(strata.tolist())):
        idx = numpy.flatnonzero(strata == value)
        folds[idx] = numpy.arange(len(idx)) % k
    return folds


def brute_costs(X: numpy.ndarray, t: numpy.ndarray, C: float, folds: numpy.ndarray):
    """Every candidate's (family, (-correct, log-loss)) on the folds, refitted from scratch (X: the tf-idf rows),
    and its out-of-fold margins."""
    P = (X > 0).astype(float)
    candidates = ([("nb", C, b) for b in BETAS] + [("presence", PRESENCE_C_RATIO * C, 1.0)]
                  + [("tfidf", r * C, 1.0) for r in sorted(TFIDF_C_RATIOS)])
    margins = numpy.zeros((len(candidates), len(t)))
    for fold in range(folds.max() + 1):
        tr, te = folds != fold, folds == fold
        for k, (kind, c, beta) in enumerate(candidates):
            A = X if kind == "tfidf" else P
            scale = numpy.ones(A.shape[1])
            if kind == "nb":
                p = P[tr][t[tr] > 0].sum(axis=0) + 1.0
                q = P[tr][t[tr] < 0].sum(axis=0) + 1.0
                scale = numpy.log(p / p.sum()) - numpy.log(q / q.sum())
            loss = TFIDF_LOSS if kind == "tfidf" else "logistic"
            w, b = fit_linear(A[tr] * scale, t[tr], C=c, loss=loss, tol=1e-10, max_iter=5000)
            w = (1 - beta) * numpy.abs(w).mean() + beta * w
            margins[k, te] = (A[te] * scale) @ w + b
    correct = ((margins > 0) == (t > 0)).sum(axis=1)
    logloss = numpy.logaddexp(0.0, -t * margins).sum(axis=1)
    return [(kind == "tfidf", (-float(n), float(l))) for (kind, _, _), n, l in zip(candidates, correct, logloss)], margins


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(forests(st, min_docs=6), st.integers(0, 10**6), st.sampled_from(["binary", "exclusive", "multilabel"]),
       st.sampled_from([0.1, 1.0]), st.booleans())
def test_the_family_is_chosen_by_the_folds_as_a_brute_force_refit_chooses_it(data, seed, task, C, calibrate):
    """On the (Platt-scaled) out-of-fold margins of each head's best candidate in each family: two classes,
    the most documents right; exclusive classes, the most right by the largest margin (folds shared by the heads
    and stratified by class); several labels, the highest micro-F1; then the lower total of the heads' log-loss."""
    f = Forest.from_trees(data[0])
    assume(f.n_nodes > len(f))
    rng = numpy.random.default_rng(seed)
    if task == "multilabel":
        y = [frozenset(c for c in ("c0", "c1") if rng.random() < 0.5) for _ in range(len(f))]
    else:
        y = [f"c{v}" for v in rng.integers(0, 2 if task == "binary" else 3, size=len(f))]
        assume(len(set(y)) == (2 if task == "binary" else 3))
    codes, _, X, _ = reference_tfidf(f, f, 2, 1)
    assume(codes)
    clf = SubtreeLinearClassifier(max_rules=None, max_pattern_size=2, min_support=1, keep_rare_up_to=0, C=C, cv=2, tol=1e-10,
                                  max_iter=5000, cv_documents=None, calibrate=calibrate).fit(f, y)
    def has(v, name):
        return name in v if task == "multilabel" else v == name

    targets = [numpy.array([1 if has(v, head.name) else -1 for v in y]) for head in clf.heads_]
    assume(all(min((t > 0).sum(), (t < 0).sum()) >= 2 for t in targets))  # else a fold trains on one class
    exclusive = task == "exclusive"
    if exclusive:
        cls = numpy.array([sorted(set(y)).index(v) for v in y])
        shared = brute_folds(cls, max(2, min([2] + [min((t > 0).sum(), (t < 0).sum()) for t in targets])))
    totals = {False: [0.0, 0.0, 0.0], True: [0.0, 0.0, 0.0]}
    best_margins = {False: [], True: []}
    for t in targets:
        folds = shared if exclusive else brute_folds(t, max(2, min(2, (t > 0).sum(), (t < 0).sum())))
        costs, margins = brute_costs(X, t, C, folds)
        assume(numpy.abs(margins).min() > 1e-6)
        for family in totals:
            cost, k = min((cost, k) for k, (fam, cost) in enumerate(costs) if fam == family)
            totals[family][1] += cost[0]
            totals[family][2] += cost[1]
            a, b = platt(margins[k], t) if calibrate else (1.0, 0.0)
            best_margins[family].append(margins[k] * a + b if a > 0 else margins[k])
    truth = numpy.array(targets) > 0
    for family in totals:
        M = numpy.array(best_margins[family])
        if exclusive:
            top = numpy.sort(M, axis=0)
            assume((top[-1] - top[-2]).min() > 1e-6)
            totals[family][0] = -float(truth[M.argmax(axis=0), numpy.arange(M.shape[1])].sum())
        elif task == "multilabel":
            tp, fp, fn = ((M > 0) & truth).sum(), ((M > 0) & ~truth).sum(), ((M <= 0) & truth).sum()
            totals[family][0] = -2.0 * tp / max(2 * tp + fp + fn, 1)
    assume(totals[False][:2] != totals[True][:2] or abs(totals[False][2] - totals[True][2]) > 1e-6)
    expected = min((False, True), key=lambda family: tuple(totals[family]))
    event(f"{task}, tf-idf chosen: {expected}")
    chosen = {info["features"] for info in clf.fit_info_}
    assert chosen == {"tfidf"} if expected else chosen <= {"nb", "presence"}
    assert clf.rules_.value == ("tfidf" if expected else "stump")


def count_signal_forest(n: int, seed: int) -> tuple:
    """Documents of one-word sentences under the virtual root: the class is whether "a" occurs 3 times or once
    (every document holds it), so presence cannot see it and tf-idf can."""
    rng = numpy.random.default_rng(seed)
    trees, y = [], []
    for i in range(n):
        positive = i % 2 == 0
        words = ["a"] * (3 if positive else 1) + list(rng.choice(["b", "c", "d", "e"], size=int(rng.integers(1, 4))))
        trees.append(("ROOT", tuple((w, ()) for w in words)))
        y.append("pos" if positive else "neg")
    return Forest.from_trees(trees), y


def test_a_count_signal_is_learned_by_tfidf_and_matches_the_tfidf_model_at_the_chosen_C():
    f, y = count_signal_forest(40, 0)
    auto = SubtreeLinearClassifier(max_rules=None, max_pattern_size=1, min_support=1, tol=1e-10).fit(f, y)
    assert [i["features"] for i in auto.fit_info_] == ["tfidf"]
    assert auto.rules_.value == "tfidf"
    presence = SubtreeLinearClassifier(max_rules=None, max_pattern_size=1, min_support=1, features="presence").fit(f, y)
    assert (auto.predict(f) == numpy.array(y)).mean() > (presence.predict(f) == numpy.array(y)).mean() + 0.2
    fixed = SubtreeLinearClassifier(max_rules=None, max_pattern_size=1, min_support=1, features="tfidf", loss=TFIDF_LOSS, tol=1e-10,
                                    C=auto.fit_info_[0]["C"]).fit(f, y)
    numpy.testing.assert_allclose(auto.decision_function(f), fixed.decision_function(f), atol=1e-8)


@pytest.mark.slow
def test_the_tfidf_choice_is_the_same_on_worker_processes():
    f, y = count_signal_forest(40, 0)
    auto = SubtreeLinearClassifier(max_rules=None, max_pattern_size=1, min_support=1, tol=1e-10).fit(f, y)
    for workers in (2, 3):
        many = SubtreeLinearClassifier(max_rules=None, max_pattern_size=1, min_support=1, tol=1e-10, n_workers=workers).fit(f, y)
        assert classifier_to_bytes(many) == classifier_to_bytes(auto)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_noisy_presence_signal_among_many_words_keeps_the_presence_family(seed):
    """One word in 80 % of the documents gives the class; tf-idf dilutes it by the documents' lengths."""
    rng = numpy.random.default_rng(seed)
    trees, y = [], []
    for i in range(60):
        positive = i % 2 == 0
        signal = ("good" if positive else "bad") if rng.random() < 0.8 else ("bad" if positive else "good")
        noise = list(rng.choice(list("bcdefghijk"), size=int(rng.integers(1, 40))))
        trees.append(("ROOT", tuple((w, ()) for w in [signal] + noise)))
        y.append("pos" if positive else "neg")
    clf = SubtreeLinearClassifier(max_rules=None, max_pattern_size=1, min_support=1).fit(Forest.from_trees(trees), y)
    assert clf.fit_info_[0]["features"] in ("nb", "presence")
    assert clf.rules_.value == "stump"


@pytest.mark.parametrize("max_rules", [None, 2])
def test_tfidf_chosen_by_auto_round_trips_and_honours_max_rules(max_rules):
    f, y = count_signal_forest(30, 2)
    clf = SubtreeLinearClassifier(max_pattern_size=1, min_support=1, max_rules=max_rules).fit(f, y)
    assert clf.rules_.value == "tfidf"
    assert all(b > 0 for _, _, _, b in clf.rules_.rules(0))
    if max_rules is not None:
        assert len(clf.rules_.rules(0)) == max_rules
        # the refit on the kept subtrees uses the tf-idf family's loss, as the fit that chose them did
        fixed = SubtreeLinearClassifier(max_pattern_size=1, min_support=1, max_rules=max_rules, features="tfidf",
                                        loss=TFIDF_LOSS, C=clf.fit_info_[0]["C"]).fit(f, y)
        numpy.testing.assert_allclose(clf.decision_function(f), fixed.decision_function(f), atol=1e-8)


@SETTINGS
@given(forests(st), st.integers(1, 3))
def test_tfidf_matrix_is_the_dense_formula_in_one_piece_or_several_on_any_threads(data, k):
    f = Forest.from_trees(data[0])
    counts, codes = mine_subtrees(f, max_pattern_size=k, min_support=1, include_root_patterns=False, max_cache_mb=64)
    assume(codes)
    dense = counts.toarray()
    want_idf = numpy.log((1.0 + len(dense)) / (1.0 + (dense > 0).sum(axis=0))) + 1.0
    with numpy.errstate(divide="ignore"):
        want = numpy.where(dense > 0, (1.0 + numpy.log(dense)) * want_idf, 0.0)
    norms = numpy.linalg.norm(want, axis=1, keepdims=True)
    want = numpy.divide(want, norms, out=numpy.zeros_like(want), where=norms > 0)
    T, idf = tfidf_matrix(counts.tocsc())
    assert T.format == "csc"
    numpy.testing.assert_allclose(idf, want_idf, rtol=1e-15)
    numpy.testing.assert_allclose(T.toarray(), want, rtol=1e-12, atol=0)
    saved, products.BLOCK_NNZ = products.BLOCK_NNZ, 1  # every matrix in 8 pieces
    try:
        pieces = [tfidf_matrix(counts.tocsc(), threads) for threads in (1, 2, 3)]
    finally:
        products.BLOCK_NNZ = saved
    for T_k, idf_k in pieces:
        numpy.testing.assert_array_equal(T_k.data, pieces[0][0].data)
        numpy.testing.assert_array_equal(idf_k, idf)
    numpy.testing.assert_allclose(pieces[0][0].toarray(), want, rtol=1e-12, atol=0)


def _mean_nodes(trees) -> float:
    def size(tree):
        return 1 + sum(size(child) for child in tree[1])

    return sum(size(t) for t in trees) / len(trees)


@SETTINGS
@given(forests(st, max_nodes=70))
def test_the_pattern_size_follows_the_documents_mean_length(data):
    trees, _ = data
    f = Forest.from_trees(trees)
    expected = SHORT_PATTERN_SIZE if _mean_nodes(trees) <= SHORT_DOCUMENT_NODES else PATTERN_SIZE
    assert pattern_size(f.n_nodes, len(f)) == expected


@pytest.mark.parametrize("length,expected", [(SHORT_DOCUMENT_NODES - 1, SHORT_PATTERN_SIZE),
                                             (SHORT_DOCUMENT_NODES, SHORT_PATTERN_SIZE),
                                             (SHORT_DOCUMENT_NODES + 1, PATTERN_SIZE)])
def test_the_default_pattern_size_is_the_one_mined_and_saved(length, expected):
    """max_pattern_size=None fits the model of the size it chooses (mean length at, just below and just above the
    threshold, the virtual root included), and saves None, so that a refit chooses again."""
    rng = numpy.random.default_rng(int(length))
    trees, y = [], []
    for i in range(40):
        words = list(rng.choice(list("abcdefgh"), size=int(length) - 1))
        words[int(rng.integers(0, len(words)))] = "good" if i % 2 else "bad"
        node: tuple = ()
        for w in reversed(words):
            node = ((w, node),)
        trees.append(("ROOT", node))
        y.append("pos" if i % 2 else "neg")
    f = Forest.from_trees(trees)
    assert _mean_nodes(trees) == int(length)
    chosen = SubtreeLinearClassifier(max_rules=None).fit(f, y)
    assert chosen.max_pattern_size_ == expected
    assert max(len(p) for p in chosen.rules_.patterns) == expected
    fixed = SubtreeLinearClassifier(max_rules=None, max_pattern_size=expected).fit(f, y)
    assert fixed.max_pattern_size_ == expected
    assert chosen.rules_.to_dict() == fixed.rules_.to_dict()
    assert classifier_from_bytes(classifier_to_bytes(chosen)).get_params()["max_pattern_size"] is None
