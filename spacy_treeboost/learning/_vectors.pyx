# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Vector kernels of the linear solver: products with a matrix of scaled patterns or of squared entries, and the
conjugate-gradient updates over a range of coordinates (a piece of a vector, summed in index order)."""
from libc.stdint cimport int32_t, int64_t

import numpy

ctypedef fused index_t:
    int32_t
    int64_t


def check_pattern(const index_t[::1] indptr, const index_t[::1] indices, Py_ssize_t n_rows) -> None:
    """Raise a ValueError unless indptr and indices describe a CSC matrix of `n_rows` rows (the products trust it)."""
    cdef Py_ssize_t k
    _check_indptr(indptr, indices.shape[0], "indices")
    for k in range(indices.shape[0]):
        if indices[k] < 0 or indices[k] >= n_rows:
            raise ValueError(f"row {indices[k]} lies outside the {n_rows} rows")


def pattern_matvec(const index_t[::1] indptr, const index_t[::1] indices, const double[::1] scale,
                   const double[::1] x, double[::1] out):
    """out += X x for the CSC X whose column j holds scale[j] at each of its rows: scipy's `csc_matvec`'s sums."""
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, j, k
    cdef double v
    if scale.shape[0] != n_cols or x.shape[0] != n_cols:
        raise ValueError(f"scale and x need one entry per column ({n_cols})")
    with nogil:
        for j in range(n_cols):
            v = scale[j] * x[j]
            for k in range(indptr[j], indptr[j + 1]):
                out[indices[k]] += v


def pattern_rmatvec(const index_t[::1] indptr, const index_t[::1] indices, const double[::1] scale,
                    const double[::1] u, double[::1] out):
    """out = X^T u for the matrix of `pattern_matvec`: scipy's `csr_matvec` on X's transpose, in storage order."""
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, j, k
    cdef double s, total
    if scale.shape[0] != n_cols or out.shape[0] != n_cols:
        raise ValueError(f"scale and out need one entry per column ({n_cols})")
    with nogil:
        for j in range(n_cols):
            s = scale[j]
            total = 0.0
            for k in range(indptr[j], indptr[j + 1]):
                total = total + s * u[indices[k]]
            out[j] = total


def column_values(const index_t[::1] indptr, const double[::1] data):
    """The value of each column of a CSC matrix (0 when empty), or None when one holds two values or a NaN."""
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, j
    cdef int64_t k
    cdef double v
    cdef bint mixed = False
    _check_indptr(indptr, data.shape[0], "data")
    values = numpy.zeros(n_cols)
    cdef double[::1] out = values
    with nogil:
        for j in range(n_cols):
            if indptr[j + 1] == indptr[j]:
                continue
            v = data[indptr[j]]
            if v != v:
                mixed = True
                break
            for k in range(indptr[j] + 1, indptr[j + 1]):
                if data[k] != v:
                    mixed = True
                    break
            if mixed:
                break
            out[j] = v
    return None if mixed else values


def squared_rmatvec(const index_t[::1] indptr, const index_t[::1] indices, const double[::1] data,
                    const double[::1] u, double[::1] out):
    """out = S^T u for S the CSC X's entries squared: scipy's `csr_matvec` on S's transpose, without S."""
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, j
    cdef int64_t k
    cdef double total, v
    if out.shape[0] != n_cols:
        raise ValueError(f"out needs one entry per column ({n_cols})")
    if n_cols >= 0 and indptr[n_cols] > data.shape[0]:
        raise ValueError("data is shorter than indptr says")
    with nogil:
        for j in range(n_cols):
            total = 0.0
            for k in range(indptr[j], indptr[j + 1]):
                v = data[k]
                total = total + (v * v) * u[indices[k]]
            out[j] = total


def dot_range(const double[::1] a, const double[::1] b, Py_ssize_t lo, Py_ssize_t hi) -> float:
    """sum(a[i] * b[i] for i in range(lo, hi)), added in index order from 0.0."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    _check_range(a.shape[0], lo, hi, b.shape[0] == a.shape[0])
    with nogil:
        for i in range(lo, hi):
            total = total + a[i] * b[i]
    return total


def cg_step_range(double[::1] s, const double[::1] d, const double[::1] M, double alpha, Py_ssize_t lo,
                  Py_ssize_t hi) -> float:
    """s[i] += d[i] * alpha for i in range(lo, hi), and the sum of s[i] * (M[i] * s[i]) in index order from 0.0."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    _check_range(s.shape[0], lo, hi, d.shape[0] == s.shape[0] == M.shape[0])
    with nogil:
        for i in range(lo, hi):
            s[i] = s[i] + d[i] * alpha
            total = total + s[i] * (M[i] * s[i])
    return total


def cg_residual_range(double[::1] r, const double[::1] Hd, const double[::1] M, double alpha, Py_ssize_t lo,
                      Py_ssize_t hi) -> float:
    """r[i] -= Hd[i] * alpha for i in range(lo, hi), and the sum of (r[i] / M[i]) * r[i] in index order from 0.0."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    _check_range(r.shape[0], lo, hi, Hd.shape[0] == r.shape[0] == M.shape[0])
    with nogil:
        for i in range(lo, hi):
            r[i] = r[i] - Hd[i] * alpha
            total = total + (r[i] / M[i]) * r[i]
    return total


def cg_direction_range(double[::1] d, const double[::1] r, const double[::1] M, double beta, Py_ssize_t lo,
                       Py_ssize_t hi) -> None:
    """d[i] = d[i] * beta + r[i] / M[i] for i in range(lo, hi)."""
    cdef Py_ssize_t i
    _check_range(d.shape[0], lo, hi, r.shape[0] == d.shape[0] == M.shape[0])
    with nogil:
        for i in range(lo, hi):
            d[i] = d[i] * beta + r[i] / M[i]


cdef void _check_indptr(const index_t[::1] indptr, Py_ssize_t n_entries, str entries) except *:
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, k
    if n_cols < 0 or indptr[0] != 0 or indptr[n_cols] != n_entries:
        raise ValueError(f"indptr and {entries} do not describe one CSC matrix")
    for k in range(n_cols):
        if indptr[k + 1] < indptr[k]:
            raise ValueError("indptr must not decrease")


cdef inline void _check_range(Py_ssize_t n, Py_ssize_t lo, Py_ssize_t hi, bint same) except *:
    """Raise a ValueError unless the vectors have one length (`same`) and lo:hi lies within their n entries."""
    if not same:
        raise ValueError("the vectors differ in length")
    if lo < 0 or hi > n or lo > hi:
        raise ValueError(f"range {lo}:{hi} does not lie within a vector of {n} entries")
