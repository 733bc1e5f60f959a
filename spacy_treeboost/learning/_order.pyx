# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The order of the subtree-linear learner's columns by document frequency (a counting sort)."""
from libc.stdint cimport int64_t

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
