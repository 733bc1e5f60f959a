# cython: language_level=3
"""The weak learners' criteria: the value of a stump on a pattern's count groups (Iwakura's gain, real AdaBoost's
Z, BACT's gain) and the bounds that prune every supertree of a pattern."""
from libc.math cimport sqrt, fabs

from spacy_treeboost.learning._cpu cimport sqrt6, sqrt_diff

cdef enum:
    CRIT_IWAKURA = 0
    CRIT_Z = 1
    CRIT_BACT = 2


cdef inline double value(int crit, double P, double N, double Wp, double Wn) noexcept nogil:
    return value_outside(crit, P, N, outside_term(crit, Wp, Wn))


cdef inline double outside_term(int crit, double Wp, double Wn) noexcept nogil:
    """The part of `value` from the documents without the pattern (the same for every threshold)."""
    cdef double b = sqrt_diff(0.0 if Wp < 0 else Wp, 0.0 if Wn < 0 else Wn)
    if crit == CRIT_IWAKURA:
        return fabs(b)
    return b * b


cdef inline double value_outside(int crit, double P, double N, double outside) noexcept nogil:
    """`value` given its `outside_term`: the same operations in the same order."""
    cdef double a = sqrt_diff(P, N)
    if crit == CRIT_IWAKURA:
        return fabs(a) + outside
    return a * a + outside


cdef inline double clip(double x, double lo, double hi) nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef inline double bound(int crit, double Ap, double An, double Wp, double Wn, double Tp, double Tn) noexcept nogil:
    """An upper bound on the criterion value of every supertree, at every threshold.

    Ap, An: weight of positive / negative documents containing the pattern;
    Wp, Wn: weight of positive / negative documents without it; Tp, Tn: totals.
    """
    cdef double ap, an, Bp, Bn
    if crit == CRIT_BACT:
        Bp = 2 * Ap - (Tp - Tn)
        Bn = 2 * An + (Tp - Tn)
        return Bp if Bp > Bn else Bn
    if crit == CRIT_Z:
        return Tp + Tn - 2 * sqrt(Wp * Wn)
    ap = clip((Tp - An) / 2, 0, Ap)
    an = clip((Tn - Ap) / 2, 0, An)
    cdef double x[6]
    cdef double r[6]
    x[0] = ap + An
    x[1] = Wp + (Ap - ap)
    x[2] = Wn
    x[3] = Ap + an
    x[4] = Wn + (An - an)
    x[5] = Wp
    sqrt6(x, r)
    Bp = r[0] + r[1] - r[2]
    Bn = r[3] + r[4] - r[5]
    return Bp if Bp > Bn else Bn


cdef inline double max0(double x) noexcept nogil:
    return x if x > 0 else 0.0



cdef inline double tie_tol(double v) noexcept nogil:
    """How close two criterion values count as a tie."""
    return 1e-12 * (fabs(v) if fabs(v) > 1.0 else 1.0)


cdef double weight_cut(double Tp, double Tn, double threshold) noexcept nogil
