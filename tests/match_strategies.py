"""Hypothesis strategies for patterns and forests as flat arrays."""
import numpy
from hypothesis import strategies as st


@st.composite
def codes(draw, n_labels, max_size=4):
    size = draw(st.integers(1, max_size))
    code = [(0, draw(st.integers(0, n_labels - 1)))]
    for _ in range(size - 1):
        code.append((draw(st.integers(1, code[-1][0] + 1)), draw(st.integers(0, n_labels - 1))))
    return tuple(code)


def to_arrays(docs):
    labels, parents, offsets = [], [], [0]
    for lab, par in docs:
        base = offsets[-1]
        labels.extend(lab)
        parents.extend(p + base if p >= 0 else -1 for p in par)
        offsets.append(base + len(lab))
    return (numpy.array(labels, dtype=numpy.int32), numpy.array(parents, dtype=numpy.int32),
            numpy.array(offsets, dtype=numpy.int64))


def matcher_of(codes, n_labels, match_roots=True):
    """A `PatternMatcher` over codes given as tuples of (depth, label id) pairs."""
    from spacy_treeboost.models._match import PatternMatcher

    depth = numpy.array([d for code in codes for d, _ in code], dtype=numpy.int32)
    label = numpy.array([l for code in codes for _, l in code], dtype=numpy.int32)
    start = numpy.cumsum([0] + [len(code) for code in codes], dtype=numpy.int64)
    return PatternMatcher(depth, label, start, n_labels, match_roots)
