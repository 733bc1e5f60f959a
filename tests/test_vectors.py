"""The test vectors of docs/algorithms.md: T1-T7 and T9 (T8 belongs to the NMTF tests)."""
import math
import re

import numpy
import pytest

from match_strategies import matcher_of
from reference import (
    all_subtrees,
    count_embeddings,
    criterion_value,
    dense_counts,
    depths_of,
    exhaustive_best_rule,
    forest_docs,
    gain_iwakura,
    mu,
    nested_to_arrays,
    pruned_search,
    u_joint,
    u_paper,
    u_sep,
    weight_sums,
    z_low,
    z_star,
)
from spacy_treeboost.learning._mine import py_bound, py_value
from spacy_treeboost.learning._mine import SearchSpace
from spacy_treeboost.learning.classifier import _label_rank
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.trees.forest import ROOT_LABEL, Forest

PRINTED = 5e-7   # the spec prints 6 decimals
PRINTED4 = 5e-5  # ... or 4


def parse_pattern(text):
    """The spec's notation, e.g. 'R(a a(b))', as a code of (depth, label string); R is the root."""
    tokens = re.findall(r"[^\s()]+|[()]", text)
    pos = 0

    def node():
        nonlocal pos
        label = tokens[pos]
        pos += 1
        kids = []
        if pos < len(tokens) and tokens[pos] == "(":
            pos += 1
            while tokens[pos] != ")":
                kids.append(node())
            pos += 1
        return (ROOT_LABEL if label == "R" else label, tuple(kids))

    tree = node()
    assert pos == len(tokens), text
    labels, parents = nested_to_arrays(tree)
    return tuple(zip(depths_of(parents), labels))


def published_table(text):
    out = {}
    for item in text.split(", "):
        pattern, count = item.rsplit(":", 1)
        out[parse_pattern(pattern)] = int(count)
    return out


def space(forest, **kw):
    return SearchSpace(forest.labels, forest.parents, forest.offsets, _label_rank(forest.vocab.to_list()), **kw)


def engine_counts(sp, vocab):
    """code (with label strings) -> tuple of per-document counts, for every pattern in the space."""
    sp.expand_all()
    out = {}
    for i in range(sp.n_patterns):
        docs, counts = sp.pattern_docs(i)
        code = tuple((d, vocab[l]) for d, l in sp.pattern_code(i))
        out[code] = dict(zip(docs.tolist(), counts.tolist()))
    return out


def string_codes(table, vocab):
    return {tuple((d, vocab[l]) for d, l in code): c for code, c in table.items()}


def code_of(text, forest):
    return tuple((d, forest.vocab.get(lab)) for d, lab in parse_pattern(text))


# ---------------------------------------------------------------------------------------------
# T1, T2: embedding counts

T1 = [
    ("R(a(b c) a(b))", [[("a", (("b", ()), ("c", ()))), ("a", (("b", ()),))]],
     "R:1, a:2, b:2, c:1, R(a):2, a(b):2, a(c):1, R(a a):1, R(a(b)):2, R(a(c)):1, a(b c):1, "
     "R(a a(b)):1, R(a(b c)):1, R(a(b) a):1, R(a(c) a):1"),
    ("R(a(b(c)) a(b))", None,
     "R:1, a:2, b:2, c:1, R(a):2, a(b):2, b(c):1, R(a a):1, R(a(b)):2, a(b(c)):1, R(a a(b)):1, "
     "R(a(b(c))):1, R(a(b) a):1"),
]


@pytest.mark.parametrize("name,children,table", T1)
def test_t1_all_patterns_up_to_size_4_with_the_root(name, children, table):
    if children is None:
        f = Forest.from_sentences([[["a", "b", "c"], ["a", "b"]]])  # the chain encoding
    else:
        f = Forest.from_trees([("ROOT", tuple(children[0]))])
    assert f.tree(0) == (ROOT_LABEL, tuple(parse_tree_children(name)))
    expected = {code: {0: c} for code, c in published_table(table).items()}
    vocab = f.vocab.to_list()
    assert engine_counts(space(f, max_pattern_size=4, include_root=True), vocab) == expected
    assert string_codes(all_subtrees(forest_docs(f), 4, include_root=True), vocab) == expected
    labels, parents = forest_docs(f)[0]
    strings = [vocab[x] for x in labels]
    for code, per_doc in expected.items():
        assert count_embeddings(code, strings, parents) == per_doc[0]


