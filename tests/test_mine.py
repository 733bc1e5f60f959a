"""The compiled miner: cached rightmost-extension search space and branch-and-bound weak learner,
checked against the brute-force reference."""
import math

import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference import (
    all_subtrees,
    bact_gain,
    count_embeddings,
    count_embeddings_naive,
    criterion_value,
    dense_counts,
    exhaustive_best_rule,
    forest_docs,
    forests,
    gain_iwakura,
    gain_z,
    mu,
    random_trees,
    random_weights_and_labels,
    reference_bound,
    subtree_codes_of,
    u_joint,
    u_joint_objective,
    u_sep,
    weight_sums,
    weights_and_labels,
    z_low,
)
from spacy_treeboost.learning._mine import SearchSpace, py_bound, py_value, py_weight_bound, py_weight_cut
from spacy_treeboost.learning.classifier import _label_rank
from spacy_treeboost.trees.forest import Forest

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def space(forest, **kw):
    return SearchSpace(forest.labels, forest.parents, forest.offsets, _label_rank(forest.vocab.to_list()), **kw)


def engine_patterns(sp):
    """code -> {doc: count} of every cached pattern; fails on a duplicate code."""
    out = {}
    for i in range(sp.n_patterns):
        code = sp.pattern_code(i)
        assert code not in out, f"pattern {code} enumerated twice"
        docs, counts = sp.pattern_docs(i)
        out[code] = dict(zip(docs.tolist(), counts.tolist()))
    return out


# ---------------------------------------------------------------------------------------------
# The reference counters agree with each other


@settings(max_examples=25, deadline=None)
@given(forests(st, max_docs=2, max_nodes=6), st.integers(1, 3), st.booleans())
def test_reference_counters_agree(data, k, include_root):
    """Connected-subset counting, the backtracking counter and trying every map agree."""
    f = Forest.from_trees(data[0])
    docs = forest_docs(f)
    table = all_subtrees(docs, k, include_root=include_root)
    for code, per_doc in table.items():
        for i, (labels, parents) in enumerate(docs):
            c = count_embeddings(code, labels, parents, allow_root=include_root)
            assert c == per_doc.get(i, 0)
            assert c == count_embeddings_naive(code, labels, parents, allow_root=include_root)


# ---------------------------------------------------------------------------------------------
# Embedding counts and the pattern set


# the miner keeps parent and sibling links as 16-bit distances and looks up longer ones; a small limit makes
# most links long ones
LINK_LIMITS = st.sampled_from([2, 3, 65535])
# the occurrence arena is compacted once its garbage reaches this many words: 1 compacts after most expansions
COMPACT_AT = st.sampled_from([1, 1 << 18])
# a node's document is looked up from its block of 2^bits forest nodes: 1 puts every document across many blocks
DOC_BLOCK_BITS = st.sampled_from([1, 2, 3, 12])


