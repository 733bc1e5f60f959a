# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Column kernels of the subtree-linear learner's matrices: the folds' one-pass split of a matrix's rows and the
columns taken for a refit."""
from libc.stdint cimport int32_t, int64_t, uint8_t

from spacy_treeboost.learning._cpu cimport release_free_heap

import numpy

ctypedef fused index_t:
    int32_t
    int64_t


def return_free_heap() -> bool:
    """Give the C heap's free memory back to the system (glibc's `malloc_trim`); whether any was (False elsewhere)."""
    return bool(release_free_heap())


def split_csc_rows(const int64_t[::1] indptr, const index_t[::1] indices, const double[::1] data,
                   const uint8_t[::1] side, const index_t[::1] rank, run, bounds):
    """The CSC arrays (indptr, indices, data) of the rows with side 0, then side 1 (rows renumbered by `rank`), in
    one pass; data None splits the structure alone. `run` (`ThreadTeam.map`) splits the column runs `bounds`."""
    cdef Py_ssize_t d = indptr.shape[0] - 1
    cdef int64_t total = indptr[d] if d >= 0 else 0
    cdef bint with_values = data is not None
    if d < 0 or indices.shape[0] < total or (with_values and data.shape[0] < total):
        raise ValueError("indptr, indices and data do not describe one CSC matrix")
    n_pieces = len(bounds)
    if bounds[0][0] != 0 or bounds[n_pieces - 1][1] != d \
            or any(bounds[k][1] != bounds[k + 1][0] for k in range(n_pieces - 1)):
        raise ValueError(f"bounds must be consecutive runs of columns from 0 to {d}")
    ones = run(lambda b: _side_ones(indptr, indices, side, b[0], b[1]), bounds)
    at0, at1, n0, n1 = [], [], 0, 0
    for (lo, hi), m in zip(bounds, ones):
        at0.append(n0)
        at1.append(n1)
        n1 += m
        n0 += (indptr[hi] - indptr[lo]) - m
    dtype = numpy.int32 if index_t is int32_t else numpy.int64
    ip0 = numpy.empty(d + 1, dtype=numpy.int64)
    ip1 = numpy.empty(d + 1, dtype=numpy.int64)
    ix0 = numpy.empty(n0, dtype=dtype)
    ix1 = numpy.empty(n1, dtype=dtype)
    dt0 = numpy.empty(n0 if with_values else 0, dtype=numpy.float64)
    dt1 = numpy.empty(n1 if with_values else 0, dtype=numpy.float64)
    run(lambda k: _split_columns(indptr, indices, data, side, rank, bounds[k][0], bounds[k][1], at0[k], at1[k], ip0,
                                 ip1, ix0, ix1, dt0, dt1, with_values), range(n_pieces))
    ip0[d] = n0
    ip1[d] = n1
    return (ip0, ix0, dt0), (ip1, ix1, dt1)


def _side_ones(const int64_t[::1] indptr, const index_t[::1] indices, const uint8_t[::1] side, Py_ssize_t lo,
               Py_ssize_t hi) -> int:
    """The entries of columns lo:hi whose row has side 1, their rows checked."""
    cdef int64_t k, n1 = 0, bad = -1, n_rows = side.shape[0]
    cdef index_t r
    with nogil:
        for k in range(indptr[lo], indptr[hi]):
            r = indices[k]
            if r < 0 or r >= n_rows:
                bad = k
                break
            n1 += side[r]
    if bad >= 0:
        raise ValueError(f"row {indices[bad]} lies outside the {n_rows} rows of side")
    return n1


def _split_columns(const int64_t[::1] indptr, const index_t[::1] indices, const double[::1] data,
                   const uint8_t[::1] side, const index_t[::1] rank, Py_ssize_t lo, Py_ssize_t hi, int64_t a,
                   int64_t b, int64_t[::1] p0, int64_t[::1] p1, index_t[::1] i0, index_t[::1] i1, double[::1] v0,
                   double[::1] v1, bint with_values=True) -> None:
    """Columns lo:hi of `split_csc_rows`' split, their side-0 entries from a on, their side-1 ones from b."""
    cdef Py_ssize_t j
    cdef int64_t k
    cdef index_t r
    with nogil:
        for j in range(lo, hi):
            p0[j] = a
            p1[j] = b
            for k in range(indptr[j], indptr[j + 1]):
                r = indices[k]
                if side[r]:
                    i1[b] = rank[r]
                    if with_values:
                        v1[b] = data[k]
                    b += 1
                else:
                    i0[a] = rank[r]
                    if with_values:
                        v0[a] = data[k]
                    a += 1


def take_columns(const index_t[::1] indptr, const index_t[::1] indices, const double[::1] data,
                 const int64_t[::1] columns, const index_t[::1] tail_rows, const double[::1] tail_values):
    """The CSC arrays of X's `columns`, then one column per entry of tail_rows holding tail_values at that row, in
    one pass (X[:, columns] and appending would copy twice); data None takes the structure alone."""
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, m = columns.shape[0], t = tail_rows.shape[0], j
    cdef int64_t total = 0, c, k, at
    cdef bint with_values = data is not None
    if with_values and tail_values.shape[0] != t:
        raise ValueError("tail_rows and tail_values must have the same length")
    if n_cols < 0 or indptr[n_cols] > indices.shape[0] or (with_values and indptr[n_cols] > data.shape[0]):
        raise ValueError("indptr, indices and data do not describe one CSC matrix")
    for j in range(m):
        c = columns[j]
        if c < 0 or c >= n_cols:
            raise ValueError(f"column {c} lies outside the matrix's {n_cols} columns")
        if indptr[c + 1] < indptr[c] or indptr[c] < 0:
            raise ValueError("indptr must not decrease")
        total += indptr[c + 1] - indptr[c]
    dtype = numpy.int32 if index_t is int32_t else numpy.int64
    if index_t is int32_t and total + t > 2147483647:
        raise ValueError("the selected columns hold too many entries for int32 indices")
    out_indptr = numpy.empty(m + t + 1, dtype=dtype)
    out_indices = numpy.empty(total + t, dtype=dtype)
    out_data = numpy.empty(total + t if with_values else 0, dtype=numpy.float64)
    cdef index_t[::1] op = out_indptr, oi = out_indices
    cdef double[::1] od = out_data
    with nogil:
        at = 0
        for j in range(m):
            op[j] = <index_t>at
            c = columns[j]
            for k in range(indptr[c], indptr[c + 1]):
                oi[at] = indices[k]
                if with_values:
                    od[at] = data[k]
                at += 1
        for j in range(t):
            op[m + j] = <index_t>at
            oi[at] = tail_rows[j]
            if with_values:
                od[at] = tail_values[j]
            at += 1
        op[m + t] = <index_t>at
    return out_indptr, out_indices, out_data
