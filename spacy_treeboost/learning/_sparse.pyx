# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Sparse-matrix kernels of the linear learner's folds."""
from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy

ctypedef fused index_t:
    int32_t
    int64_t


def split_csc_rows(const int64_t[::1] indptr, const index_t[::1] indices, const double[::1] data,
                   const uint8_t[::1] side, const index_t[::1] rank):
    """The rows of a CSC matrix with side 0 and those with side 1, as two CSC matrices, in one pass.

    indptr, indices, data: The CSC arrays (indptr as int64).
    side (numpy.ndarray): uint8 per row: 0 or 1.
    rank (numpy.ndarray): Per row, its index among the rows of its side.
    RETURNS (tuple): (indptr, indices, data) of side 0, then of side 1 (indptr int64, indices of the input's
        dtype), columns in order, rows in the input's order within each column.
    """
    cdef Py_ssize_t d = indptr.shape[0] - 1, j, k
    cdef int64_t n0 = 0, n1 = 0, total = indptr[d] if d >= 0 else 0
    cdef index_t r
    for k in range(total):
        n1 += side[indices[k]]
    n0 = total - n1
    dtype = numpy.int32 if index_t is int32_t else numpy.int64
    ip0 = numpy.empty(d + 1, dtype=numpy.int64)
    ip1 = numpy.empty(d + 1, dtype=numpy.int64)
    ix0 = numpy.empty(n0, dtype=dtype)
    ix1 = numpy.empty(n1, dtype=dtype)
    dt0 = numpy.empty(n0, dtype=numpy.float64)
    dt1 = numpy.empty(n1, dtype=numpy.float64)
    cdef int64_t[::1] p0 = ip0, p1 = ip1
    cdef index_t[::1] i0 = ix0, i1 = ix1
    cdef double[::1] v0 = dt0, v1 = dt1
    cdef int64_t a = 0, b = 0
    with nogil:
        for j in range(d):
            p0[j] = a
            p1[j] = b
            for k in range(indptr[j], indptr[j + 1]):
                r = indices[k]
                if side[r]:
                    i1[b] = rank[r]
                    v1[b] = data[k]
                    b += 1
                else:
                    i0[a] = rank[r]
                    v0[a] = data[k]
                    a += 1
        p0[d] = a
        p1[d] = b
    return (ip0, ix0, dt0), (ip1, ix1, dt1)