@SETTINGS
@given(forests(st), st.integers(1, 4), st.booleans(), LINK_LIMITS, DOC_BLOCK_BITS)
def test_expand_all_finds_every_subtree_once_with_brute_force_counts(data, k, include_root, link_far, bits):
    f = Forest.from_trees(data[0])
    sp = space(f, max_pattern_size=k, include_root=include_root, _link_far=link_far, _compact_at=1,
               _doc_block_bits=bits)
    n = sp.expand_all()
    got = engine_patterns(sp)
    assert n == sp.n_patterns == len(got)
    assert got == all_subtrees(forest_docs(f), k, include_root=include_root)
    for i in range(sp.n_patterns):
        docs, counts = sp.pattern_docs(i)
        assert list(zip((-counts).tolist(), docs.tolist())) == sorted(zip((-counts).tolist(), docs.tolist()))


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.booleans(), st.integers(1, 3), LINK_LIMITS, DOC_BLOCK_BITS)
def test_expand_all_on_seeded_forests(seed, k, include_root, minsup, link_far, bits):
    f = Forest.from_trees(random_trees(seed)[0])
    sp = space(f, max_pattern_size=k, include_root=include_root, min_support=minsup, _link_far=link_far,
               _doc_block_bits=bits)
    sp.expand_all()
    assert engine_patterns(sp) == all_subtrees(forest_docs(f), k, include_root=include_root, min_support=minsup)


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_a_forest_of_more_than_2_mib_of_node_records_counts_like_its_parts(seed, k):
    """The miner's node records (8 B each) take whole 2 MiB blocks from 2 MiB on: a forest of 300,000 or more nodes,
    tiled from copies of one random forest, gives every pattern the counts of that forest in every copy."""
    f = Forest.from_trees(random_trees(seed)[0])
    m, n = len(f.offsets) - 1, len(f.labels)
    assume(n > 0)
    copies = -(-300_000 // n)
    parents = numpy.asarray(f.parents, dtype=numpy.int64)
    tiled_parents = numpy.concatenate([numpy.where(parents < 0, -1, parents + t * n) for t in range(copies)])
    tiled_offsets = numpy.concatenate([[0]] + [numpy.asarray(f.offsets[1:]) + t * n for t in range(copies)])
    sp = SearchSpace(numpy.tile(f.labels, copies), tiled_parents, tiled_offsets, _label_rank(f.vocab.to_list()),
                     max_pattern_size=k)
    sp.expand_all()
    expected = {code: {d + t * m: c for t in range(copies) for d, c in per_doc.items()}
                for code, per_doc in all_subtrees(forest_docs(f), k).items()}
    assert engine_patterns(sp) == expected


@SETTINGS
@given(forests(st), st.integers(1, 3), st.integers(1, 3), DOC_BLOCK_BITS, st.data())
def test_documents_without_nodes_between_others_are_never_a_nodes_document(data, k, minsup, bits, draw):
    """Offsets may repeat (a document without nodes, before, between or after the others): every node still
    belongs to the one document whose range holds it, found from the hint or from the node's block."""
    f = Forest.from_trees(data[0])
    off = [int(x) for x in f.offsets]
    empties = draw.draw(st.lists(st.integers(0, len(f)), max_size=5))
    starts, new_id = [], {}
    for d in range(len(f) + 1):
        starts += [off[d]] * empties.count(d)
        if d < len(f):
            new_id[d] = len(starts)
            starts.append(off[d])
    sp = SearchSpace(f.labels, f.parents, numpy.array(starts + [off[-1]]), _label_rank(f.vocab.to_list()),
                     max_pattern_size=k, min_support=minsup, _doc_block_bits=bits)
    sp.expand_all()
    want = all_subtrees(forest_docs(f), k, min_support=minsup)
    assert engine_patterns(sp) == {code: {new_id[d]: c for d, c in docs.items()} for code, docs in want.items()}


@SETTINGS
@given(forests(st), st.integers(1, 3), st.booleans(), st.data())
def test_min_support_filters_exactly(data, k, include_root, draw):
    f = Forest.from_trees(data[0])
    minsup = draw.draw(st.integers(1, len(f) + 1))
    sp = space(f, max_pattern_size=k, include_root=include_root, min_support=minsup)
    sp.expand_all()
    assert engine_patterns(sp) == all_subtrees(forest_docs(f), k, include_root=include_root, min_support=minsup)


def test_counts_are_embeddings_not_documents():
    """T2's document twice plus one without a: counts are per document, embeddings within it."""
    f = Forest.from_trees([("ROOT", (("a", (("b", ()), ("b", ()), ("c", ()))),))] * 2 + [("ROOT", (("b", ()),))])
    sp = space(f, max_pattern_size=3)
    sp.expand_all()
    V = f.vocab
    got = engine_patterns(sp)
    assert got[((0, V.get("b")),)] == {0: 2, 1: 2, 2: 1}
    assert got[((0, V.get("a")), (1, V.get("b")), (1, V.get("b")))] == {0: 1, 1: 1}


# ---------------------------------------------------------------------------------------------
# The weak learner


def check_best(sp, f, w, y, criterion, presence, k, include_root, minsup, prepared=False):
    if prepared:
        sp.prepare(numpy.array(w), numpy.array(y, dtype=numpy.int8), criterion)
        got = sp.best_rule(None, None, criterion, presence=presence, prepared=True)
    else:
        got = sp.best_rule(numpy.array(w), numpy.array(y, dtype=numpy.int8), criterion, presence=presence)
    patterns = all_subtrees(forest_docs(f), k, include_root=include_root, min_support=minsup)
    ref = exhaustive_best_rule(patterns, w, y, criterion, presence=presence, vocab=f.vocab.to_list())
    code = sp.pattern_code(got["node"])
    s = weight_sums(dense_counts(patterns[code], len(w)), w, y, got["z"])
    assert (code, got["z"], got["sign"]) == (ref["code"], ref["z"], ref["sign"])
    assert got["value"] == pytest.approx(ref["value"], abs=1e-9)
    if criterion != "bact":
        assert got["value"] == pytest.approx(criterion_value(criterion, s), abs=1e-9)
        assert (got["P"], got["N"]) == pytest.approx((s["P"], s["N"]), abs=1e-12)
    else:
        assert got["value"] == pytest.approx(bact_gain(dense_counts(patterns[code], len(w)), w, y, got["sign"]), abs=1e-9)
    assert (got["A_pos"], got["A_neg"], got["T_pos"], got["T_neg"]) == pytest.approx((s["Ap"], s["An"], s["Tp"], s["Tn"]), abs=1e-12)
    assert 1 <= got["nodes_visited"] <= sp.n_patterns
    return got


def test_exact_tie_with_an_empty_block_follows_the_tie_order():
    """'a' and 'b' occur in exactly the three negative documents: the rules tie exactly, and 'a' comes
    first. Summing a's weights in another order than T- must not leave T- - A- as a rounding residue,
    which sqrt would turn into an error of 1e-8, far above the tie tolerance (a regression test)."""
    f = Forest.from_sentences([[["a"], ["b"]], [["a"], ["a"], ["b"]], [["a"], ["a"], ["a"], ["b"]], [["c"]]])
    w = numpy.array([0.3917795988280543, 0.25415021798300774, 0.1507309458986165, 0.2033392372903214])
    w /= w.sum()
    y = numpy.array([-1, -1, -1, 1], dtype=numpy.int8)
    sp = space(f, max_pattern_size=1)
    for criterion in ("iwakura", "z"):
        got = sp.best_rule(w, y, criterion, presence=True)
        assert sp.pattern_code(got["node"]) == ((0, f.vocab.get("a")),)
        s = weight_sums([1, 1, 1, 0], w.tolist(), y.tolist(), 1)
        assert got["value"] == pytest.approx(criterion_value(criterion, s), abs=1e-12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(forests(st), st.integers(1, 4), st.booleans(), st.sampled_from(["iwakura", "z", "bact"]), st.booleans(),
       st.booleans(), st.data())
def test_best_rule_equals_exhaustive_search(data, k, include_root, criterion, presence, dominance, draw):
    f = Forest.from_trees(data[0])
    minsup = draw.draw(st.sampled_from([1, 1, 2]))
    patterns = all_subtrees(forest_docs(f), k, include_root=include_root, min_support=minsup)
    assume(patterns)
    sp = space(f, max_pattern_size=k, include_root=include_root, min_support=minsup,
               single_document_dominance=dominance, _link_far=draw.draw(LINK_LIMITS),
               _compact_at=draw.draw(COMPACT_AT), _doc_block_bits=draw.draw(DOC_BLOCK_BITS))
    # Several rounds on one cached space: later calls reuse patterns expanded by earlier ones.
    for _ in range(3):
        w, y = draw.draw(weights_and_labels(st, len(f)))
        check_best(sp, f, w, y, criterion, presence, k, include_root, minsup, prepared=draw.draw(st.booleans()))
    # The lazily expanded cache still holds exactly the right patterns and counts.
    sp.expand_all()
    if not dominance:
        assert engine_patterns(sp) == patterns
    else:
        check_dominance_cache(engine_patterns(sp), patterns, f)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(forests(st), st.integers(1, 3), st.sampled_from(["iwakura", "z", "bact"]), st.booleans(), st.integers(2, 3),
       st.data())
def test_searches_that_share_their_best_value_find_the_exhaustive_best(data, k, criterion, presence, n_parts, draw):
    """Root labels split among searches that read and raise one shared best value (as worker processes do,
    here one after the other, the shared value possibly seeded with any value up to the optimum): the merged
    best is the exhaustive search's rule, ties included."""
    from spacy_treeboost.learning.backends import _merge, tie_key

    f = Forest.from_trees(data[0])
    patterns = all_subtrees(forest_docs(f), k, include_root=False, min_support=1)
    assume(patterns)
    w, y = draw.draw(weights_and_labels(st, len(f)))
    w, y = numpy.array(w), numpy.array(y, dtype=numpy.int8)
    ref = exhaustive_best_rule(patterns, w.tolist(), y.tolist(), criterion, presence=presence,
                               vocab=f.vocab.to_list())
    n_labels = len(f.vocab.to_list())
    owner = numpy.array(draw.draw(st.lists(st.integers(0, n_parts - 1), min_size=n_labels, max_size=n_labels)))
    seed = draw.draw(st.sampled_from([-math.inf, ref["value"], ref["value"] * draw.draw(st.floats(0, 1))]))
    shared = numpy.array([seed])
    cands, spaces = [], []
    for part in draw.draw(st.permutations(range(n_parts))):
        sp = space(f, max_pattern_size=k)
        sp.own_root_labels(owner == part)
        got = sp.best_rule(w, y, criterion, presence=presence, shared_best=shared)
        assert shared[0] >= got["value"] or got["node"] < 0
        got["key"] = tie_key(sp.pattern_code(got["node"]), _label_rank(f.vocab.to_list())) if got["node"] >= 0 else None
        cands.append(got)
        spaces.append(sp)
    i, best = _merge(cands)
    assert i >= 0
    assert (spaces[i].pattern_code(best["node"]), best["z"], best["sign"]) == (ref["code"], ref["z"], ref["sign"])
    assert best["value"] == pytest.approx(ref["value"], abs=1e-9)
    assert shared[0] == pytest.approx(max(ref["value"], seed), abs=1e-9)


def test_a_prepared_search_needs_prepare_with_its_criterion_once():
    f = Forest.from_sentences([[["a"], ["b"]], [["a"]], [["c"]]])
    sp = space(f, max_pattern_size=1)
    w, y = numpy.ones(3) / 3, numpy.array([1, -1, 1], dtype=numpy.int8)
    with pytest.raises(ValueError, match="needs a call of prepare"):
        sp.best_rule(w, y, prepared=True)
    sp.prepare(w, y, "z")
    with pytest.raises(ValueError, match="same criterion"):
        sp.best_rule(w, y, "iwakura", prepared=True)
    sp.prepare(w, y, "z")
    assert sp.best_rule(None, None, "z", prepared=True) == sp.best_rule(w, y, "z")
    with pytest.raises(ValueError, match="needs a call of prepare"):
        sp.best_rule(w, y, "z", prepared=True)
    with pytest.raises(ValueError, match="finite"):
        sp.prepare(numpy.array([numpy.nan, 0.5, 0.5]), y)


def check_dominance_cache(got, patterns, f):
    """With single_document_dominance the cache holds every pattern of two or more documents and, per
    document, at least the first of its one-document patterns in the tie order, with the right counts."""
    rank = _label_rank(f.vocab.to_list())
    key = lambda code: (len(code), tuple((d, int(rank[lab])) for d, lab in code))   # noqa: E731
    assert got.items() <= patterns.items()
    assert {c for c, docs in patterns.items() if len(docs) > 1} <= set(got)
    first = {}
    for code, docs in patterns.items():
        if len(docs) == 1:
            (d,) = docs
            first[d] = min(first.get(d, code), code, key=key)
    assert set(first.values()) <= set(got)


@pytest.mark.parametrize("criterion", ["iwakura", "z", "bact"])
def test_dominance_keeps_the_first_one_document_pattern_when_a_later_code_comes_first(criterion):
    """'a x' and 'b y' occur in document 0 only. The first round visits root b before root a (b's bound is
    higher), so 'b y' is cached first; 'a x' comes first in the tie order and must replace it as the kept
    pattern of document 0. The second round puts nearly all weight on document 0, where the two tie."""
    f = Forest.from_sentences([[["a", "x"], ["b", "y"]], [["a"], ["b"]], [["b"]], [["x"], ["y"]]])
    sp = space(f, max_pattern_size=2, single_document_dominance=True)
    check_best(sp, f, [0.25] * 4, [1, 1, 1, -1], criterion, False, 2, False, 1)
    got = check_best(sp, f, [0.97, 0.01, 0.01, 0.01], [1, -1, -1, -1], criterion, False, 2, False, 1)
    V = f.vocab
    assert sp.pattern_code(got["node"]) == ((0, V.get("a")), (1, V.get("x")))
    sp.expand_all()
    patterns = all_subtrees(forest_docs(f), 2)
    check_dominance_cache(engine_patterns(sp), patterns, f)
    fresh = space(f, max_pattern_size=2, single_document_dominance=True)
    fresh.expand_all()   # root a before root b: 'b y' comes after the kept 'a x' and is dropped
    assert set(patterns) - set(engine_patterns(fresh)) == {((0, V.get("b")), (1, V.get("y")))}


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(forests(st), st.integers(1, 3), st.sampled_from(["iwakura", "z", "bact"]), st.booleans(), st.data())
def test_documents_of_zero_weight_still_count_in_their_class(data, k, criterion, presence, draw):
    """Boosting weights can underflow to 0.0 (or come as -0.0): such a document adds nothing to a sum but
    still counts in its class (a block holding every positive document weighs exactly 0 outside)."""
    f = Forest.from_trees(data[0])
    patterns = all_subtrees(forest_docs(f), k, include_root=False, min_support=1)
    assume(patterns)
    w, y = draw.draw(weights_and_labels(st, len(f)))
    for d in draw.draw(st.lists(st.integers(0, len(f) - 1), min_size=1, max_size=len(f) - 1, unique=True)):
        w[d] = draw.draw(st.sampled_from([0.0, -0.0]))
    total = sum(w)
    w = [x / total for x in w]
    check_best(space(f, max_pattern_size=k), f, w, y, criterion, presence, k, False, 1)


def test_a_pattern_in_every_positive_document_leaves_no_positive_weight_outside():
    """The positive documents of zero weight count as positive: a pattern in all of them, and in no negative
    one, has exactly 0 positive weight outside, whatever order its weights are summed in."""
    f = Forest.from_sentences([[["a"]], [["a"], ["b"]], [["a"], ["c"]], [["b"]], [["c"]]])
    y = numpy.array([1, 1, 1, -1, -1], dtype=numpy.int8)
    w = numpy.array([0.1, 0.0, 0.2, 0.3, 0.4]) / 1.0
    sp = space(f, max_pattern_size=1)
    got = sp.best_rule(w, y, "iwakura", presence=True)
    assert sp.pattern_code(got["node"]) == ((0, f.vocab.get("a")),)
    assert got["T_pos"] - got["A_pos"] == pytest.approx(0.0, abs=1e-15)
    s = weight_sums([1, 1, 1, 0, 0], w.tolist(), y.tolist(), 1)
    assert got["value"] == pytest.approx(criterion_value("iwakura", s), abs=1e-12)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.booleans(), st.sampled_from(["iwakura", "z", "bact"]),
       st.booleans(), st.sampled_from([1, 1, 2]), st.booleans())
def test_best_rule_on_seeded_forests(seed, k, include_root, criterion, presence, minsup, dominance):
    f = Forest.from_trees(random_trees(seed)[0])
    assume(all_subtrees(forest_docs(f), k, include_root=include_root, min_support=minsup))
    sp = space(f, max_pattern_size=k, include_root=include_root, min_support=minsup,
               single_document_dominance=dominance)
    for r in range(3):
        w, y = random_weights_and_labels(seed + r, len(f))
        check_best(sp, f, w, y, criterion, presence, k, include_root, minsup)


@SETTINGS
@given(forests(st, max_nodes=8), st.sampled_from(["iwakura", "z", "bact"]), st.booleans(), st.booleans(), st.data())
def test_best_rule_under_uniform_weights_breaks_ties_by_size_code_z(data, criterion, presence, dominance, draw):
    """Uniform weights and few labels make many exact ties (and every one-document pattern of a class
    ties with every other)."""
    f = Forest.from_trees(data[0])
    m = len(f)
    _, y = draw.draw(weights_and_labels(st, m))
    assume(all_subtrees(forest_docs(f), 3))
    sp = space(f, max_pattern_size=3, single_document_dominance=dominance)
    check_best(sp, f, [1.0 / m] * m, y, criterion, presence, 3, False, 1)


def test_tie_order_uses_code_points_not_label_ids():
    """Labels enter the vocabulary as 'b' then 'a'; with a perfect tie, 'a' (code point) wins."""
    f = Forest.from_sentences([[["b"], ["a"]], [["c"]]])
    assert f.vocab.get("b") < f.vocab.get("a")
    sp = space(f, max_pattern_size=1)
    for criterion in ("iwakura", "z", "bact"):
        got = sp.best_rule(numpy.array([0.5, 0.5]), numpy.array([1, -1], dtype=numpy.int8), criterion)
        assert sp.pattern_code(got["node"]) == ((0, f.vocab.get("a")),)


# ---------------------------------------------------------------------------------------------
# Bounds


box = st.tuples(st.floats(0, 1), st.floats(0, 1), st.floats(0, 1), st.floats(0, 1))


@settings(max_examples=300, deadline=None)
@given(box)
def test_py_bound_and_py_value_formulas(x):
    """The engine's bound and value functions equal the formulas written from docs/algorithms.md §2.3 and §3.7."""
    Tp, Tn = x[0] + 1e-3, x[1] + 1e-3
    total = Tp + Tn
    Tp, Tn = Tp / total, Tn / total
    Ap, An = x[2] * Tp, x[3] * Tn
    for criterion in ("iwakura", "z", "bact"):
        assert py_bound(criterion, Ap, An, Tp, Tn) == pytest.approx(reference_bound(criterion, Ap, An, Tp, Tn), abs=1e-12)
    P, N = x[2] * (Ap + An), (1 - x[2]) * (Ap + An)
    Wp, Wn = Tp - Ap, Tn - An
    assert py_value("iwakura", P, N, Wp, Wn) == pytest.approx(gain_iwakura(P, N, Wp, Wn), abs=1e-12)
    assert py_value("z", P, N, Wp, Wn) == pytest.approx(gain_z(P, N, Wp, Wn), abs=1e-12)
    assert py_value("z", P, N, Wp, Wn) == pytest.approx(1 - (2 * math.sqrt(P * N) + 2 * math.sqrt(Wp * Wn)), abs=1e-12)
    assert u_joint(Ap, An, Tp, Tn) <= u_sep(Ap, An, Tp, Tn) + 1e-12


@settings(max_examples=500, deadline=None)
@given(box, st.sampled_from([0.0, 1.0]), st.floats(0, 2))
def test_the_weight_bound_is_above_the_bound_and_the_cut_below_the_threshold(x, edge, threshold):
    """weight_bound(Ap + An) >= the iwakura bound, including patterns in every document of a class
    (edge 1: Ap = Tp); every weight up to weight_cut(threshold) has a weight bound below the threshold,
    and a slightly larger weight does not."""
    Tp, Tn = x[0] + 1e-3, x[1] + 1e-3
    Tp, Tn = Tp / (Tp + Tn), Tn / (Tp + Tn)
    Ap = Tp if edge else x[2] * Tp
    An = x[3] * Tn
    assert py_weight_bound(Ap + An, Tp, Tn) >= py_bound("iwakura", Ap, An, Tp, Tn)
    cut = py_weight_cut(Tp, Tn, threshold)
    if cut < 0:
        assert not py_weight_bound(0.0, Tp, Tn) < threshold
        return
    for S in (0.0, cut / 2, cut):
        assert py_weight_bound(S, Tp, Tn) < threshold
    assert not py_weight_bound(cut * (1 + 1e-9) + 1e-12, Tp, Tn) < threshold


@settings(max_examples=100, deadline=None)
@given(box)
def test_reference_u_joint_is_the_maximum_over_the_box(x):
    """Self-check of the reference: u_joint equals the max of phi(a+, a-) over a fine grid (up to grid
    error), and no grid point exceeds it."""
    Tp, Tn = x[0] + 1e-3, x[1] + 1e-3
    Tp, Tn = Tp / (Tp + Tn), Tn / (Tp + Tn)
    Ap, An = x[2] * Tp, x[3] * Tn
    ap, an = numpy.meshgrid(numpy.linspace(0, Ap, 401), numpy.linspace(0, An, 41))
    phi = numpy.sqrt(ap + an) + numpy.abs(numpy.sqrt(numpy.maximum(Tp - ap, 0)) - numpy.sqrt(numpy.maximum(Tn - an, 0)))
    ub = u_joint(Ap, An, Tp, Tn)
    assert phi.max() <= ub + 1e-12
    assert phi.max() >= ub - 2e-3
    # spot-check the vectorized objective against the reference's scalar one
    assert phi[7, 13] == pytest.approx(u_joint_objective(ap[7, 13], an[7, 13], Tp, Tn), abs=1e-15)


@SETTINGS
@given(st.one_of(forests(st, max_nodes=8), st.integers(0, 2**32 - 1).map(random_trees)), st.integers(2, 4),
       st.booleans(), st.integers(0, 2**32 - 1))
def test_no_bound_is_below_a_supertree_value(data, k, include_root, wseed):
    """For all t within t' (both occurring) and every z': value(t', z') <= bound(t) for iwakura and z,
    gain(<t', y>) <= mu(t) for bact; Z*(t', z') >= Z_low(t); u_joint <= u_sep."""
    f = Forest.from_trees(data[0])
    m = len(f)
    w, y = random_weights_and_labels(wseed, m)
    patterns = all_subtrees(forest_docs(f), k, include_root=include_root)
    sums = {code: weight_sums(dense_counts(c, m), w, y, 1) for code, c in patterns.items()}
    for big, per_doc in patterns.items():
        counts = dense_counts(per_doc, m)
        values = []
        for z in range(1, max(counts) + 2):
            s = weight_sums(counts, w, y, z)
            values.append((criterion_value("iwakura", s), criterion_value("z", s),
                           2 * math.sqrt(s["P"] * s["N"]) + 2 * math.sqrt(s["Wp"] * s["Wn"])))
        bact = [sum(yi * wi * (sgn if c else -sgn) for c, wi, yi in zip(counts, w, y)) for sgn in (1, -1)]
        for small in subtree_codes_of(big):
            s = sums[small]
            args = (s["Ap"], s["An"], s["Tp"], s["Tn"])
            b_iw, b_z, b_bact = py_bound("iwakura", *args), py_bound("z", *args), py_bound("bact", *args)
            assert b_iw <= u_sep(*args) + 1e-12
            assert b_bact == pytest.approx(mu(*args), abs=1e-12)
            for v_iw, v_z, zstar in values:
                assert v_iw <= b_iw + 1e-12
                assert v_z <= b_z + 1e-12
                assert zstar >= z_low(*args) - 1e-12
            assert max(bact) <= b_bact + 1e-12


# ---------------------------------------------------------------------------------------------
# Bad input and limits


def small_forest():
    return Forest.from_sentences([[["a", "b"], ["c"]], [["b", "c"]], [["a"]]])


@pytest.mark.parametrize("criterion", ["iwakura", "z"])
def test_counts_past_one_byte_keep_their_value_and_thresholds(criterion):
    """Counts of 255 and more leave the pool's one-byte counts for a side table: the counts read back, the
    thresholds z between them and the best rule are those of brute force. 'a' occurs 300, 256, 255, 254
    and 3 times; 'a b' (sentences 'a b') 255, 254 and 1 times."""
    docs = [[["a"]] * 300 + [["a", "b"]] * 255, [["a"]] * 256, [["a"]] * 255 + [["a", "b"]] * 254,
            [["a"]] * 254 + [["a", "b"]], [["a"]] * 3 + [["b"]]]
    f = Forest.from_sentences(docs)
    patterns = all_subtrees(forest_docs(f), 2)
    sp = space(f, max_pattern_size=2)
    sp.expand_all()
    assert engine_patterns(sp) == patterns
    assert patterns[((0, f.vocab.get("a")),)] == {0: 555, 1: 256, 2: 509, 3: 255, 4: 3}
    sp = space(f, max_pattern_size=2, single_document_dominance=True)
    for seed in range(6):
        w, y = random_weights_and_labels(seed, len(f))
        check_best(sp, f, w, y, criterion, False, 2, False, 1)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["iwakura", "z"]))