def parse_tree_children(name):
    """The children of R in the spec's notation, as nested tuples."""
    code = parse_pattern(name)
    labels = [lab for _, lab in code]
    parents = []
    path = []
    for d, _ in code:
        del path[d:]
        parents.append(path[-1] if path else -1)
        path.append(len(parents) - 1)
    kids = [[] for _ in code]
    for v, p in enumerate(parents):
        if p >= 0:
            kids[p].append(v)

    def build(v):
        return (labels[v], tuple(build(c) for c in kids[v]))

    return build(0)[1]


def test_t1_without_the_root_drops_exactly_the_root_patterns():
    f = Forest.from_trees([("ROOT", (("a", (("b", ()), ("c", ()))), ("a", (("b", ()),))))])
    table = published_table(T1[0][2])
    expected = {code: {0: c} for code, c in table.items() if code[0][1] != ROOT_LABEL}
    assert engine_counts(space(f, max_pattern_size=4), f.vocab.to_list()) == expected


def test_t2_embeddings_not_rightmost_nodes_or_roots():
    f = Forest.from_trees([("ROOT", (("a", (("b", ()), ("b", ()), ("c", ()))),))])
    counts = engine_counts(space(f, max_pattern_size=3), f.vocab.to_list())
    for pattern, c in [("a(b)", 2), ("a(b c)", 2), ("a(b b)", 1)]:
        assert counts[parse_pattern(pattern)] == {0: c}
        labels, parents = forest_docs(f)[0]
        assert count_embeddings(parse_pattern(pattern), [f.vocab[x] for x in labels], parents) == c


# ---------------------------------------------------------------------------------------------
# T3: three documents, chain encoding, R excluded, uniform w = 1/3, eps = 1/3

T3_DOCS = [[["a", "b", "c"], ["a", "b"]], [["a", "c"], ["b"]], [["a", "b"]]]
T3_Y = [1, -1, -1]
W3 = [1 / 3] * 3

# t, counts, z, (G+, G-, L+, L-), P, N, W-not+, W-not-, printed gain, Z*, a, b
T3_TABLE = [
    ("a", (2, 1, 1), 1, (.3333, .6667, 0, 0), .3333, .6667, 0, 0, 0.239146, 0.942809, -0.2027, 0),
    ("a", (2, 1, 1), 2, (.3333, 0, 0, .6667), 1, 0, 0, 0, 1.000000, 0, 0.6931, 0),
    ("b", (2, 1, 1), 1, None, None, None, None, None, 0.239146, 0.9428, None, None),
    ("b", (2, 1, 1), 2, None, None, None, None, None, 1.0, 0, None, None),
    ("c", (1, 1, 0), 1, (.3333, .3333, 0, 0), .3333, .3333, 0, .3333, 0.577350, 0.666667, 0, -0.3466),
    ("a(b)", (2, 0, 1), 1, (.3333, .3333, 0, 0), .3333, .3333, 0, .3333, 0.577350, 0.666667, 0, -0.3466),
    ("a(b)", (2, 0, 1), 2, (.3333, 0, 0, .3333), .6667, 0, 0, .3333, 1.393847, 0, 0.5493, -0.3466),
    ("a(c)", (0, 1, 0), 1, (0, .3333, 0, 0), 0, .3333, .3333, .3333, 0.577350, 0.666667, -0.3466, 0),
    ("b(c)", (1, 0, 0), 1, (.3333, 0, 0, 0), .3333, 0, 0, .6667, 1.393847, 0, 0.3466, -0.5493),
    ("a(b(c))", (1, 0, 0), 1, None, None, None, None, None, 1.393847, 0, 0.3466, -0.5493),
]


@pytest.fixture(scope="module")
def t3():
    f = Forest.from_sentences(T3_DOCS)
    return f, engine_counts(space(f, max_pattern_size=3), f.vocab.to_list())


