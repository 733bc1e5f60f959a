"""The compiled BACT reader against the pure-Python reference reader (tests/bact_reference.py)."""
import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from spacy_treeboost.trees import BactFormatError, Forest, LabelVocab, iter_bact, read_bact

from bact_reference import read_bact_reference

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# pieces of lines: brackets, several kinds of white space, escapes (valid, invalid, not escapes), non-ASCII
PIECES = ["(", ")", "(", ")", " ", " ", "\t", "\xa0", "\u3000", "\x1c", "\x85", "\u2028", "\x0b", "a", "b", "é",
          "ROOT", "(ROOT", "+1", "-1", "%", "%2", "%28", "%20", "%C3%A9", "%FF", "%52OOT", "\x00ROOT", "\ufeff"]
tokens = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


def well_formed_line(draw_labels, n_nodes, seed, cls):
    rng = numpy.random.default_rng(seed)
    out, depth = [], 0
    for v in range(n_nodes):
        if v:
            up = int(rng.integers(0, depth))
            out.append(")" * up + rng.choice(["", " ", "\t", "\xa0"]))
            depth -= up
        out.append("(" + draw_labels[v % len(draw_labels)])
        depth += 1
    return f"{cls} " + "".join(out) + ")" * depth


label_text = st.lists(st.sampled_from(["a", "b", "é", "%", "%25", "%28x%29", "ROOT", "%C3%A9", "x%zz", "\x00ROOT"]),
                      min_size=1, max_size=3).map("".join)
good_lines = st.builds(well_formed_line, st.lists(label_text, min_size=1, max_size=5), st.integers(1, 9),
                       st.integers(0, 1000), st.sampled_from(["+1", "-1", "%", "a%20b", "x"]))
lines = st.lists(st.one_of(good_lines, good_lines, tokens, tokens.map(lambda t: "+1 " + t)), max_size=8)


def outcome(reader, source, vocab=None, add_labels=True):
    try:
        forest, classes = reader(source, vocab, add_labels=add_labels)
    except BactFormatError as err:
        return ("error", str(err))
    return ("ok", forest.labels.tolist(), forest.parents.tolist(), forest.depths.tolist(), forest.offsets.tolist(),
            forest.vocab.to_list(), classes)


# decoded label texts for a fixed vocabulary: some only reachable through escapes, some with a literal %
vocab_texts = st.lists(st.sampled_from(["a", "b", "é", "ROOT", "%", "(x)", "x%zz", "%25", "ab", "a b", "\x00ROOT"]),
                       unique=True, max_size=6)


@SETTINGS
@given(lines, st.booleans(), vocab_texts)
def test_same_forest_or_error_as_the_reference(text_lines, fixed_vocab, texts):
    vocab = LabelVocab(texts) if fixed_vocab else None
    copy = LabelVocab(vocab.to_list()[1:]) if fixed_vocab else None
    expected = outcome(read_bact_reference, text_lines, copy, add_labels=not fixed_vocab)
    assume(not (text_lines and text_lines[0].startswith("\ufeff")))
    assert outcome(read_bact, text_lines, vocab, add_labels=not fixed_vocab) == expected


# labels long enough for the reader's sixteen-byte scan, with bytes that end a label (brackets, ASCII and other
# white space) or only might (control bytes, "!" and non-ASCII letters) at any offset
long_label = st.lists(st.sampled_from(["a", "b", "~", "!", "\x7f", "\x00", "\x01", "\x1f", "é", "ǂ", "%41", " ", "\t",
                                       "\xa0", "\x85", "\u2028", "\u3000", "\u1680", "(", ")"]), max_size=40).map("".join)
long_label_lines = st.lists(st.builds(lambda labels, cls: f"{cls} " + "".join(f"({x}" for x in labels) + ")" * len(labels),
                                      st.lists(long_label, min_size=1, max_size=4), st.sampled_from(["+1", "-1"])),
                            max_size=6)


@SETTINGS
@given(long_label_lines, st.booleans())
def test_long_labels_with_a_label_end_at_any_offset_read_like_the_reference(text_lines, fixed_vocab):
    vocab = LabelVocab(["a", "b~", "é"]) if fixed_vocab else None
    copy = LabelVocab(["a", "b~", "é"]) if fixed_vocab else None
    expected = outcome(read_bact_reference, text_lines, copy, add_labels=not fixed_vocab)
    assert outcome(read_bact, text_lines, vocab, add_labels=not fixed_vocab) == expected