def test_long_runs_of_equal_counts_give_the_best_rule_of_brute_force(seed, criterion):
    """Many documents over three words: a pattern's documents come in long runs of equal counts (the search
    finds a run's end sixteen counts at a time), at every offset of a run against those blocks."""
    rng = numpy.random.default_rng(seed)
    docs = [[list(rng.choice(["a", "b", "c"], size=rng.integers(1, 6))) for _ in range(rng.integers(1, 4))]
            for _ in range(rng.integers(17, 70))]
    f = Forest.from_sentences(docs)
    sp = space(f, max_pattern_size=2)
    w, y = random_weights_and_labels(seed % 1000, len(f))
    check_best(sp, f, w, y, criterion, False, 2, False, 1)


def test_equal_counts_past_one_byte_are_one_threshold_group():
    """Two documents with the same count of 255 or more, beside larger and smaller ones: a count read from
    the side table ends a run only where it changes."""
    docs = [[["a"]] * 300, [["a"]] * 300, [["a"]] * 400, [["a"]] * 2, [["b"]]]
    f = Forest.from_sentences(docs)
    sp = space(f, max_pattern_size=1)
    w = numpy.array([0.1, 0.3, 0.15, 0.25, 0.2])
    for y in ([1, 1, -1, -1, 1], [1, -1, 1, -1, -1], [-1, 1, 1, 1, -1]):
        for criterion in ("iwakura", "z"):
            check_best(sp, f, w.tolist(), y, criterion, False, 1, False, 1)