@pytest.mark.parametrize("row", T3_TABLE, ids=[f"{r[0]}-z{r[2]}" for r in T3_TABLE])
def test_t3_table(t3, row):
    f, counts = t3
    t, c, z, blocks, P, N, Wp, Wn, gain, zs, a, b = row
    code = parse_pattern(t)
    assert tuple(counts[code].get(i, 0) for i in range(3)) == c
    s = weight_sums(list(c), W3, T3_Y, z)
    if blocks is not None:
        assert (s["Gp"], s["Gn"], s["Lp"], s["Ln"]) == pytest.approx(blocks, abs=PRINTED4)
        assert (s["P"], s["N"], s["Wp"], s["Wn"]) == pytest.approx((P, N, Wp, Wn), abs=PRINTED4)
    assert py_value("iwakura", s["P"], s["N"], s["Wp"], s["Wn"]) == pytest.approx(gain, abs=PRINTED)
    assert gain_iwakura(s["P"], s["N"], s["Wp"], s["Wn"]) == pytest.approx(gain, abs=PRINTED)
    assert z_star(s["P"], s["N"], s["Wp"], s["Wn"]) == pytest.approx(zs, abs=PRINTED4 if zs == 0.9428 else PRINTED)
    assert py_value("z", s["P"], s["N"], s["Wp"], s["Wn"]) == pytest.approx(1 - zs, abs=PRINTED4)
    eps = 1 / 3
    if a is not None:
        assert 0.5 * math.log((s["P"] + eps) / (s["N"] + eps)) == pytest.approx(a, abs=PRINTED4)
        assert 0.5 * math.log((s["Wp"] + eps) / (s["Wn"] + eps)) == pytest.approx(b, abs=PRINTED4)


def test_t3_printed_gain_constant():
    assert math.sqrt(2 / 3) + math.sqrt(1 / 3) == pytest.approx(1.393847, abs=PRINTED)


@pytest.mark.parametrize("t,bounds", [
    ("a", (1.816497, 1.816497, 1.414214, 0)),
    ("c", (1.393847, 1.632993, 1.414214, 0)),
    ("a(c)", (0.816497, 0.816497, 0.577350, 0.666667)),
    ("b(c)", (1.393847, 1.393847, 1.393847, 0)),
])
def test_t3_bounds(t3, t, bounds):
    """u_paper / u_sep / u_joint / Z_low."""
    _, counts = t3
    c = dense_counts(counts[parse_pattern(t)], 3)
    s = weight_sums(c, W3, T3_Y, 1)
    args = (s["Ap"], s["An"], s["Tp"], s["Tn"])
    got = (u_paper(c, W3, T3_Y), u_sep(*args), u_joint(*args), z_low(*args))
    assert got == pytest.approx(bounds, abs=PRINTED)
    assert py_bound("iwakura", *args) == pytest.approx(bounds[2], abs=PRINTED)
    assert 1 - py_bound("z", *args) == pytest.approx(bounds[3], abs=PRINTED)


def test_t3_bact(t3):
    _, counts = t3
    assert sum(y * w for y, w in zip(T3_Y, W3)) == pytest.approx(-1 / 3)
    for t, gain, mu_pattern, mu_value in [("a(b)", 1 / 3, "a(b)", 1), ("b(c)", 1, "a(c)", 1 / 3)]:
        c = dense_counts(counts[parse_pattern(t)], 3)
        assert sum(y * w * (1 if n else -1) for n, w, y in zip(c, W3, T3_Y)) == pytest.approx(gain)
        s = weight_sums(dense_counts(counts[parse_pattern(mu_pattern)], 3), W3, T3_Y, 1)
        assert py_bound("bact", s["Ap"], s["An"], s["Tp"], s["Tn"]) == pytest.approx(mu_value)
        assert mu(s["Ap"], s["An"], s["Tp"], s["Tn"]) == pytest.approx(mu_value)


def fit_trace(docs, y, n_rounds, **kw):
    f = Forest.from_sentences(docs)
    clf = TreeBoostClassifier(n_rounds=n_rounds, **kw).fit(f, ["+1" if v > 0 else "-1" for v in y])
    return clf, [(r[0], r[1], r[2], r[3], t["Z"]) for r, t in zip(clf.rules_.rules(0), clf.trace_)]


def assert_trace(got, expected):
    assert len(got) == len(expected)
    for (code, z, a, b, Z), (pattern, ez, ea, eb, eZ) in zip(got, expected):
        assert code == parse_pattern(pattern) and z == ez
        if ea is not None:
            assert (a, b) == pytest.approx((ea, eb), abs=PRINTED4)
        if eZ is not None:
            assert Z == pytest.approx(eZ, abs=PRINTED4)


