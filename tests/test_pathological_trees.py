"""Many same-label siblings: exact matching, mining and bounded explanations.

A node x with n children labelled a has C(n, k) embeddings of x(a ... a) with k
children. Matching, mining and explaining such a node must give the exact
(saturated) counts of the definition without listing the embeddings.
"""
import math

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from match_strategies import codes, matcher_of, to_arrays
from reference import all_subtrees, count_embeddings, forest_docs, random_tree_arrays
from spacy_treeboost.learning._mine import SearchSpace
from spacy_treeboost.models.explain import EmbeddingTable
from spacy_treeboost.learning.classifier import _label_rank
from spacy_treeboost.trees import Forest, ForestBuilder

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CAP = 2**31 - 1
X, A, B = 0, 1, 2
X_A = ((0, X), (1, A))
X_AA = ((0, X), (1, A), (1, A))
X_AAA = ((0, X), (1, A), (1, A), (1, A))


def hostile(n: int):
    """Local (labels, parents) of x with n children labelled a."""
    return [X] + [A] * n, [-1] + [0] * n


def matched(patterns, docs, n_labels=3):
    doc, pat, cnt = matcher_of(patterns, n_labels).count(*to_arrays(docs))
    assert len(set(zip(doc.tolist(), pat.tolist()))) == len(doc), "a (doc, pattern) pair reported twice"
    assert (cnt > 0).all()
    return {(d, p): c for d, p, c in zip(doc.tolist(), pat.tolist(), cnt.tolist())}


def brute(patterns, docs):
    out = {}
    for i, (labels, parents) in enumerate(docs):
        for p, code in enumerate(patterns):
            c = count_embeddings(code, labels, parents)
            if c:
                out[(i, p)] = min(c, CAP)
    return out


# ---------------------------------------------------------------------------------------------
# Matching


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 9, 60, 1_000, 2_000, 2_500, 100_000])
def test_matcher_counts_on_one_wide_node(n):
    """x(a), x(a a), x(a a a) have C(n, k) embeddings, saturated at 2^31 - 1 (C(2500, 3) > 2^31)."""
    got = matched([X_A, X_AA, X_AAA], [hostile(n)])
    expected = {(0, k - 1): min(math.comb(n, k), CAP) for k in (1, 2, 3) if math.comb(n, k)}
    assert got == expected


def test_matcher_each_rule_set_alone():
    """Each rule on its own (trie nodes without children) gives the same counts as together."""
    doc = hostile(40)
    for k, code in enumerate([X_A, X_AA, X_AAA], start=1):
        assert matched([code], [doc]) == {(0, 0): math.comb(40, k)}


def test_matcher_sibling_labels_interleaved_with_others():
    """x(a b a a b a): x(a a) = C(4, 2) = 6; x(a b): a before b, 2 + 1 + 1 = 4; x(b a a): b2 with two of
    a3 a4 a6 = 3, b5 with two of a6 = 0; x(b b) = 1."""
    labels = [X, A, B, A, A, B, A]
    parents = [-1, 0, 0, 0, 0, 0, 0]
    patterns = [X_AA, ((0, X), (1, A), (1, B)), ((0, X), (1, B), (1, A), (1, A)), ((0, X), (1, B), (1, B))]
    assert matched(patterns, [(labels, parents)]) == {(0, 0): 6, (0, 1): 4, (0, 2): 3, (0, 3): 1}
    assert matched(patterns, [(labels, parents)]) == brute(patterns, [(labels, parents)])


def test_matcher_parents_out_of_order():
    """Occurrences sorted by node whose rightmost-path parents are not sorted: a1(b c(a2(b b)) b).

    For a(b)(b) the b's in node order have parents a1, a2, a2, a1, so the occurrences
    under a1 come in two runs; every count must still be exact."""
    a, b, c = 0, 1, 2
    labels = [a, b, c, a, b, b, b]
    parents = [-1, 0, 0, 2, 3, 3, 0]
    patterns = [((0, a), (1, b), (1, b)), ((0, a), (1, b)), ((0, a), (1, b), (1, c)), ((0, a), (1, c), (1, b)),
                ((0, c), (1, a), (2, b), (2, b)), ((0, a), (1, b), (1, c), (2, a), (3, b))]
    assert matched(patterns, [(labels, parents)]) == brute(patterns, [(labels, parents)])
    assert matched(patterns, [(labels, parents)])[(0, 0)] == 2


@st.composite
def wide_documents(draw, n_labels, max_docs=3, max_nodes=13):
    """Few labels and mostly shallow shapes, so nodes get many same-label children."""
    docs = []
    for _ in range(draw(st.integers(1, max_docs))):
        n = draw(st.integers(1, max_nodes))
        parents = random_tree_arrays(draw, st, n, draw(st.sampled_from(["flat", "random", "sentences"])))
        labels = [draw(st.integers(0, n_labels - 1)) for _ in range(n)]
        docs.append((labels, parents))
    return docs


@SETTINGS
@given(st.integers(1, 2).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(codes(n, max_size=5), min_size=1, max_size=10, unique=True), wide_documents(n))))
def test_matcher_on_wide_random_trees_equals_brute_force(args):
    n_labels, patterns, docs = args
    assert matched(patterns, docs, n_labels) == brute(patterns, docs)


# ---------------------------------------------------------------------------------------------
# Mining


def forest_of(docs, names=("x", "a", "b")) -> Forest:
    builder = ForestBuilder()
    for labels, parents in docs:
        builder.add_labeled(["ROOT"] + [names[l] for l in labels], [-1] + [p + 1 for p in parents])
    return builder.build()


