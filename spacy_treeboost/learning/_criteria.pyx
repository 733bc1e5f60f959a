# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The weak learners' criteria and bounds (`_criteria.pxd`), their cut by pattern weight, and their Python forms
for the tests and the boosting backends."""
from libc.math cimport sqrt
from libc.stdint cimport uint64_t
from libcpp.vector cimport vector

from spacy_treeboost.learning._radix cimport sort_decreasing

import numpy

CRITERIA = {"iwakura": CRIT_IWAKURA, "z": CRIT_Z, "bact": CRIT_BACT}


cdef double WEIGHT_SLACK = 1e-12


cdef inline double weight_bound(double S, double Tp, double Tn) noexcept nogil:
    """An upper bound on the iwakura `bound` of a pattern of weight S = Ap + An, increasing in S.

    Each term of Bp = sqrt(ap + An) + sqrt(Wp + Ap - ap) - sqrt(Wn) is bounded by one of S alone:
    ap + An <= S, Wp + Ap <= Tp and Wn >= Tn - S (An <= S); likewise Bn. WEIGHT_SLACK, far above the
    rounding of the sums, keeps the bound above the one computed from the sums.
    """
    cdef double root = sqrt(S)
    cdef double Bp = root + sqrt(Tp + WEIGHT_SLACK) - sqrt(max0(Tn - S - WEIGHT_SLACK))
    cdef double Bn = root + sqrt(Tn + WEIGHT_SLACK) - sqrt(max0(Tp - S - WEIGHT_SLACK))
    return Bp if Bp > Bn else Bn


cdef double weight_cut(double Tp, double Tn, double threshold) noexcept nogil:
    """The largest S (by bisection) with weight_bound(S) < threshold, or -1 when weight_bound(0) reaches it.

    weight_bound is non-decreasing in S in floating point too (sqrt is correctly rounded), so every S
    at or below the result has weight_bound(S) < threshold.
    """
    cdef double lo = 0.0, hi = Tp + Tn + 1.0, mid
    cdef int k
    if not weight_bound(lo, Tp, Tn) < threshold:
        return -1.0
    for k in range(64):
        mid = 0.5 * (lo + hi)
        if weight_bound(mid, Tp, Tn) < threshold:
            lo = mid
        else:
            hi = mid
    return lo


def py_weight_bound(double S, double Tp, double Tn) -> float:
    """`weight_bound`: a bound on the iwakura pruning bound from the pattern's weight S = Ap + An alone."""
    return weight_bound(S, Tp, Tn)


def py_weight_cut(double Tp, double Tn, double threshold) -> float:
    """`weight_cut`: patterns of weight at most this are pruned below `threshold` without their bound."""
    return weight_cut(Tp, Tn, threshold)


def py_bound(str criterion, double Ap, double An, double Tp, double Tn) -> float:
    """The pruning bound for a pattern with positive/negative weight Ap/An inside its documents."""
    return bound(CRITERIA[criterion], Ap, An, max0(Tp - Ap), max0(Tn - An), Tp, Tn)


def tie_tolerance(double v) -> float:
    """How close two criterion values count as a tie (the search's `_tol`)."""
    return tie_tol(v)


def py_value(str criterion, double P, double N, double Wp, double Wn) -> float:
    """The selection value of a stump with blocks (P, N) and (W-not+, W-not-)."""
    return value(CRITERIA[criterion], P, N, Wp, Wn)


def py_sort_decreasing(values) -> numpy.ndarray:
    """`sort_decreasing`, the sort of the bounds by support: float64 values, finite and not negative, in decreasing
    order (-0.0 as 0.0)."""
    cdef vector[double] v = numpy.ascontiguousarray(values, dtype=numpy.float64)
    cdef vector[uint64_t] keys, scratch
    sort_decreasing(v, keys, scratch)
    return numpy.array(v, dtype=numpy.float64)