def test_t3_boosting_iwakura():
    _, got = fit_trace(T3_DOCS, T3_Y, 2, algorithm="frequency", criterion="iwakura", max_pattern_size=3)
    assert_trace(got, [("a(b)", 2, 0.5493, -0.3466, 0.6206), ("a(b)", 2, 0.5255, -0.3803, None)])


def test_t3_boosting_z_repeats_with_uniform_weights():
    clf, got = fit_trace(T3_DOCS, T3_Y, 3, algorithm="frequency", criterion="z", max_pattern_size=3)
    assert_trace(got, [("a", 2, 0.6931, 0, 0.5)] * 3)
    w = numpy.exp(-clf.heads_[0].y * clf.heads_[0].scores)
    assert numpy.allclose(w / w.sum(), 1 / 3)


# ---------------------------------------------------------------------------------------------
# T4: the paper's bound loses the optimum

T4_DOCS = [[["a", "b"], ["a", "b"]], [["a", "b"], ["a", "c"], ["b"], ["0"]], [["e"]], [["e"], ["0"]], [["e"]], [["e"]]]
T4_Y = [1, -1, 1, 1, -1, -1]
T4_W = [1 / 16, 1 / 16, 3 / 16, 3 / 16, 4 / 16, 4 / 16]


@pytest.fixture(scope="module")
def t4():
    f = Forest.from_sentences(T4_DOCS)
    return f, all_subtrees(forest_docs(f), 3)


def t4_sums(t4, pattern, z):
    f, patterns = t4
    c = dense_counts(patterns[code_of(pattern, f)], 6)
    return c, weight_sums(c, T4_W, T4_Y, z)


def test_t4_numbers(t4):
    c, s = t4_sums(t4, "0", 1)
    assert (s["Tp"], s["Tn"]) == pytest.approx((0.4375, 0.5625))
    assert c == [0, 1, 0, 1, 0, 0]
    assert (s["P"], s["N"], s["Wp"], s["Wn"]) == pytest.approx((0.1875, 0.0625, 0.25, 0.5))
    g0 = py_value("iwakura", s["P"], s["N"], s["Wp"], s["Wn"])
    assert g0 == pytest.approx(0.390119, abs=PRINTED)
    assert abs(math.sqrt(s["P"]) - math.sqrt(s["N"])) == pytest.approx(0.183013, abs=PRINTED)
    assert abs(math.sqrt(s["Wp"]) - math.sqrt(s["Wn"])) == pytest.approx(0.207107, abs=PRINTED)

    c, s = t4_sums(t4, "a", 1)
    assert c == [2, 2, 0, 0, 0, 0]
    up = u_paper(c, T4_W, T4_Y)
    assert up == pytest.approx(0.387628, abs=PRINTED)
    assert abs(math.sqrt(0.5625) - math.sqrt(0.375)) == pytest.approx(0.137628, abs=PRINTED)
    uj = py_bound("iwakura", s["Ap"], s["An"], s["Tp"], s["Tn"])
    assert uj == pytest.approx(0.448288, abs=PRINTED)
    assert u_joint(s["Ap"], s["An"], s["Tp"], s["Tn"]) == pytest.approx(uj, abs=1e-12)

    c, s = t4_sums(t4, "a(b)", 2)
    assert c == [2, 1, 0, 0, 0, 0]
    assert (s["P"], s["N"]) == pytest.approx((0.125, 0.0))
    gab = py_value("iwakura", s["P"], s["N"], s["Wp"], s["Wn"])
    assert gab == pytest.approx(0.448288, abs=PRINTED)
    assert up < g0 < gab
    assert gab == pytest.approx(uj, abs=1e-12)