def test_a_forest_out_of_preorder_is_refused():
    labels = numpy.array([0, 1, 1], dtype=numpy.int32)
    with pytest.raises(ValueError, match="preorder"):
        SearchSpace(labels, numpy.array([-1, 2, 0], dtype=numpy.int32), numpy.array([0, 3]), numpy.array([0, 1]))


def test_pattern_size_limits():
    f = small_forest()
    with pytest.raises(ValueError, match="max_pattern_size"):
        space(f, max_pattern_size=0)
    with pytest.raises(ValueError, match="min_support"):
        space(f, min_support=0)
    big = space(f, max_pattern_size=1000)
    big.expand_all()
    assert engine_patterns(big) == all_subtrees(forest_docs(f), 1000)


def test_label_outside_vocabulary_is_rejected():
    f = small_forest()
    with pytest.raises(ValueError, match="outside the vocabulary"):
        SearchSpace(f.labels, f.parents, f.offsets, _label_rank(f.vocab.to_list())[:2])


def test_weights_of_the_wrong_length():
    f = small_forest()
    sp = space(f)
    with pytest.raises(ValueError):
        sp.best_rule(numpy.ones(2) / 2, numpy.array([1, -1], dtype=numpy.int8))


def test_nan_weights_are_rejected():
    sp = space(small_forest())
    with pytest.raises(ValueError, match="weights"):
        sp.best_rule(numpy.array([numpy.nan, 0.5, 0.5]), numpy.array([1, -1, 1], dtype=numpy.int8))


