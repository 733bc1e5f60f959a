"""The trie-guided matcher (T9): counts equal brute-force embedding counts."""
import pickle

import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference import count_embeddings, is_valid_code, random_tree_arrays
from match_strategies import codes, matcher_of, to_arrays

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def documents(draw, n_labels, max_docs=6, max_nodes=12):
    """Random documents as (labels, local parents); label -1 is an unknown label."""
    docs = []
    for _ in range(draw(st.integers(1, max_docs))):
        n = draw(st.integers(1, max_nodes))
        shape = draw(st.sampled_from(["random", "chain", "flat", "sentences"]))
        parents = random_tree_arrays(draw, st, n, shape)
        labels = [draw(st.integers(-1, n_labels - 1)) for _ in range(n)]
        docs.append((labels, parents))
    return docs


def matcher_table(matcher, docs):
    doc, pat, cnt = matcher.count(*to_arrays(docs))
    assert len(set(zip(doc.tolist(), pat.tolist()))) == len(doc), "a (doc, pattern) pair reported twice"
    assert (cnt > 0).all()
    return {(d, p): c for d, p, c in zip(doc.tolist(), pat.tolist(), cnt.tolist())}


def brute_table(patterns, docs, allow_root=True):
    out = {}
    for i, (labels, parents) in enumerate(docs):
        for p, code in enumerate(patterns):
            c = count_embeddings(code, labels, parents, allow_root=allow_root)
            if c:
                out[(i, p)] = c
    return out


@SETTINGS
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(codes(n), min_size=1, max_size=12, unique=True), documents(n))), st.booleans())
def test_counts_equal_brute_force(args, match_roots):
    """Random pattern sets (whose prefixes are mostly not patterns themselves) on random documents
    with unknown labels: trie pruning never loses a pattern and every count is exact; with
    match_roots=False no embedding may use a document root."""
    n_labels, patterns, docs = args
    assert all(is_valid_code(c) for c in patterns)
    m = matcher_of(patterns, n_labels, match_roots)
    assert m.n_patterns == len(patterns)
    assert matcher_table(m, docs) == brute_table(patterns, docs, allow_root=match_roots)


@SETTINGS
@given(st.integers(2, 3).flatmap(lambda n: st.tuples(st.just(n), documents(n, max_docs=3, max_nodes=9))))
def test_all_subtrees_of_the_documents_are_counted(args):
    """The pattern set is every subtree up to size 3 of the documents themselves (many shared prefixes)."""
    n_labels, docs = args
    from reference import all_subtrees

    known = [([lab if lab >= 0 else n_labels for lab in labels], parents) for labels, parents in docs]
    patterns = sorted(c for c in all_subtrees(known, 3, include_root=True) if all(lab < n_labels for _, lab in c))
    assume(patterns)
    m = matcher_of(patterns, n_labels)
    assert matcher_table(m, docs) == brute_table(patterns, docs)


def test_deep_pattern_without_its_prefixes():
    """Only a(b(c)) and a(b c) are patterns: their prefixes a and a(b) exist only as trie nodes."""
    a, b, c = 0, 1, 2
    patterns = [((0, a), (1, b), (2, c)), ((0, a), (1, b), (1, c))]
    docs = [([a, b, c, c, b, c, c], [-1, 0, 1, 1, 0, 4, 0])]  # a(b(c c) b(c) c)
    m = matcher_of(patterns, 3)
    assert matcher_table(m, docs) == brute_table(patterns, docs) == {(0, 0): 3, (0, 1): 2}


def test_unknown_labels_never_match():
    m = matcher_of([((0, 0),), ((0, 0), (1, 1))], 2)
    docs = [([0, -1, 1], [-1, 0, 0]), ([-1, 1], [-1, 0])]
    assert matcher_table(m, docs) == {(0, 0): 1, (0, 1): 1}


def test_label_ids_outside_the_vocabulary_do_not_match():
    """Ids >= n_labels are unknown labels; they must not alias other trie edges (a regression test)."""
    m = matcher_of([((0, 0), (1, 1), (1, 1)), ((0, 1),)], 2)  # 0(1 1) and 1
    docs = [([0, 5, 1], [-1, 0, 0]), ([0, 3, 1, 7], [-1, 0, 1, 0])]  # 0(5 1), 0(3(1) 7)
    assert matcher_table(m, docs) == {(0, 1): 1, (1, 1): 1}


