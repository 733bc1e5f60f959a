import re

import numpy
import pytest
import spacy
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from spacy_treeboost.trees._preorder import dependency_preorder
from spacy_treeboost.trees.doc_trees import DocIndexer, TreeSpec, _skip_tokens, docs_to_forest, join_label, split_label
from spacy_treeboost.trees.forest import ROOT_LABEL
from spacy_treeboost.trees.bact import tree_to_sexpr

WORDS = ["a", "b", "c", ",", ".", "not", "good", "x|y", "x\\|y", "\\"]
VOCAB = spacy.blank("en").vocab


@st.composite
def parsed_docs(draw, max_docs=4, max_tokens=12):
    """Random docs with random projective-or-not dependency trees and sentence boundaries."""
    docs = []
    for _ in range(draw(st.integers(1, max_docs))):
        n = draw(st.integers(0, max_tokens))
        words = [draw(st.sampled_from(WORDS)) for _ in range(n)]
        heads, deps, starts = [], [], []
        i = 0
        while i < n:
            length = draw(st.integers(1, n - i))
            root = i + draw(st.integers(0, length - 1))
            for j in range(i, i + length):
                if j == root:
                    heads.append(j)
                    deps.append("ROOT")
                else:
                    # attach to an earlier token of the sentence or the root: always a tree
                    heads.append(draw(st.sampled_from([root] + [k for k in range(i, j) if k != root])) if j > i else root)
                    deps.append("dep")
                starts.append(j == i)
            i += length
        docs.append(Doc(VOCAB, words=words, heads=heads or None, deps=deps or None, sent_starts=starts or None))
    return docs


def reference_tree(doc, spec):
    """Direct, recursive construction from the token objects."""
    if spec.tree_mode == "chain+dependency":
        chain = reference_tree(doc, TreeSpec("chain", spec.node_attrs, spec.skip_flags))
        dep = reference_tree(doc, TreeSpec("dependency", spec.node_attrs, spec.skip_flags))
        return chain[:-1] + re.sub(r"\((?!ROOT)", "(dep:", dep[len("(ROOT"):])
    skip = lambda t: any(getattr(t, f.lower()) for f in spec.skip_flags)
    escape = lambda v: re.sub(r"([|\\])", r"\\\1", v) if len(spec.node_attrs) > 1 else v
    label = lambda t: "|".join(escape(str(getattr(t, a.lower() + "_"))) for a in spec.node_attrs)
    if spec.tree_mode == "chain":
        parts = []
        for sent in (doc.sents if doc.has_annotation("SENT_START") else [doc[:]]):
            toks = [t for t in sent if not skip(t)]
            if toks:
                parts.append("".join("(" + label(t) for t in toks) + ")" * len(toks))
        return "(ROOT" + "".join(parts) + ")"

    def kept_children(t):
        out = []
        for c in t.children:
            out.extend(kept_children(c) if skip(c) else [c])
        return sorted(out, key=lambda c: c.i)

    def render(t):
        return "(" + label(t) + "".join(render(c) for c in kept_children(t)) + ")"

    roots = []
    for t in doc:
        if t.head.i == t.i:
            roots.extend(kept_children(t) if skip(t) else [t])
    return "(ROOT" + "".join(render(t) for t in sorted(roots, key=lambda t: t.i)) + ")"


@settings(max_examples=60, deadline=None)
@given(parsed_docs(), st.sampled_from(["chain", "dependency", "chain+dependency"]),
       st.sampled_from([["IS_SPACE"], ["IS_PUNCT"]]),
       st.sampled_from([["LOWER"], ["LOWER", "DEP"]]))
def test_trees_equal_a_direct_construction(docs, mode, skip, attrs):
    spec = TreeSpec(mode, attrs, skip)
    forest = docs_to_forest(docs, spec)
    for i, doc in enumerate(docs):
        assert tree_to_sexpr(forest, i) == reference_tree(doc, spec)
    # the fast indexer lays out the same trees with the same labels
    idx = DocIndexer(spec, forest.vocab.to_list(), VOCAB.strings)
    labels, parents, offsets = idx.arrays(docs)
    assert numpy.array_equal(offsets, forest.offsets)
    assert numpy.array_equal(parents, forest.parents)
    assert numpy.array_equal(labels, numpy.where(forest.labels == 0, 0, forest.labels))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="ab|\\%", max_size=5), min_size=1, max_size=4),
       st.lists(st.text(alphabet="ab|\\%", max_size=5), min_size=1, max_size=4))