def test_negative_or_zero_weights_and_bad_labels_are_rejected():
    sp = space(small_forest())
    y = numpy.array([1, -1, 1], dtype=numpy.int8)
    with pytest.raises(ValueError, match="weights"):
        sp.best_rule(numpy.array([-0.5, 0.75, 0.75]), y)
    with pytest.raises(ValueError, match="weights"):
        sp.best_rule(numpy.zeros(3), y)
    with pytest.raises(ValueError, match="weights"):
        sp.best_rule(numpy.array([numpy.inf, 0.5, 0.5]), y)
    with pytest.raises(ValueError, match="labels"):
        sp.best_rule(numpy.ones(3) / 3, numpy.array([1, 0, 1], dtype=numpy.int8))


def test_unknown_criterion():
    sp = space(small_forest())
    with pytest.raises((ValueError, KeyError)):
        sp.best_rule(numpy.ones(3) / 3, numpy.array([1, -1, 1], dtype=numpy.int8), "gini")


def test_memory_cap():
    f = Forest.from_trees([("ROOT", tuple(("a", (("b", ()),) * 3) for _ in range(12)))] * 3)
    sp = space(f, max_pattern_size=6, include_root=True, max_cache_bytes=4096)
    with pytest.raises(MemoryError, match="max_cache_mb"):
        sp.expand_all()