@SETTINGS
@given(st.lists(st.one_of(good_lines, good_lines, tokens), max_size=8), st.lists(st.sampled_from(["\n", "\r\n", "\r"]),
                                                                                min_size=8, max_size=8), st.booleans())
def test_files_with_any_line_breaks_read_like_the_reference(tmp_path_factory, text_lines, breaks, last_break):
    assume(not any(b in line for line in text_lines for b in "\n\r"))
    assume(not (text_lines and text_lines[0].startswith("\ufeff")))
    text = "".join(line + brk for line, brk in zip(text_lines, breaks))
    if not last_break and text_lines:
        text = text[: -len(breaks[len(text_lines) - 1])]
    path = tmp_path_factory.mktemp("bact") / "data.bact"
    path.write_bytes(text.encode("utf8"))
    assert outcome(read_bact, path) == outcome(read_bact_reference, path)


@SETTINGS
@given(st.lists(st.one_of(good_lines, good_lines, tokens), max_size=8), st.lists(st.sampled_from(["\n", "\r\n", "\r"]),
                                                                                min_size=8, max_size=8),
       st.booleans(), st.integers(1, 24))
def test_any_block_size_reads_like_the_reference(tmp_path_factory, text_lines, breaks, last_break, block):
    """Blocks of a few bytes put every kind of line break, and lines longer than a block, across block edges."""
    import spacy_treeboost.trees.bact as bact

    assume(not any(b in line for line in text_lines for b in "\n\r"))
    text = "".join(line + brk for line, brk in zip(text_lines, breaks))
    if not last_break and text_lines:
        text = text[: -len(breaks[len(text_lines) - 1])]
    path = tmp_path_factory.mktemp("bact") / "data.bact"
    path.write_bytes(text.encode("utf8"))
    saved = bact._CHUNK_BYTES
    bact._CHUNK_BYTES = block
    try:
        got = outcome(read_bact, path)
    finally:
        bact._CHUNK_BYTES = saved
    assert got == outcome(read_bact, path) == outcome(read_bact_reference, path)


def test_large_file_is_read_in_blocks_like_the_reference(tmp_path):
    rng = numpy.random.default_rng(3)
    words = [f"w{i}" for i in range(500)] + ["é", "a%20b"]
    lines = [f"{'+1' if i % 3 else '-1'} (ROOT" + "".join(f"({words[int(rng.integers(len(words)))]}" for _ in range(k))
             + ")" * k + ")" for i, k in enumerate(rng.integers(1, 400, 3000))]
    path = tmp_path / "big.bact"
    path.write_bytes("\r\n".join(lines).encode("utf8"))
    assert path.stat().st_size > 3 * (1 << 20)
    assert outcome(read_bact, path) == outcome(read_bact_reference, path)
    batches = list(iter_bact(path, LabelVocab(), add_labels=True, batch_size=500))
    assert len(batches) > 2 and all(len(f) >= 500 for f, _ in batches[:-1])
    whole, classes = read_bact(path)
    joined = Forest(*[numpy.concatenate([getattr(f, k) if k != "parents" else
                                         numpy.where(f.parents < 0, -1, f.parents + sum(g.n_nodes for g, _ in batches[:i]))
                                         for i, (f, _) in enumerate(batches)]) for k in ("labels", "parents", "depths")],
                    numpy.concatenate([[0]] + [f.offsets[1:] + sum(g.n_nodes for g, _ in batches[:i])
                                               for i, (f, _) in enumerate(batches)]), whole.vocab)
    assert joined.labels.tolist() == whole.labels.tolist()
    assert joined.parents.tolist() == whole.parents.tolist()
    assert joined.offsets.tolist() == whole.offsets.tolist()
    assert sum((c for _, c in batches), []) == classes


def test_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "bom.bact"
    path.write_bytes(b"\xef\xbb\xbf+1 (ROOT(a))\r\n-1 (ROOT(b))\r\n")
    forest, classes = read_bact(path)
    assert classes == ["+1", "-1"]
    assert [forest.vocab[i] for i in forest.labels[[1, 3]]] == ["a", "b"]
    assert read_bact(["\ufeff+1 (ROOT(a))"])[1] == ["+1"]