def brute_mined(forest: Forest, k: int, **kw):
    """code (label strings) -> {doc: saturated count} of every subtree, by connected node subsets."""
    return {tuple((d, forest.vocab[l]) for d, l in code): {doc: min(c, CAP) for doc, c in per_doc.items()}
            for code, per_doc in all_subtrees(forest_docs(forest), k, **kw).items()}


def mined(forest: Forest, k: int, **kw):
    sp = SearchSpace(forest.labels, forest.parents, forest.offsets, _label_rank(forest.vocab.to_list()),
                     max_pattern_size=k, **kw)
    sp.expand_all()
    out = {}
    for i in range(sp.n_patterns):
        code = tuple((d, forest.vocab[l]) for d, l in sp.pattern_code(i))
        assert code not in out
        docs, counts = sp.pattern_docs(i)
        out[code] = dict(zip(docs.tolist(), counts.tolist()))
    return out


def test_miner_on_one_wide_node_equals_brute_force():
    f = forest_of([hostile(7), ([X, A, B, A], [-1, 0, 0, 0])])
    assert mined(f, 4) == brute_mined(f, 4)
    assert mined(f, 4)[(0, "x"), (1, "a"), (1, "a"), (1, "a")] == {0: 35}


@pytest.mark.parametrize("n", [2_000, 2_500, 50_000])
def test_miner_counts_on_a_large_wide_node(n):
    """Every pattern of x with n a-children plus a small document, with closed-form counts."""
    f = forest_of([hostile(n), ([X, A, A, B], [-1, 0, 0, 0])])
    got = mined(f, 4)
    a = (1, "a")
    assert got[((0, "x"), a)] == {0: n, 1: 2}
    assert got[((0, "x"), a, a)] == {0: min(math.comb(n, 2), CAP), 1: 1}
    assert got[((0, "x"), a, a, a)] == {0: min(math.comb(n, 3), CAP)}
    assert got[((0, "x"), a, a, (1, "b"))] == {1: 1}
    assert got[((0, "a"),)] == {0: n, 1: 2}
    assert set(got) == {((0, "a"),), ((0, "b"),), ((0, "x"),), ((0, "x"), a), ((0, "x"), (1, "b")), ((0, "x"), a, a),
                        ((0, "x"), a, (1, "b")), ((0, "x"), a, a, a), ((0, "x"), a, a, (1, "b"))}


@SETTINGS
@given(wide_documents(2, max_docs=4, max_nodes=11), st.integers(1, 4), st.integers(1, 2))
def test_miner_on_wide_random_trees_equals_brute_force(docs, k, min_support):
    f = forest_of(docs)
    assert mined(f, k, min_support=min_support) == brute_mined(f, k, min_support=min_support)


# ---------------------------------------------------------------------------------------------
# Explanations


def all_embeddings(code, labels, parents):
    """Every embedding, listed by extending partial maps one pattern node at a time (lexicographic order)."""
    n = len(labels)
    children = [[] for _ in range(n)]
    for v in range(1, n):
        children[parents[v]].append(v)
    partial = [[v] for v in range(n) if labels[v] == code[0][1]]
    for k in range(1, len(code)):
        depth, label = code[k]
        path = []
        for j in range(k):
            del path[code[j][0]:]
            path.append(j)
        partial = [emb + [c] for emb in partial for c in children[emb[path[depth - 1]]]
                   if labels[c] == label and (depth >= len(path) or c > emb[path[depth]])]
    return partial


def explain_count(code, labels, parents):
    return EmbeddingTable(code, labels, parents).total


def covered_nodes(code, labels, parents):
    return EmbeddingTable(code, labels, parents).covered_nodes()


def named(code):
    return [(d, "xab"[l]) for d, l in code]


def test_explanations_on_a_wide_node_are_bounded_and_exact():
    n = 5_000
    labels = ["x"] + ["a"] * n
    parents = numpy.array([-1] + [0] * n)
    code = named(X_AAA)
    assert explain_count(code, labels, parents) == math.comb(n, 3)
    assert covered_nodes(code, labels, parents) == set(range(n + 1))
    assert covered_nodes(named(((0, X), (1, A), (1, B))), labels, parents) == set()


def test_explanations_skip_children_that_no_complete_embedding_uses():
    """x(b a a b a) against x(a b): the first b and the last a are in no embedding."""
    labels = ["x", "b", "a", "a", "b", "a"]
    parents = numpy.array([-1, 0, 0, 0, 0, 0])
    code = [(0, "x"), (1, "a"), (1, "b")]
    assert covered_nodes(code, labels, parents) == {0, 2, 3, 4}
    assert explain_count(code, labels, parents) == 2


@SETTINGS
@given(st.integers(1, 3).flatmap(lambda n: st.tuples(codes(n, max_size=5), wide_documents(n, max_docs=1))))
def test_explanations_equal_listing_every_embedding(args):
    code, docs = args
    labels = ["xab"[l] for l in docs[0][0]]
    parents = docs[0][1]
    code = named(code)
    every = all_embeddings(code, labels, parents)
    assert explain_count(code, labels, numpy.array(parents)) == len(every) == count_embeddings(code, labels, parents)
    assert covered_nodes(code, labels, numpy.array(parents)) == {v for e in every for v in e}


def test_the_view_marks_every_node_of_a_wide_node_without_listing_embeddings():
    """The nodes and arcs drawn for x(a a a) on "x a a a ... a" (x the head of every a) are all of them,
    found without listing the C(n, 3) embeddings."""
    n = 3_000
    node_labels = ["\x00ROOT", "x"] + ["a"] * n
    parents = numpy.array([-1, 0] + [1] * n)
    table = EmbeddingTable(named(X_AAA), node_labels, parents)
    assert table.total == math.comb(n, 3)
    assert table.covered_nodes() == set(range(1, n + 2))
    assert table.covered_arcs() == {(1, v) for v in range(2, n + 2)}