def test_ten_thousand_deep_chain():
    """Mining a 10,000-token sentence with max_pattern_size 3: counts are its n-gram counts."""
    rng = numpy.random.default_rng(7)
    words = [f"w{int(i)}" for i in rng.integers(0, 4, 10_000)]
    f = Forest.from_sentences([[words], [words[:5]]])
    sp = space(f, max_pattern_size=3)
    sp.expand_all()
    got = engine_patterns(sp)
    expected = {}
    for doc, sent in enumerate([words, words[:5]]):
        for n in (1, 2, 3):
            for j in range(len(sent) - n + 1):
                code = tuple((d, f.vocab.get(wd)) for d, wd in enumerate(sent[j:j + n]))
                per = expected.setdefault(code, {})
                per[doc] = per.get(doc, 0) + 1
    assert got == expected
    rule = sp.best_rule(numpy.array([0.5, 0.5]), numpy.array([1, -1], dtype=numpy.int8), "iwakura")
    assert rule["node"] >= 0


def test_a_link_limit_out_of_range_is_refused():
    f = Forest.from_sentences([[["a", "b"]]])
    for bad in (1, 65536):
        with pytest.raises(ValueError, match=r"_link_far must be in \[2, 65535\]"):
            space(f, _link_far=bad)


def test_a_document_block_size_out_of_range_is_refused():
    f = Forest.from_sentences([[["a", "b"]]])
    for bad in (0, 31):
        with pytest.raises(ValueError, match=r"_doc_block_bits must be in \[1, 30\]"):
            space(f, _doc_block_bits=bad)