def test_t4_searches(t4):
    f, patterns = t4
    vocab = f.vocab.to_list()
    ab = code_of("a(b)", f)
    # exhaustive search and the engine's pruned search find (a(b), 2)
    ref = exhaustive_best_rule(patterns, T4_W, T4_Y, "iwakura", vocab=vocab)
    assert (ref["code"], ref["z"]) == (ab, 2) and ref["value"] == pytest.approx(0.448288, abs=PRINTED)
    sp = space(f, max_pattern_size=3)
    got = sp.best_rule(numpy.array(T4_W), numpy.array(T4_Y, dtype=numpy.int8), "iwakura")
    assert (sp.pattern_code(got["node"]), got["z"]) == (ab, 2)
    assert got["value"] == pytest.approx(0.448288, abs=PRINTED)
    # the Z criterion's optimum too
    got = sp.best_rule(numpy.array(T4_W), numpy.array(T4_Y, dtype=numpy.int8), "z")
    assert (sp.pattern_code(got["node"]), got["z"]) == (ab, 2)
    # a search pruned with u_paper returns ("0", 1); pruned with u_joint it returns (a(b), 2)
    m = len(T4_W)

    def bound_with(fn):
        def bound(code):
            c = dense_counts(patterns[code], m)
            s = weight_sums(c, T4_W, T4_Y, 1)
            return fn(c, s)
        return bound

    paper = pruned_search(patterns, T4_W, T4_Y, "iwakura", bound_with(lambda c, s: u_paper(c, T4_W, T4_Y)), vocab=vocab)
    assert (paper["code"], paper["z"]) == (code_of("0", f), 1)
    assert paper["value"] == pytest.approx(0.3901, abs=PRINTED4)
    safe = pruned_search(patterns, T4_W, T4_Y, "iwakura",
                         bound_with(lambda c, s: u_joint(s["Ap"], s["An"], s["Tp"], s["Tn"])), vocab=vocab)
    assert (safe["code"], safe["z"]) == (ab, 2)


# ---------------------------------------------------------------------------------------------
# T5: the printed gain and Z disagree

T5_DOCS = [[["x", "y"]], [["y"]], [["v"]], [["v"]], [["v"]], [["x"]], [["x"]], [["x"]], [["x"]], [["v"]]]
T5_Y = [1] * 5 + [-1] * 5
W5 = [0.1] * 10


@pytest.mark.parametrize("t,blocks,gain,zs,a,b", [
    ("x", (0.1, 0.4, 0.4, 0.1), 0.632456, 0.8000, -0.4581, 0.4581),
    ("y", (0.2, 0.0, 0.3, 0.5), 0.606598, 0.774597, 0.5493, -0.2027),
    ("v", (0.3, 0.1, 0.2, 0.4), 0.416737, 0.912096, 0.3466, -0.2554),
    ("R", (0.5, 0.5, 0, 0), 0, 1, 0, 0),
])
def test_t5_table(t, blocks, gain, zs, a, b):
    f = Forest.from_sentences(T5_DOCS)
    counts = engine_counts(space(f, max_pattern_size=1, include_root=True), f.vocab.to_list())
    c = dense_counts(counts[parse_pattern(t)], 10)
    s = weight_sums(c, W5, T5_Y, 1)
    assert (s["P"], s["N"], s["Wp"], s["Wn"]) == pytest.approx(blocks, abs=1e-12)
    assert py_value("iwakura", *blocks) == pytest.approx(gain, abs=PRINTED)
    assert z_star(*blocks) == pytest.approx(zs, abs=PRINTED4 if zs == 0.8 else PRINTED)
    assert 1 - py_value("z", *blocks) == pytest.approx(zs, abs=PRINTED4 if zs == 0.8 else PRINTED)
    eps = 0.1
    assert 0.5 * math.log((s["P"] + eps) / (s["N"] + eps)) == pytest.approx(a, abs=PRINTED4)
    assert 0.5 * math.log((s["Wp"] + eps) / (s["Wn"] + eps)) == pytest.approx(b, abs=PRINTED4)


def test_t5_printed_gain_picks_x_and_z_picks_y():
    f = Forest.from_sentences(T5_DOCS)
    sp = space(f, max_pattern_size=1)
    w, y = numpy.array(W5), numpy.array(T5_Y, dtype=numpy.int8)
    assert sp.pattern_code(sp.best_rule(w, y, "iwakura")["node"]) == code_of("x", f)
    assert sp.pattern_code(sp.best_rule(w, y, "z")["node"]) == code_of("y", f)


def test_t5_one_minus_z_is_a_sum_of_squares():
    for blocks in [(0.1, 0.4, 0.4, 0.1), (0.2, 0.0, 0.3, 0.5), (0.3, 0.1, 0.2, 0.4)]:
        P, N, Wp, Wn = blocks
        assert 1 - z_star(*blocks) == pytest.approx((math.sqrt(P) - math.sqrt(N)) ** 2 + (math.sqrt(Wp) - math.sqrt(Wn)) ** 2)


