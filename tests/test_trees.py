"""Forests in preorder arrays and the BACT file format."""
import io
import os
import sys
import tempfile

import numpy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference import arrays_to_nested, depths_of, forest_docs, forests, nested_to_arrays
from spacy_treeboost.trees.forest import ROOT_LABEL, Forest, ForestBuilder, LabelVocab, release_pages
from spacy_treeboost.trees.bact import BactFormatError, decode_label, encode_label, read_bact, write_bact

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Characters that need care: white space of several kinds, brackets, percent signs (also ones
# that look like escapes), non-ASCII letters and a line separator.
AWKWARD = [" ", "\t", "\n", "\r", "\u00a0", "\u2028", "(", ")", "%", "%2", "%41", "%%", "é", "中", "a", "b", "+1", "ROOT"]
awkward_labels = st.lists(st.sampled_from(AWKWARD), min_size=1, max_size=4).map("".join)


def label_strings(forest):
    return [forest.vocab[int(x)] for x in forest.labels]


def assert_same_documents(f1, f2):
    """Same documents: node label strings, local parents and depths of every document."""
    assert len(f1) == len(f2)
    assert numpy.array_equal(f1.offsets, f2.offsets)
    assert label_strings(f1) == label_strings(f2)
    assert numpy.array_equal(f1.parents, f2.parents)
    assert numpy.array_equal(f1.depths, f2.depths)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pages are given back on Linux only")
def test_release_pages_zeroes_the_whole_pages_inside_an_array_and_nothing_else():
    import mmap

    page = mmap.PAGESIZE
    whole = numpy.arange(8 * page, dtype=numpy.int64)
    view = whole[page // 2 + 3:6 * page]
    base = whole.ctypes.data
    start = -(-view.ctypes.data // page) * page
    end = (view.ctypes.data + view.nbytes) // page * page
    assert release_pages(view) == end - start > 0
    released = numpy.zeros(len(whole), dtype=bool)
    released[(start - base) // 8:(end - base) // 8] = True
    assert not whole[released].any()
    assert numpy.array_equal(whole[~released], numpy.arange(8 * page)[~released])
    assert release_pages(numpy.arange(10)) == 0


def test_from_trees_arrays():
    f = Forest.from_trees([("ROOT", (("a", (("b", ()),)), ("c", ()))), ("ROOT", (("b", ()),))])
    assert f.offsets.tolist() == [0, 4, 6]
    assert f.vocab.to_list() == [ROOT_LABEL, "a", "b", "c"]
    assert f.labels.tolist() == [0, 1, 2, 3, 0, 2]
    assert f.parents.tolist() == [-1, 0, 1, 0, -1, 4]
    assert f.depths.tolist() == [0, 1, 2, 1, 0, 1]
    assert f.labels.dtype == numpy.int32 and f.parents.dtype == numpy.int32 and f.offsets.dtype == numpy.int64
    assert len(f) == 2 and f.n_nodes == 6 and numpy.diff(f.offsets).tolist() == [4, 2]


def test_from_sentences_builds_chains_under_the_virtual_root():
    f = Forest.from_sentences([[["a", "b", "c"], [], ["b"]], [], [["c", "c"]]])
    expected = Forest.from_trees([
        ("ROOT", (("a", (("b", (("c", ()),)),)), ("b", ()))),
        ("ROOT", ()),
        ("ROOT", (("c", (("c", ()),)),)),
    ])
    assert_same_documents(f, expected)


def test_labeled_root_is_not_the_virtual_root():
    f = Forest.from_trees([("S", (("ROOT", ()),))])
    assert label_strings(f) == ["S", "ROOT"]
    assert f.labels[0] != 0 and f.labels[1] != 0


@SETTINGS
@given(forests(st, max_docs=6))
def test_arrays_match_the_nested_trees(data):
    trees, _ = data
    f = Forest.from_trees(trees)
    for i, (labels, parents) in enumerate(forest_docs(f)):
        ref_labels, ref_parents = nested_to_arrays(trees[i])
        assert [f.vocab[x] for x in labels][1:] == ref_labels[1:]
        assert (labels[0] == 0) == (ref_labels[0] == "ROOT")
        assert parents == ref_parents
        lo = int(f.offsets[i])
        assert f.depths[lo:lo + len(labels)].tolist() == depths_of(parents)


@SETTINGS
@given(forests(st, max_docs=6))
def test_tree_round_trips_through_from_trees(data):
    trees, _ = data
    f = Forest.from_trees(trees)
    again = Forest.from_trees([f.tree(i) for i in range(len(f))])
    assert_same_documents(f, again)
    for i, (labels, parents) in enumerate(forest_docs(f)):
        assert f.tree(i) == arrays_to_nested([f.vocab[x] for x in labels], parents)


@SETTINGS
@given(forests(st, max_docs=6), st.data())
def test_subset(data, draw):
    trees, _ = data
    f = Forest.from_trees(trees)
    idx = draw.draw(st.lists(st.integers(0, len(f) - 1), max_size=8))
    sub = f.subset(idx)
    assert_same_documents(sub, Forest.from_trees([f.tree(i) for i in idx]))


@SETTINGS
@given(st.lists(st.tuples(awkward_labels, st.integers(1, 7), st.integers(0, 10_000)), min_size=1, max_size=6),
       st.lists(awkward_labels, min_size=1, max_size=6), st.booleans())
def test_bact_round_trip_with_awkward_labels(docs, classes, to_file):
    """Random trees whose node and class labels contain spaces, brackets, % and non-ASCII."""
    trees = []
    pool = sorted({lab for lab, _, _ in docs})
    for k, (root_label, n, seed) in enumerate(docs):
        rng = numpy.random.default_rng(seed)
        parents, path = [-1], [0]
        for v in range(1, n):
            d = int(rng.integers(1, len(path) + 1))
            del path[d:]
            parents.append(path[-1])
            path.append(v)
        labels = [root_label if k % 2 else "ROOT"] + [pool[int(rng.integers(len(pool)))] for _ in range(n - 1)]
        trees.append(arrays_to_nested(labels, parents))
    f = Forest.from_trees(trees)
    cls = [classes[i % len(classes)] for i in range(len(f))]
    buf = io.StringIO()
    write_bact(buf, f, cls)
    text = buf.getvalue()
    assert text.count("\n") == len(f)  # one line per example, whatever the labels contain
    if to_file:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "data.bact")
            write_bact(path, f, cls)
            g, cls2 = read_bact(path)
    else:
        g, cls2 = read_bact(io.StringIO(text))
    assert cls2 == cls
    assert_same_documents(f, g)


@given(awkward_labels)
def test_encode_decode_label(label):
    enc = encode_label(label)
    assert not any(ch.isspace() or ch in "()" for ch in enc)
    assert decode_label(enc) == label


def test_encoding_examples():
    assert encode_label("a b(c)%") == "a%20b%28c%29%25"
    assert decode_label("%C3%A9t%C3%A9") == "été"
    f, cls = read_bact(["+1 (ROOT(a%20b(%28x%29))(%25))", "n%20eg (ROOT)"])
    assert cls == ["+1", "n eg"]
    assert label_strings(f) == [ROOT_LABEL, "a b", "(x)", "%", ROOT_LABEL]
    assert f.parents.tolist() == [-1, 0, 1, 0, -1]


def test_write_format():
    f = Forest.from_trees([("ROOT", (("a", (("b", ()),)), ("c d", ())))])
    buf = io.StringIO()
    write_bact(buf, f, ["+1"])
    assert buf.getvalue() == "+1 (ROOT(a(b))(c%20d))\n"


def test_reader_accepts_white_space_between_nodes_and_blank_lines():
    f, cls = read_bact(["", "+1 (ROOT (a (b)) (c))", "   ", "-1 (ROOT)"])
    assert cls == ["+1", "-1"]
    assert label_strings(f) == [ROOT_LABEL, "a", "b", "c", ROOT_LABEL]


@pytest.mark.parametrize("bad", [
    "+1",                      # no tree
    "+1 ROOT(a)",              # tree does not start with '('
    "+1 (ROOT(a)",             # unclosed
    "+1 (ROOT))",              # unbalanced
    "+1 (ROOT)(a)",            # two trees
    "+1 ()",                   # empty label
    "+1 (ROOT()(a))",          # empty child label
    "+1 (ROOT(a)x)",           # text outside brackets
    "(ROOT(a))",               # no class label
])
@pytest.mark.parametrize("position", [1, 4])
def test_malformed_line_names_its_line_number(bad, position):
    lines = ["+1 (ROOT(a))", "", "-1 (ROOT(b))"][: position - 1] + [bad]
    with pytest.raises(BactFormatError, match=rf"line {position}\b"):
        read_bact(lines)


def test_malformed_file_names_the_path(tmp_path):
    path = tmp_path / "broken.bact"
    path.write_text("+1 (ROOT(a))\n-1 (ROOT(a)\n", encoding="utf8")
    with pytest.raises(BactFormatError, match=r"broken\.bact.*line 2"):
        read_bact(path)


@pytest.mark.parametrize("line", ["-1 (ROOT(a%FF))", "%FF (ROOT(a))", "-1 (ROOT(%C3))"])
def test_invalid_percent_escape_is_a_format_error(line):
    """Escapes that are not UTF-8 are format errors with the line number (a regression test)."""
    with pytest.raises(BactFormatError, match=r"line 2\b"):
        read_bact(["+1 (ROOT(a))", line])


def test_empty_label_round_trip():
    f = Forest.from_trees([("ROOT", (("", ()), ("a", ())))])
    buf = io.StringIO()
    write_bact(buf, f, ["+1"])
    g, _ = read_bact(io.StringIO(buf.getvalue()))
    assert_same_documents(f, g)


def test_empty_file(tmp_path):
    path = tmp_path / "empty.bact"
    path.write_text("", encoding="utf8")
    f, cls = read_bact(path)
    assert len(f) == 0 and cls == [] and f.n_nodes == 0
    from spacy_treeboost.learning.learner import TreeBoostClassifier
    with pytest.raises(ValueError, match="empty"):
        TreeBoostClassifier("frequency", n_rounds=1).fit(f, cls)


def test_unknown_labels_with_a_fixed_vocabulary():
    train, _ = read_bact(["+1 (ROOT(a(b)))"])
    test, _ = read_bact(["-1 (ROOT(a)(zz)(b))"], train.vocab, add_labels=False)
    assert test.labels.tolist() == [0, train.vocab.get("a"), -1, train.vocab.get("b")]
    assert len(train.vocab) == 3


def test_write_checks_the_number_of_classes():
    f = Forest.from_sentences([[["a"]], [["b"]]])
    with pytest.raises(ValueError):
        write_bact(io.StringIO(), f, ["+1"])


def test_builder_rejects_non_preorder_parents():
    b = ForestBuilder()
    with pytest.raises(ValueError):
        b.add_arrays(numpy.array([0, 1, 2]), numpy.array([-1, 2, 0]))
    with pytest.raises(ValueError):
        b.add_arrays(numpy.array([0, 1]), numpy.array([0, 0]))
    with pytest.raises(ValueError):
        b.add_arrays(numpy.array([], dtype=numpy.int32), numpy.array([], dtype=numpy.int64))


def test_vocab_from_list_checks():
    assert LabelVocab.from_list([ROOT_LABEL, "x", "y"]).to_list() == [ROOT_LABEL, "x", "y"]
    with pytest.raises(ValueError):
        LabelVocab.from_list(["x"])
    with pytest.raises(ValueError):
        LabelVocab.from_list([ROOT_LABEL, "x", "x"])


def test_non_string_label_is_rejected():
    with pytest.raises(TypeError):
        Forest.from_trees([("ROOT", ((3, ()),))])


def test_ten_thousand_deep_chain_survives_every_conversion():
    """A 10,000-token sentence is a chain 10,000 deep; nothing may recurse per level."""
    words = [f"w{i % 7}" for i in range(10_000)]
    f = Forest.from_sentences([[words], [["w1", "w2"]]])
    assert f.depths.max() == 10_000
    assert f.parents[1:10_001].tolist() == list(range(10_000))
    buf = io.StringIO()
    write_bact(buf, f, ["+1", "-1"])
    g, cls = read_bact(io.StringIO(buf.getvalue()))
    assert cls == ["+1", "-1"]
    assert_same_documents(f, g)
    # tree(i) gives a 10,001-level nested tuple; compare through arrays, not tuple equality.
    h = Forest.from_trees([f.tree(0), f.tree(1)])
    assert_same_documents(f, h)
    assert_same_documents(f.subset([0, 1]), f)


@SETTINGS
@given(st.lists(st.integers(0, 10**6), max_size=60), st.sampled_from([numpy.int32, numpy.int64]))
def test_preorder_depths_match_walking_up_the_parents(draws, dtype):
    from spacy_treeboost.trees import preorder_depths

    parents = [-1] + [d % (v + 1) if d % 5 else -1 for v, d in enumerate(draws)]
    assert preorder_depths(numpy.asarray(parents, dtype=dtype)).tolist() == depths_of(parents)


def test_depths_are_computed_when_first_read_and_preorder_is_checked():
    from spacy_treeboost.trees import preorder_depths

    f = Forest.from_trees([("ROOT", (("a", (("b", ()),)), ("c", ())))])
    lazy = Forest(f.labels, f.parents, None, f.offsets, f.vocab)
    assert lazy._depths is None
    assert lazy.depths.tolist() == [0, 1, 2, 1] and lazy.depths is lazy.depths
    with pytest.raises(ValueError, match="node 1 has parent 2; nodes must be in preorder"):
        preorder_depths(numpy.asarray([-1, 2, 0]))
