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