def test_long_links_are_found_beyond_the_16_bit_distance():
    """A sentence of 70,000 words: the second sentence's first word is 70,001 nodes after the virtual root, its
    parent; the next sibling of the first sentence's first word is as far away."""
    words = [f"w{i % 3}" for i in range(70_000)]
    f = Forest.from_sentences([[words, ["a", "b"]], [["a", "b"]]])
    sp = space(f, max_pattern_size=2, include_root=True)
    sp.expand_all()
    got = engine_patterns(sp)
    V = f.vocab
    assert got[((0, 0), (1, V.get("a")))] == {0: 1, 1: 1}
    assert got[((0, 0), (1, V.get("w0")))] == {0: 1}
    assert got[((0, V.get("a")), (1, V.get("b")))] == {0: 1, 1: 1}


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.integers(1, 4), st.booleans(), st.integers(1, 3))
def test_take_patterns_gives_every_pattern_its_code_documents_and_counts(seed, k, include_root, minsup):
    from spacy_treeboost.learning.features import PatternCodes

    f = Forest.from_trees(random_trees(seed)[0])
    sp = space(f, max_pattern_size=k, include_root=include_root, min_support=minsup)
    n = sp.expand_all()
    own_codes = [sp.pattern_code(i) for i in range(n)]
    (parent, depth, label, size), (indptr, docs, counts) = sp.take_patterns()
    assert sp.n_patterns == 0
    codes = PatternCodes.from_tree(parent, depth, label, size, f.vocab.to_list())
    assert len(indptr) == n + 1 and len(codes) == n
    vocab = f.vocab.to_list()
    got = {}
    for i in range(n):
        lo, hi = indptr[i], indptr[i + 1]
        assert (numpy.diff(docs[lo:hi]) > 0).all()
        code = tuple((d, vocab[l]) for d, l in own_codes[i])
        assert codes[i] == code
        got[code] = dict(zip(docs[lo:hi].tolist(), counts[lo:hi].tolist()))
    want = {tuple((d, vocab[l]) for d, l in code): c
            for code, c in all_subtrees(forest_docs(f), k, include_root=include_root, min_support=minsup).items()}
    assert got == want
