# cython: language_level=3
"""The weak learners' criteria (Iwakura's gain, real AdaBoost's Z, BACT's gain) and the bounds that prune every
supertree of a pattern."""
from libc.math cimport sqrt, fabs

from spacy_treeboost.learning._cpu cimport sqrt6, sqrt_diff

cdef enum:
    CRIT_IWAKURA = 0
    CRIT_Z = 1
    CRIT_BACT = 2


cdef inline double value(int crit, double P, double N, double Wp, double Wn) noexcept nogil:
    """The selection value of a stump with blocks (P, N) and (Wp, Wn)."""
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
    """An upper bound on the value of every supertree at every threshold, from the positive and negative weight
    inside the pattern's documents (Ap, An), outside them (Wp, Wn) and in all (Tp, Tn)."""
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


cdef inline double weight_bound(double S, double Tp, double Tn) noexcept nogil:
    """An upper bound, increasing in S, on the iwakura `bound` of a pattern of weight S = Ap + An: in
    Bp = sqrt(ap + An) + sqrt(Wp + Ap - ap) - sqrt(Wn), ap + An <= S, Wp + Ap <= Tp and Wn >= Tn - S; likewise Bn.
    The slack, far above the rounding of the sums, keeps it above the bound computed from the sums."""
    cdef double slack = 1e-12, root = sqrt(S)
    cdef double Bp = root + sqrt(Tp + slack) - sqrt(max0(Tn - S - slack))
    cdef double Bn = root + sqrt(Tn + slack) - sqrt(max0(Tp - S - slack))
    return Bp if Bp > Bn else Bn


cdef inline double weight_cut(double Tp, double Tn, double threshold) noexcept nogil:
    """The largest S (by bisection) with weight_bound(S) < threshold, or -1 when weight_bound(0) reaches it; as
    sqrt is correctly rounded, every smaller S is below the threshold too."""
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
