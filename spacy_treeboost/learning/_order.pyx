# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The orders of the subtree-linear learner's columns and rules: by document frequency (a counting sort) and by
decreasing weight magnitude (a stable radix sort on 11-bit digits, in pieces on threads)."""
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy, memset

import numpy


def order_by_count(const int64_t[::1] df):
    """numpy.argsort(-df, kind="stable") for non-negative int64 df, and its inverse permutation, by a counting sort."""
    cdef Py_ssize_t n = df.shape[0], i
    cdef int64_t top = 0, v, total = 0, c
    cdef bint negative = False
    with nogil:
        for i in range(n):
            if df[i] < 0:
                negative = True
                break
            if df[i] > top:
                top = df[i]
    if negative:
        raise ValueError(f"df must not be negative (entry {i} is {df[i]})")
    starts = numpy.zeros(top + 2, dtype=numpy.int64)
    order_out = numpy.empty(n, dtype=numpy.int64)
    inverse_out = numpy.empty(n, dtype=numpy.int64)
    cdef int64_t[::1] start = starts, order = order_out, inverse = inverse_out
    with nogil:
        for i in range(n):
            start[top - df[i]] += 1
        for v in range(top + 1):
            c = start[v]
            start[v] = total
            total += c
        for i in range(n):
            c = start[top - df[i]]
            start[top - df[i]] = c + 1
            order[c] = i
            inverse[i] = c
    return order_out, inverse_out


def order_by_magnitude(const double[::1] w, run=None, Py_ssize_t pieces=1):
    """numpy.argsort(-numpy.abs(w), kind="stable") by a radix sort of the complements of the magnitudes' bits; None
    when w holds a value that is not finite.

    run (Optional[Callable]): `ThreadTeam.map`, to sort w in `pieces` contiguous pieces on its threads (each pass
        counts every piece's digits first, so the order is the same for any number of pieces).
    pieces (int): The number of pieces (1 without `run`).
    """
    cdef Py_ssize_t n = w.shape[0], k
    cdef int shift, digit
    cdef int64_t total, c
    if run is None or n < 2:
        run, pieces = (lambda work, items: [work(item) for item in items]), 1
    pieces = max(1, min(pieces, n))
    bounds = [(n * k // pieces, n * (k + 1) // pieces) for k in range(pieces)]
    keys, other_keys = numpy.empty(n, dtype=numpy.uint64), numpy.empty(n, dtype=numpy.uint64)
    order, other_order = numpy.empty(n, dtype=numpy.int64), numpy.empty(n, dtype=numpy.int64)
    if not all(run(lambda b: _magnitude_keys(w, keys, b[0], b[1]), bounds)):
        return None
    counts = numpy.zeros((pieces, 2048), dtype=numpy.int64)
    cdef int64_t[:, ::1] cv = counts
    src, dst, src_order, dst_order, first = keys, other_keys, order, other_order, True
    for shift in range(0, 64, 11):
        run(lambda k: _digit_counts(src, bounds[k][0], bounds[k][1], shift, counts[k]), range(pieces))
        if n == 0 or counts[:, (int(src[0]) >> shift) & 0x7FF].sum() == n:
            continue
        total = 0
        for digit in range(2048):
            for k in range(pieces):
                c = cv[k, digit]
                cv[k, digit] = total
                total += c
        run(lambda k: _scatter_digits(src, src_order, first, bounds[k][0], bounds[k][1], shift, counts[k], dst,
                                      dst_order), range(pieces))
        src, dst, src_order, dst_order, first = dst, src, dst_order, src_order, False
    if first:
        return numpy.arange(n, dtype=numpy.int64)
    return src_order


def _magnitude_keys(const double[::1] w, uint64_t[::1] keys, Py_ssize_t lo, Py_ssize_t hi) -> bool:
    """keys[i] = the complement of |w[i]|'s bits for i in range(lo, hi); False at the first value not finite."""
    cdef Py_ssize_t i
    cdef uint64_t bits, mask = 0x7FFFFFFFFFFFFFFF, exponent = 0x7FF0000000000000
    cdef bint finite = True
    with nogil:
        for i in range(lo, hi):
            memcpy(&bits, &w[i], 8)
            if bits & exponent == exponent:
                finite = False
                break
            keys[i] = ~bits & mask
    return finite


def _digit_counts(const uint64_t[::1] keys, Py_ssize_t lo, Py_ssize_t hi, int shift, int64_t[::1] counts) -> None:
    """counts[d] = how many of keys[lo:hi] have digit d (11 bits) at `shift`."""
    cdef Py_ssize_t i
    with nogil:
        memset(&counts[0], 0, 2048 * sizeof(int64_t))
        for i in range(lo, hi):
            counts[(keys[i] >> shift) & 0x7FF] += 1


def _scatter_digits(const uint64_t[::1] src, const int64_t[::1] src_order, bint identity, Py_ssize_t lo,
                    Py_ssize_t hi, int shift, int64_t[::1] at, uint64_t[::1] dst, int64_t[::1] dst_order) -> None:
    """One stable pass: src[lo:hi] to the next place at[d] of their digit d in dst, and beside them in dst_order
    their entries of src_order (their indices when `identity`)."""
    cdef Py_ssize_t i
    cdef int64_t place
    cdef int digit
    with nogil:
        for i in range(lo, hi):
            digit = (src[i] >> shift) & 0x7FF
            place = at[digit]
            at[digit] = place + 1
            dst[place] = src[i]
            dst_order[place] = i if identity else src_order[i]