def test_joined_labels_split_back_exactly(values, other):
    assert split_label(join_label(values)) == values
    assert (join_label(values) == join_label(other)) == (values == other)


@pytest.mark.parametrize("mode", ["chain", "dependency", "chain+dependency"])
def test_rows_of_several_attributes_get_their_own_labels(mode):
    """Rows of several attribute values are looked up exactly (unknown rows: -1)."""
    docs = [Doc(VOCAB, words=w, heads=[0] + [0] * (len(w) - 1), deps=["ROOT"] + ["dep"] * (len(w) - 1))
            for w in (["a", "b", "c"], ["c", "x|y", "a"])]
    spec = TreeSpec(mode, ["LOWER", "DEP"])
    forest = docs_to_forest(docs[:1], spec)
    labels, _, _ = DocIndexer(spec, forest.vocab.to_list(), VOCAB.strings).arrays(docs)
    get = forest.vocab.get
    expected = [0, get("a|ROOT"), get("b|dep"), get("c|dep"), 0, get("c|ROOT"), -1, get("a|dep")]
    if mode == "chain+dependency":
        dep = [get("dep:a|ROOT"), get("dep:b|dep"), get("dep:c|dep")]
        expected = expected[:4] + dep + expected[4:] + [get("dep:c|ROOT"), -1, get("dep:a|dep")]
    assert -1 not in expected[:4] and None not in expected
    assert labels.tolist() == expected


@pytest.mark.parametrize("kwargs", [{"node_attrs": ["IS_PUNCT"]}, {"node_attrs": ["NOPE"]}, {"node_attrs": []},
                                    {"skip_flags": ["LOWER"]}, {"tree_mode": "bag"}])
def test_bad_specs(kwargs):
    with pytest.raises(ValueError):
        TreeSpec(**kwargs)


def test_unknown_labels_are_minus_one():
    spec = TreeSpec("chain")
    train = docs_to_forest([Doc(VOCAB, words=["a", "b"])], spec)
    idx = DocIndexer(spec, train.vocab.to_list(), VOCAB.strings)
    labels, _, _ = idx.arrays([Doc(VOCAB, words=["b", "zzz", "a"])])
    assert labels.tolist() == [0, train.vocab.get("b"), -1, train.vocab.get("a")]
    assert train.vocab[0] == ROOT_LABEL


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-1, 30), min_size=0, max_size=30))
def test_dependency_preorder_against_recursive_layout(raw):
    n = len(raw)
    heads = [h if h < i else -1 for i, h in enumerate(raw)]  # earlier heads only: no cycles
    order, parents = dependency_preorder(numpy.array(heads, dtype=numpy.int32))
    expected, exp_parents = [], [-1]

    def visit(v, parent_pos):
        expected.append(v)
        exp_parents.append(parent_pos)
        me = len(expected)
        for c in range(n):
            if heads[c] == v:
                visit(c, me)

    for r in range(n):
        if heads[r] == -1:
            visit(r, 0)
    assert order.tolist() == expected and parents.tolist() == exp_parents


def test_dependency_preorder_rejects_cycles_and_bad_heads():
    with pytest.raises(ValueError, match="cycle"):
        dependency_preorder(numpy.array([1, 0], dtype=numpy.int32))
    with pytest.raises(ValueError, match="invalid head"):
        dependency_preorder(numpy.array([5], dtype=numpy.int32))


def test_a_10000_token_sentence_needs_no_recursion():
    n = 10000
    doc = Doc(VOCAB, words=["w"] * n, heads=[max(i - 1, 0) for i in range(n)], deps=["ROOT"] + ["dep"] * (n - 1))
    for mode in ("chain", "dependency"):
        forest = docs_to_forest([doc], TreeSpec(mode))
        assert forest.n_nodes == n + 1 and forest.depths.max() == n


def test_skip_tokens_reattaches_to_nearest_kept_ancestor():
    heads = numpy.array([-1, 0, 1, 2, 0])
    keep = numpy.array([True, False, False, True, True])
    assert _skip_tokens(heads, keep).tolist() == [-1, 0, 0, 0, 0]