@pytest.mark.parametrize("bad", [
    [()],                              # empty code
    [((1, 0),)],                       # does not start at depth 0
    [((0, 0), (2, 1))],                # depth jumps by two
    [((0, 0), (0, 1))],                # second root
    [((0, 3),)],                       # label outside the vocabulary
    [((0, -1),)],                      # negative label
    [((0, 0), (1, 1)), ((0, 0), (1, 1))],  # the same tree twice
])
def test_invalid_pattern_sets(bad):
    with pytest.raises(ValueError):
        matcher_of(bad, 2)


def test_pickle():
    m = matcher_of([((0, 0), (1, 1)), ((0, 1),)], 2)
    m2 = pickle.loads(pickle.dumps(m))
    docs = [([0, 1, 1], [-1, 0, 0]), ([1, 1], [-1, 0])]
    assert matcher_table(m2, docs) == matcher_table(m, docs) == {(0, 0): 2, (0, 1): 2, (1, 1): 2}
    m = matcher_of([((0, 0), (1, 1)), ((0, 1),)], 2, False)
    m2 = pickle.loads(pickle.dumps(m))
    assert matcher_table(m2, docs) == matcher_table(m, docs) == {(0, 1): 2, (1, 1): 1}


def test_empty_documents_and_no_patterns():
    m = matcher_of([], 2)
    assert matcher_table(m, [([0, 1], [-1, 0])]) == {}
    m = matcher_of([((0, 0),)], 1)
    doc, pat, cnt = m.count(numpy.zeros(0, numpy.int32), numpy.zeros(0, numpy.int32), numpy.zeros(1, numpy.int64))
    assert len(doc) == len(pat) == len(cnt) == 0


def test_ten_thousand_deep_chain():
    """Matching in a 10,000-deep chain: counts are n-gram counts, and nothing recurses per level."""
    rng = numpy.random.default_rng(3)
    words = rng.integers(0, 3, 10_000).tolist()
    labels = [0] + [w + 1 for w in words]  # label 0 is the root
    parents = list(range(-1, 10_000))
    patterns = [((0, 1),), ((0, 1), (1, 2)), ((0, 2), (1, 2), (2, 3)), ((0, 0), (1, words[0] + 1)), ((0, 3), (1, 3), (2, 3))]
    m = matcher_of(patterns, 4)
    got = matcher_table(m, [(labels, parents)])
    seq = [w + 1 for w in words]

    def ngrams(gram):
        return sum(seq[j:j + len(gram)] == list(gram) for j in range(len(seq) - len(gram) + 1))

    expected = {(0, 0): ngrams([1]), (0, 1): ngrams([1, 2]), (0, 2): ngrams([2, 2, 3]), (0, 3): 1,
                (0, 4): ngrams([3, 3, 3])}
    assert got == {k: v for k, v in expected.items() if v}


def test_counts_saturate_instead_of_overflowing():
    """A root with 600 children labeled a: R(a a a a) has C(600, 4) > 2^31 embeddings."""
    n = 600
    labels = [0] + [1] * n
    parents = [-1] + [0] * n
    m = matcher_of([((0, 0), (1, 1), (1, 1), (1, 1), (1, 1)), ((0, 0), (1, 1), (1, 1))], 2)
    got = matcher_table(m, [(labels, parents)])
    assert got == {(0, 0): 2**31 - 1, (0, 1): n * (n - 1) // 2}


def test_extensions_above_the_rightmost_node_only():
    """After a(b(c)) the trie extends only at depth 1 (a later b), so the walk up the rightmost path
    must skip depth 2: a(b(c) b b(c) c) has a(b(c) b) = 2 + 0 = 2 and a(b(c) b(c)) = 1."""
    a, b, c = 0, 1, 2
    labels = [a, b, c, b, b, c, c]
    parents = [-1, 0, 1, 0, 0, 4, 0]
    patterns = [((0, a), (1, b), (2, c), (1, b)), ((0, a), (1, b), (2, c), (1, b), (2, c))]
    docs = [(labels, parents)]
    assert matcher_table(matcher_of(patterns, 3), docs) == brute_table(patterns, docs) == {(0, 0): 2, (0, 1): 1}


def test_many_same_label_siblings_under_several_parents():
    """Two wide nodes and a nested one: x(a a x(a a a) a) with x(a a) = C(3, 2) + C(3, 2) = 6 and x(a a a) = 1 + 1."""
    x, a = 0, 1
    labels = [x, a, a, x, a, a, a, a]
    parents = [-1, 0, 0, 0, 3, 3, 3, 0]
    patterns = [((0, x), (1, a), (1, a)), ((0, x), (1, a), (1, a), (1, a)), ((0, x), (1, a), (1, x), (2, a))]
    docs = [(labels, parents)]
    assert matcher_table(matcher_of(patterns, 2), docs) == brute_table(patterns, docs) == {(0, 0): 6, (0, 1): 2, (0, 2): 6}
