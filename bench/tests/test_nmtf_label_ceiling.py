"""The decision-threshold helpers of bench/nmtf_label_ceiling.py against a brute-force search."""
import numpy
from hypothesis import given, strategies as st

from bench import nmtf_label_ceiling as ceiling


def test_threshold_by_hand():
    score = numpy.array([-2.0, -1.0, 0.5, 1.0, 3.0])
    y = numpy.array([1, 1, 0, 1, 0])
    # thresholds between -1 and 0.5 get 4 of 5 right (only the score 1.0 document is wrong), and so does
    # one between 1.0 and 3.0 (then 0.5 is wrong); the first of the two best cut points is kept, not their mean,
    # which lies in a range with 3 of 5 right
    assert ceiling.best_threshold(score, y) == -0.25
    assert ceiling.accuracy_at(score, y, numpy.median([-0.25, 2.0])) == 0.6
    assert ceiling.accuracy_at(score, y, -0.25) == 0.8
    assert ceiling.accuracy_at(numpy.array([0.0, -1e-9]), numpy.array([0, 1])) == 1.0


@given(st.lists(st.tuples(st.integers(-5, 5), st.integers(0, 1)), min_size=1, max_size=30))
def test_best_threshold_is_as_good_as_any_threshold(pairs):
    score = numpy.array([s / 2 for s, _ in pairs], dtype=float)
    y = numpy.array([c for _, c in pairs])
    best = ceiling.accuracy_at(score, y, ceiling.best_threshold(score, y))
    brute = max(numpy.mean(numpy.where(score >= b, 0, 1) == y) for b in numpy.arange(-4.0, 4.0, 0.25))
    assert best >= brute - 1e-12