@pytest.mark.parametrize("criterion,expected", [
    ("iwakura", [("x", 0.8222), ("y", 0.8222), ("y", 0.9301)]),
    ("z", [("y", 0.8911), ("x", 0.7608), ("y", 0.9000)]),
])
def test_t5_three_round_traces(criterion, expected):
    _, got = fit_trace(T5_DOCS, T5_Y, 3, algorithm="frequency", criterion=criterion, max_pattern_size=1)
    assert_trace(got, [(t, 1, None, None, Z) for t, Z in expected])


# ---------------------------------------------------------------------------------------------
# T6: the one-pass z sweep equals brute force over every z


@pytest.mark.parametrize("seed", range(40))
def test_t6_z_sweep(seed):
    """Single-label documents R(a a ... a) make 'a' the only pattern, with counts c_i; the engine's
    best z must be the best over all z in 1..max c, ties to the smallest z, which is canonical."""
    rng = numpy.random.default_rng(seed)
    m = int(rng.integers(3, 11))
    counts = rng.integers(0, 6, m)
    counts[int(rng.integers(m))] = int(rng.integers(1, 6))
    y = rng.choice([-1, 1], m)
    y[:2] = (-1, 1)
    w = rng.uniform(0.05, 1, m) if seed % 4 else numpy.ones(m)
    w /= w.sum()
    f = Forest.from_trees([("ROOT", (("a", ()),) * int(c)) for c in counts])
    sp = space(f, max_pattern_size=1)
    assert sp.n_patterns == 1
    for criterion in ("iwakura", "z"):
        got = sp.best_rule(w, y.astype(numpy.int8), criterion)
        values = [criterion_value(criterion, weight_sums(counts.tolist(), w.tolist(), y.tolist(), z))
                  for z in range(1, int(counts.max()) + 1)]
        best = max(values)
        z_best = 1 + next(z for z, v in enumerate(values) if v >= best - 1e-12 * max(1, best))
        assert got["z"] == z_best
        assert got["value"] == pytest.approx(best, abs=1e-7)
        assert got["z"] == 1 or got["z"] - 1 in set(counts.tolist())


# ---------------------------------------------------------------------------------------------
# T7: BACT on a separable bag of words (L_max = 1)

T7_DOCS = [[["x", "y"]], [["y", "z"]], [["x", "z"]], [["x"]], [["y"]], [["z"]]]
T7_Y = ["+1", "+1", "+1", "-1", "-1", "-1"]

T7_ADABOOST = [("x", 0.3333, 0.3466, -1.0), ("y", 0.5, 0.5493, -0.2263), ("z", 0.6667, 0.8047, 0.0536),
               ("x", 0.6, 0.6931, 0.1313), ("y", 0.625, 0.7332, 0.1797)]
T7_ARCGV = [("x", 0.3333, 0, 0.3466, -1.0), ("y", 0.5, 0, 0.5493, -0.2263), ("z", 0.6667, 0, 0.8047, 0.0536),
            ("x", 0.6, 0.0536, 0.6395, 0.1572), ("y", 0.6049, 0.1572, 0.5423, 0.2426)]


def t7_run(boosting, n_rounds):
    f = Forest.from_sentences(T7_DOCS)
    clf = TreeBoostClassifier("bact", boosting=boosting, n_rounds=0, max_pattern_size=1).fit(f, T7_Y)
    rows = []
    for _ in range(n_rounds):
        head = clf.heads_[0]
        rho = max(0.0, float((head.y * head.scores).min()) / head.alpha_sum) if head.alpha_sum else 0.0
        clf.boost(1)
        code, z, a, b = clf.rules_.rules(0)[-1]
        entry = clf.trace_[-1]
        margin = float((head.y * head.scores).min()) / head.alpha_sum
        rows.append((code, entry["value"], rho, a, b, margin))
    return clf, rows