@pytest.mark.parametrize("data, line", [(b"+1 (ROOT(a))\n-1 (ROOT(\xe9t\xe9))\n", 2), (b"\xff+1 (ROOT)\n", 1),
                                        (b"+1 (ROOT)\r\n\r\n+1 (ROOT(\xed\xa0\x80))", 3)])
def test_bytes_that_are_not_utf8_name_file_and_line(tmp_path, data, line):
    path = tmp_path / "latin1.bact"
    path.write_bytes(data)
    with pytest.raises(BactFormatError, match=rf"latin1\.bact: line {line}: byte \d+ .* is not UTF-8"):
        read_bact(path)


def test_iter_bact_keeps_every_document_and_the_vocabulary():
    lines = [f"+1 (ROOT(w{i % 7})(x))" for i in range(25)] + ["", "-1 (ROOT(new))"]
    vocab = LabelVocab(["x"] + [f"w{i}" for i in range(7)])
    batches = list(iter_bact(lines, vocab, batch_size=10))
    assert sum(len(f) for f, _ in batches) == 26
    assert batches[-1][0].labels.tolist()[-1] == -1
    assert len(vocab) == 9
    with pytest.raises(ValueError, match="batch_size"):
        next(iter_bact(lines, vocab, batch_size=0))


def test_arrays_handed_over_by_the_parser_are_independent_writable_and_outlive_it(tmp_path):
    path = tmp_path / "t.tree"
    path.write_text("".join(f"+1 (ROOT(a{i % 5}(b))(c))\n" for i in range(3000)), encoding="utf8")
    reference = read_bact_reference(path.read_text(encoding="utf8").splitlines())[0]
    batches = [f for f, _ in iter_bact(path.read_text(encoding="utf8").splitlines(), LabelVocab(), add_labels=True,
                                       batch_size=700)]
    assert len(batches) == 3
    seen = set()
    for forest in batches:
        for name in ("labels", "parents", "depths"):
            array = getattr(forest, name)
            assert array.dtype == numpy.int32 and array.flags.writeable and array.flags.c_contiguous
            assert array.ctypes.data not in seen
            seen.add(array.ctypes.data)
    labels = numpy.concatenate([f.labels for f in batches])
    assert labels.tolist() == reference.labels.tolist()
    batches[0].labels[:] = -7
    assert batches[1].labels.min() >= 0
    forest, _ = read_bact(path)
    del batches
    assert forest.labels.tolist() == reference.labels.tolist()
    assert forest.parents.tolist() == reference.parents.tolist()


@pytest.mark.parametrize("texts", [["%25", "%", "(x)", "ROOT"], ["%25"], ["x%zz", "a"]])
def test_a_fixed_vocabulary_maps_escaped_spellings_by_their_text(texts):
    lines = ["+1 (ROOT(%25)(%2525)(%28x%29)(x%zz)(ROOT)(a))", "-1 (%52OOT(%25(a)))"]
    expected = outcome(read_bact_reference, lines, LabelVocab(texts), add_labels=False)
    assert outcome(read_bact, lines, LabelVocab(texts), add_labels=False) == expected


def test_a_fixed_vocabulary_that_grows_between_batches_is_seen_by_the_next_batch():
    vocab = LabelVocab(["a"])
    lines = ["+1 (ROOT(a(b)))"] * 1024 + ["-1 (ROOT(b(a)))"]  # lines are parsed 1,024 at a time
    batches = iter_bact(lines, vocab, add_labels=False, batch_size=1024)
    first, _ = next(batches)
    assert first.labels.tolist()[:3] == [0, vocab.get("a"), -1] and len(first) == 1024
    b = vocab.add("b")
    second, _ = next(batches)
    assert second.labels.tolist() == [0, b, vocab.get("a")]


def test_long_labels_that_differ_only_in_length_or_late_bytes_are_distinct():
    a = "x" * 70_000
    labels = [a, a + "x", a[:-1] + "y", "y" * 9, "y" * 10, a, "y" * 9]
    line = "+1 (ROOT" + "".join(f"({t})" for t in labels) + ")"
    forest, _ = read_bact([line, line])
    ids = forest.labels[1:len(labels) + 1].tolist()
    assert [forest.vocab[i] for i in ids] == labels
    assert forest.labels[len(labels) + 2:].tolist() == ids