@pytest.mark.parametrize("boosting,table", [("adaboost", T7_ADABOOST), ("arcgv", T7_ARCGV)])
def test_t7_traces(boosting, table):
    clf, rows = t7_run(boosting, 5)
    for row, expected in zip(rows, table):
        code, gamma, rho, a, b, margin = row
        if boosting == "adaboost":
            t, e_gamma, e_alpha, e_margin = expected
        else:
            t, e_gamma, e_rho, e_alpha, e_margin = expected
            assert rho == pytest.approx(e_rho, abs=PRINTED4)
        assert code == parse_pattern(t)
        assert gamma == pytest.approx(e_gamma, abs=PRINTED4)
        assert (a, b) == pytest.approx((e_alpha, -e_alpha), abs=PRINTED4)
        assert margin == pytest.approx(e_margin, abs=PRINTED4)


@pytest.mark.parametrize("boosting,margin10", [("adaboost", 0.2619), ("arcgv", 0.3319)])
def test_t7_minimum_margin_after_ten_rounds(boosting, margin10):
    _, rows = t7_run(boosting, 10)
    assert rows[-1][5] == pytest.approx(margin10, abs=PRINTED4)


def test_t7_model_compression_reproduces_the_boosted_sum():
    """w_t = 2 sum alpha_k y_k over rules with t, b = -sum alpha_k y_k (docs/algorithms.md §2.6) reproduce sum alpha h."""
    clf, _ = t7_run("adaboost", 5)
    f = Forest.from_sentences(T7_DOCS)
    rules = clf.rules_.rules(0)
    bias = -sum(a for _, _, a, _ in rules)
    weights = {}
    for code, _, a, _ in rules:
        weights[code] = weights.get(code, 0.0) + 2 * a
    docs = forest_docs(f)
    vocab = f.vocab.to_list()
    compact = [bias + sum(wt for code, wt in weights.items()
                          if count_embeddings(code, [vocab[x] for x in labels], parents)) for labels, parents in docs]
    assert numpy.allclose(compact, clf.heads_[0].scores, atol=1e-12)
    assert numpy.allclose(clf.rules_.margins(f)[:, 0], clf.heads_[0].scores, atol=1e-12)


# ---------------------------------------------------------------------------------------------
# T9: the classification trie


@pytest.mark.parametrize("seed", range(10))
def test_t9_trie_counts_equal_brute_force(seed):
    """Random documents and rule sets, including rules whose prefixes are not rules (so the trie
    must keep extending through non-terminal prefixes) and unknown labels (-1)."""
    rng = numpy.random.default_rng(seed)
    n_labels = int(rng.integers(2, 5))
    patterns = set()
    while len(patterns) < 15:
        size = int(rng.integers(1, 5))
        code = [(0, int(rng.integers(n_labels)))]
        for _ in range(size - 1):
            code.append((int(rng.integers(1, code[-1][0] + 2)), int(rng.integers(n_labels))))
        patterns.add(tuple(code))
    patterns = sorted(patterns)
    docs = []
    for _ in range(5):
        n = int(rng.integers(1, 15))
        parents = [-1] + [int(rng.integers(0, v)) for v in range(1, n)]  # any parent before: preorder-valid
        parents = preorder(parents)
        labels = [int(rng.integers(-1, n_labels)) for _ in range(n)]
        docs.append((labels, parents))
    labels = numpy.array([x for lab, _ in docs for x in lab], dtype=numpy.int32)
    offsets = numpy.cumsum([0] + [len(lab) for lab, _ in docs])
    parents = numpy.array([p + offsets[i] if p >= 0 else -1 for i, (_, par) in enumerate(docs) for p in par], dtype=numpy.int32)
    doc, pat, cnt = matcher_of(patterns, n_labels).count(labels, parents, offsets)
    got = {(d, p): c for d, p, c in zip(doc.tolist(), pat.tolist(), cnt.tolist())}
    expected = {}
    for i, (lab, par) in enumerate(docs):
        for p, code in enumerate(patterns):
            c = count_embeddings(code, lab, par)
            if c:
                expected[(i, p)] = c
    assert got == expected


def preorder(parents):
    """Renumber a tree given by parents (each parent index smaller than its child) into preorder."""
    kids = [[] for _ in parents]
    for v, p in enumerate(parents):
        if p >= 0:
            kids[p].append(v)
    order, stack = [], [0]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(reversed(kids[v]))
    new = {v: k for k, v in enumerate(order)}
    return [-1 if parents[v] < 0 else new[parents[v]] for v in order]
