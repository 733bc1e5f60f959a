# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Compiled kernels of the subtree-linear learner: its mined columns and pattern codes, its fold matrices and
products, the order of its rules."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.string cimport memcpy

import numpy

ctypedef fused index_t:
    int32_t
    int64_t


def _one_by_one(work, items):
    """`ThreadTeam.map` on this thread: work on each item in turn."""
    return [work(item) for item in items]


def split_csc_rows(const int64_t[::1] indptr, const index_t[::1] indices, const double[::1] data,
                   const uint8_t[::1] side, const index_t[::1] rank, run=None, bounds=None):
    """The rows of a CSC matrix with side 0 and those with side 1, as two CSC matrices, in one pass.

    indptr, indices, data: The CSC arrays (indptr as int64).
    side (numpy.ndarray): uint8 per row: 0 or 1.
    rank (numpy.ndarray): Per row, its index among the rows of its side.
    run (Optional[Callable]): `ThreadTeam.map`, to split the runs of columns `bounds` on its threads, each run's
        side-1 entries counted first so that it knows where its entries go: the same matrices for any runs.
    bounds (Optional[List[Tuple[int, int]]]): Consecutive runs of columns (lo, hi) from 0 to the last column
        (`logistic.column_pieces`); one run without `run`.
    RETURNS (tuple): (indptr, indices, data) of side 0, then of side 1 (indptr int64, indices of the input's
        dtype), columns in order, rows in the input's order within each column.
    """
    cdef Py_ssize_t d = indptr.shape[0] - 1
    cdef int64_t total = indptr[d] if d >= 0 else 0
    if d < 0 or indices.shape[0] < total or data.shape[0] < total:
        raise ValueError("indptr, indices and data do not describe one CSC matrix")
    if run is None or bounds is None:
        run, bounds = _one_by_one, [(0, d)]
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
    dt0 = numpy.empty(n0, dtype=numpy.float64)
    dt1 = numpy.empty(n1, dtype=numpy.float64)
    run(lambda k: _split_columns(indptr, indices, data, side, rank, bounds[k][0], bounds[k][1], at0[k], at1[k], ip0,
                                 ip1, ix0, ix1, dt0, dt1), range(n_pieces))
    ip0[d] = n0
    ip1[d] = n1
    return (ip0, ix0, dt0), (ip1, ix1, dt1)


def _side_ones(const int64_t[::1] indptr, const index_t[::1] indices, const uint8_t[::1] side, Py_ssize_t lo,
               Py_ssize_t hi) -> int:
    """The number of entries of columns lo:hi whose row has side 1, after checking their rows."""
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
                   double[::1] v1) -> None:
    """Columns lo:hi of the split of `split_csc_rows`, their side-0 entries from a on, their side-1 ones from b."""
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
                    v1[b] = data[k]
                    b += 1
                else:
                    i0[a] = rank[r]
                    v0[a] = data[k]
                    a += 1


ctypedef fused count_t:
    uint8_t
    int32_t


ctypedef fused out_count_t:
    uint8_t
    int32_t
    double


def copy_columns(const int64_t[::1] order, const int64_t[::1] owner, int64_t shard, const int64_t[::1] src_start,
                 const int64_t[::1] length, const int64_t[::1] dst_start, const int32_t[::1] src_docs,
                 const count_t[::1] src_counts, int32_t[::1] docs, out_count_t[::1] counts):
    """Copy the columns of one miner's (docs, counts) into the merged arrays: output column c is the merged
    pattern order[c], copied when `shard` owns it; the counts as the output's type (uint8 only from uint8: a wider
    count would not fit). One pass over `order`, without per-miner gathers of the places.

    order (numpy.ndarray): Per output column, its merged pattern.
    owner, src_start, length: Per merged pattern, its miner, where its entries start in that miner's arrays, and
        how many there are.
    shard (int): The miner whose columns are copied.
    dst_start (numpy.ndarray): Per output column, where its entries start in the output.
    src_docs, src_counts: The miner's document ids and counts (uint8 or int32).
    docs, counts: The output arrays (counts uint8, int32 or float64), written at the columns' places.
    """
    cdef Py_ssize_t c, k, n_cols = order.shape[0]
    cdef int64_t a, b, n, j, n_patterns = owner.shape[0]
    cdef bint outside = False
    if src_start.shape[0] != n_patterns or length.shape[0] != n_patterns:
        raise ValueError("owner, src_start and length must have one entry per merged pattern")
    if dst_start.shape[0] < n_cols:
        raise ValueError("dst_start must have one entry per output column")
    if src_docs.shape[0] != src_counts.shape[0] or docs.shape[0] != counts.shape[0]:
        raise ValueError("docs and counts must have the same length, in the source and in the output")
    if out_count_t is uint8_t and count_t is not uint8_t:
        raise ValueError("uint8 output counts need uint8 source counts")
    with nogil:
        for c in range(n_cols):
            j = order[c]
            if j < 0 or j >= n_patterns:
                outside = True
                break
            if owner[j] != shard:
                continue
            a = src_start[j]
            b = dst_start[c]
            n = length[j]
            if a < 0 or b < 0 or n < 0 or a + n > src_docs.shape[0] or b + n > docs.shape[0]:
                outside = True
                break
            for k in range(n):
                docs[b + k] = src_docs[a + k]
                counts[b + k] = src_counts[a + k]
    if outside:
        raise ValueError(f"column {c} lies outside the merged patterns, the source or the output arrays")


def scale_columns_and_norms(const index_t[::1] indptr, const index_t[::1] indices, double[::1] data,
                            const double[::1] scale, double[::1] sq_norms):
    """Multiply every entry of column j of a CSC matrix by scale[j], in place, and add the square of each
    scaled entry to sq_norms at its row, entries in storage order (as numpy.bincount adds them). Runs without the
    GIL, its checks included.

    indptr, indices, data: The CSC arrays (indptr and indices of one integer type).
    scale (numpy.ndarray): One factor per column.
    sq_norms (numpy.ndarray): One sum per row, added to.
    """
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, j, k, bad = -1, n_rows = sq_norms.shape[0]
    cdef double s, v
    if scale.shape[0] != n_cols:
        raise ValueError(f"scale needs one factor per column ({n_cols}), got {scale.shape[0]}")
    if n_cols >= 0 and (indptr[n_cols] != data.shape[0] or indices.shape[0] != data.shape[0]):
        raise ValueError("indptr, indices and data do not describe one CSC matrix")
    with nogil:
        for k in range(indices.shape[0]):
            if indices[k] < 0 or indices[k] >= n_rows:
                bad = k
                break
        if bad < 0:
            for j in range(n_cols):
                s = scale[j]
                for k in range(indptr[j], indptr[j + 1]):
                    v = data[k] * s
                    data[k] = v
                    sq_norms[indices[k]] += v * v
    if bad >= 0:
        raise ValueError(f"row {indices[bad]} lies outside sq_norms ({n_rows} rows)")


def divide_by_rows(const index_t[::1] indices, double[::1] data, const double[::1] by):
    """data[k] /= by[indices[k]] for every entry, in place, without the GIL."""
    cdef Py_ssize_t k, bad = -1, n_rows = by.shape[0]
    if indices.shape[0] != data.shape[0]:
        raise ValueError("indices and data must have the same length")
    with nogil:
        for k in range(indices.shape[0]):
            if indices[k] < 0 or indices[k] >= n_rows:
                bad = k
                break
        if bad < 0:
            for k in range(indices.shape[0]):
                data[k] = data[k] / by[indices[k]]
    if bad >= 0:
        raise ValueError(f"row {indices[bad]} lies outside `by` ({n_rows} rows)")


def check_pattern(const index_t[::1] indptr, const index_t[::1] indices, Py_ssize_t n_rows) -> None:
    """Raise a ValueError unless indptr and indices describe a CSC matrix of `n_rows` rows: what `pattern_matvec`
    and `pattern_rmatvec` trust (they check only the lengths, as they run many times on one matrix)."""
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, k
    if n_cols < 0 or indptr[0] != 0 or indptr[n_cols] != indices.shape[0]:
        raise ValueError("indptr and indices do not describe one CSC matrix")
    for k in range(n_cols):
        if indptr[k + 1] < indptr[k]:
            raise ValueError("indptr must not decrease")
    for k in range(indices.shape[0]):
        if indices[k] < 0 or indices[k] >= n_rows:
            raise ValueError(f"row {indices[k]} lies outside the {n_rows} rows")


def pattern_matvec(const index_t[::1] indptr, const index_t[::1] indices, const double[::1] scale,
                   const double[::1] x, double[::1] out):
    """out += X x for the CSC matrix X whose column j holds the value scale[j] at each of its rows (a pattern of
    ones, its columns scaled): scipy's `csc_matvec` on that matrix, the same products added in the same order,
    without reading a value per entry. The structure must have passed `check_pattern` with len(out) rows."""
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
    """out[j] = (X^T u)[j] for the matrix of `pattern_matvec`: scipy's `csr_matvec` on X's transpose, each entry's
    product scale[j] * u[i] added in storage order. The structure must have passed `check_pattern` with len(u)
    rows."""
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
    """The value of each column of a CSC matrix whose columns each hold one value (0 for an empty column), or
    None when a column holds two different values or a NaN: one pass over the entries, stopping at the first
    column that fails, without temporaries.

    indptr, data: The CSC arrays (indptr of the indices' type).
    RETURNS (Optional[numpy.ndarray]): The values, float64, one per column.
    """
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, j
    cdef int64_t k
    cdef double v
    cdef bint mixed = False
    if n_cols < 0 or indptr[0] != 0 or indptr[n_cols] != data.shape[0]:
        raise ValueError("indptr and data do not describe one CSC matrix")
    for j in range(n_cols):
        if indptr[j + 1] < indptr[j]:
            raise ValueError("indptr must not decrease")
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
    """out[j] = (S^T u)[j] for the matrix S of X's entries squared (X: CSC): scipy's `csr_matvec` on S's
    transpose, each entry's product (x * x) * u[i] added in storage order, without S. The structure must have
    passed `check_pattern` with len(u) rows."""
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


def take_columns(const index_t[::1] indptr, const index_t[::1] indices, const double[::1] data,
                 const int64_t[::1] columns, const index_t[::1] tail_rows, const double[::1] tail_values):
    """The CSC arrays of X's `columns` (in that order), followed by one column per entry of tail_rows holding
    tail_values at that row: one allocation per array and one pass, where X[:, columns] and appending to it would
    copy the entries twice.

    indptr, indices, data: X's CSC arrays (indptr of the indices' type).
    columns (numpy.ndarray): int64 column numbers of X.
    tail_rows, tail_values (numpy.ndarray): The appended one-entry columns' rows and values.
    RETURNS (tuple): (indptr, indices, data), indptr and indices of the input's index type.
    """
    cdef Py_ssize_t n_cols = indptr.shape[0] - 1, m = columns.shape[0], t = tail_rows.shape[0], j
    cdef int64_t total = 0, c, k, at
    if tail_values.shape[0] != t:
        raise ValueError("tail_rows and tail_values must have the same length")
    if n_cols < 0 or indptr[n_cols] > indices.shape[0] or indptr[n_cols] > data.shape[0]:
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
    out_data = numpy.empty(total + t, dtype=numpy.float64)
    cdef index_t[::1] op = out_indptr, oi = out_indices
    cdef double[::1] od = out_data
    with nogil:
        at = 0
        for j in range(m):
            op[j] = <index_t>at
            c = columns[j]
            for k in range(indptr[c], indptr[c + 1]):
                oi[at] = indices[k]
                od[at] = data[k]
                at += 1
        for j in range(t):
            op[m + j] = <index_t>at
            oi[at] = tail_rows[j]
            od[at] = tail_values[j]
            at += 1
        op[m + t] = <index_t>at
    return out_indptr, out_indices, out_data


def dot_range(const double[::1] a, const double[::1] b, Py_ssize_t lo, Py_ssize_t hi) -> float:
    """sum(a[i] * b[i] for i in range(lo, hi)), added in index order from 0.0 (a piece of a conjugate-gradient dot
    product, `logistic.VectorPieces`)."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    _check_range(a.shape[0], lo, hi)
    if b.shape[0] != a.shape[0]:
        raise ValueError("the vectors differ in length")
    with nogil:
        for i in range(lo, hi):
            total = total + a[i] * b[i]
    return total


def cg_step_range(double[::1] s, const double[::1] d, const double[::1] M, double alpha, Py_ssize_t lo,
                  Py_ssize_t hi) -> float:
    """s[i] += d[i] * alpha for i in range(lo, hi), and the sum of s[i] * (M[i] * s[i]) over them (the step and its
    squared length in the preconditioner's norm), added in index order from 0.0."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    _check_range(s.shape[0], lo, hi)
    if d.shape[0] != s.shape[0] or M.shape[0] != s.shape[0]:
        raise ValueError("the vectors differ in length")
    with nogil:
        for i in range(lo, hi):
            s[i] = s[i] + d[i] * alpha
            total = total + s[i] * (M[i] * s[i])
    return total


def cg_residual_range(double[::1] r, double[::1] z, const double[::1] Hd, const double[::1] M, double alpha,
                      Py_ssize_t lo, Py_ssize_t hi) -> float:
    """r[i] -= Hd[i] * alpha and z[i] = r[i] / M[i] for i in range(lo, hi), and the sum of z[i] * r[i] over them,
    added in index order from 0.0."""
    cdef Py_ssize_t i
    cdef double total = 0.0
    _check_range(r.shape[0], lo, hi)
    if z.shape[0] != r.shape[0] or Hd.shape[0] != r.shape[0] or M.shape[0] != r.shape[0]:
        raise ValueError("the vectors differ in length")
    with nogil:
        for i in range(lo, hi):
            r[i] = r[i] - Hd[i] * alpha
            z[i] = r[i] / M[i]
            total = total + z[i] * r[i]
    return total


def cg_direction_range(double[::1] d, const double[::1] z, double beta, Py_ssize_t lo, Py_ssize_t hi) -> None:
    """d[i] = d[i] * beta + z[i] for i in range(lo, hi)."""
    cdef Py_ssize_t i
    _check_range(d.shape[0], lo, hi)
    if z.shape[0] != d.shape[0]:
        raise ValueError("the vectors differ in length")
    with nogil:
        for i in range(lo, hi):
            d[i] = d[i] * beta + z[i]


cdef inline void _check_range(Py_ssize_t n, Py_ssize_t lo, Py_ssize_t hi) except *:
    if lo < 0 or hi > n or lo > hi:
        raise ValueError(f"range {lo}:{hi} does not lie within a vector of {n} entries")


def order_by_count(const int64_t[::1] df):
    """The indices of df by decreasing value, equal values in index order (numpy.argsort(-df, kind="stable")), and
    the inverse permutation: a counting sort, two passes over df and one over its values' range.

    df (numpy.ndarray): Non-negative int64 values (document frequencies).
    RETURNS (tuple): (order, inverse), int64.
    """
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
    """The indices of w by decreasing |w|, equal magnitudes in index order: numpy.argsort(-numpy.abs(w),
    kind="stable"), by a stable radix sort (11-bit digits) of the complements of the magnitudes' bits. None when w
    holds a value that is not finite.

    run (Optional[Callable]): `ThreadTeam.map`, to sort w in `pieces` contiguous pieces on its threads: each pass
        counts the digits of every piece, then places each piece's keys after those of the earlier pieces with the
        same digit, so the order is the same (a stable sort's) for any number of pieces.
    pieces (int): The number of pieces (1 without `run`).
    """
    cdef Py_ssize_t n = w.shape[0], k
    cdef int shift, digit
    cdef int64_t total, c
    if run is None or n < 2:
        run, pieces = _one_by_one, 1
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
    """keys[i] = the complement of |w[i]|'s bits for i in range(lo, hi) (ascending keys: descending |w|); False
    at the first value that is not finite."""
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
    """counts[d] = how many of keys[lo:hi] have digit d at `shift`."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(2048):
            counts[i] = 0
        for i in range(lo, hi):
            counts[(keys[i] >> shift) & 0x7FF] += 1


def _scatter_digits(const uint64_t[::1] src, const int64_t[::1] src_order, bint identity, Py_ssize_t lo,
                    Py_ssize_t hi, int shift, int64_t[::1] at, uint64_t[::1] dst, int64_t[::1] dst_order) -> None:
    """Place keys[lo:hi] and their indices (i itself when `identity`) at their digit's next place `at[d]`."""
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


def merge_levels(const int32_t[::1] parent, const int32_t[::1] size, const int64_t[::1] base, int64_t n_roots):
    """The one-miner order of the patterns beyond the roots of several miners (`merged_columns`).

    Every miner holds the same n_roots roots first; its other patterns follow level by level (size), each level
    ordered by its patterns' parents. The merged order is level by level; within a level by the parent's merged
    place, then miner, then the miner's own order: one k-way merge per level.

    parent (numpy.ndarray): The miners' patterns beyond their roots, one miner after the other (miner k's from
        base[k]): each one's parent, a local index in its miner (below n_roots: a root).
    size (numpy.ndarray): Each one's number of nodes (2 or more, not decreasing within a miner).
    base (numpy.ndarray): Where each miner's patterns start, and their total at the end (int64).
    n_roots (int): The number of roots.
    RETURNS (tuple): (position, owner, merged_parent): per merged pattern beyond the roots, its index in `parent`,
        its miner, and its parent's merged place (int64, int64, int32).
    """
    cdef Py_ssize_t n_shards = base.shape[0] - 1, k, best
    cdef int64_t n = base[n_shards] if n_shards >= 0 else 0, i, p, key, best_key, placed = 0
    cdef int32_t level = 2, next_level
    if n_shards < 1 or base[0] != 0 or parent.shape[0] != n or size.shape[0] != n:
        raise ValueError("parent and size need one entry per pattern, base the miners' bounds from 0 to their total")
    for k in range(n_shards):
        if base[k + 1] < base[k]:
            raise ValueError("base must not decrease")
    position_out = numpy.empty(n, dtype=numpy.int64)
    owner_out = numpy.empty(n, dtype=numpy.int64)
    parent_out = numpy.empty(n, dtype=numpy.int32)
    rank_of = numpy.full(n, -1, dtype=numpy.int64)
    at_of = numpy.array(base[:n_shards], dtype=numpy.int64)
    cdef int64_t[::1] position = position_out, owner = owner_out, rank = rank_of, at = at_of
    cdef int32_t[::1] merged_parent = parent_out
    cdef bint bad = False
    with nogil:
        while placed < n and not bad:
            next_level = 0
            while True:
                best = -1
                best_key = 0
                for k in range(n_shards):
                    i = at[k]
                    if i >= base[k + 1]:
                        continue
                    if size[i] != level:
                        if size[i] < level:
                            bad = True
                        elif next_level == 0 or size[i] < next_level:
                            next_level = size[i]
                        continue
                    p = parent[i]
                    if p < 0 or p >= n_roots + base[k + 1] - base[k]:
                        bad = True
                        continue
                    key = p if p < n_roots else rank[base[k] + p - n_roots]
                    if key < 0 or key >= n_roots + placed:
                        bad = True  # a parent not placed before its child
                        continue
                    if best < 0 or key < best_key:
                        best, best_key = k, key
                if best < 0 or bad:
                    break
                i = at[best]
                rank[i] = n_roots + placed
                position[placed] = i
                owner[placed] = best
                merged_parent[placed] = <int32_t>best_key
                placed += 1
                at[best] += 1
            if next_level == 0:
                break
            level = next_level
    if bad or placed != n:
        raise ValueError("the miners' patterns are not in level order with their parents placed first")
    return position_out, owner_out, parent_out


def fill_merged_shard(const int64_t[::1] owner, const int64_t[::1] position, int64_t base, int64_t shard,
                      int64_t n_roots, const int32_t[::1] depth, const int32_t[::1] label, const int32_t[::1] size,
                      const int64_t[::1] indptr, int32_t[::1] depth_out, int32_t[::1] label_out,
                      int32_t[::1] size_out, int64_t[::1] start_out, int64_t[::1] length_out) -> None:
    """Copy one miner's patterns into their merged places (`merge_levels`' owner and position): for each merged
    pattern i beyond the roots that `shard` owns, its local index j = position[i] - base + n_roots gives
    depth_out, label_out and size_out at n_roots + i from depth, label and size at j, and start_out and length_out
    from the miner's CSC indptr (where column j starts, and its length): one pass, without the concatenated
    and gathered temporaries.
    """
    cdef Py_ssize_t n = owner.shape[0], i
    cdef int64_t j, n_local = depth.shape[0], bad = -1
    if position.shape[0] != n or depth_out.shape[0] != n_roots + n or label_out.shape[0] != n_roots + n \
            or size_out.shape[0] != n_roots + n or start_out.shape[0] != n_roots + n \
            or length_out.shape[0] != n_roots + n:
        raise ValueError("the merged arrays need one entry per root and per merged pattern")
    if label.shape[0] != n_local or size.shape[0] != n_local or indptr.shape[0] != n_local + 1:
        raise ValueError("the miner's depth, label, size and indptr differ in length")
    with nogil:
        for i in range(n):
            if owner[i] != shard:
                continue
            j = position[i] - base + n_roots
            if j < n_roots or j >= n_local:
                bad = i
                break
            depth_out[n_roots + i] = depth[j]
            label_out[n_roots + i] = label[j]
            size_out[n_roots + i] = size[j]
            start_out[n_roots + i] = indptr[j]
            length_out[n_roots + i] = indptr[j + 1] - indptr[j]
    if bad >= 0:
        raise ValueError(f"merged pattern {bad} lies outside its miner's {n_local - n_roots} patterns")


def pattern_codes(const int32_t[::1] parent, const int32_t[::1] depth, const int32_t[::1] label,
                  const int32_t[::1] size):
    """The codes of a miner's enumeration tree as flat arrays (`PatternCodes.from_tree`): pattern p extends its
    parent by one rightmost node (depth[p], label[p]), so its code is its ancestors' nodes then its own.

    parent, depth, label, size (numpy.ndarray): Per pattern, its parent (-1 for a root), the depth and label of the
        node it adds, and its number of nodes (its ancestors' count plus one).
    RETURNS (tuple): (start, flat_depth, flat_label): pattern p's code is flat_depth[start[p]:start[p + 1]] and
        flat_label[...] (start int64, the others int32).
    """
    cdef Py_ssize_t n = parent.shape[0], p
    cdef int64_t k, total = 0, at
    cdef int32_t node
    cdef bint bad = False
    if depth.shape[0] != n or label.shape[0] != n or size.shape[0] != n:
        raise ValueError("parent, depth, label and size need one entry per pattern")
    start_out = numpy.empty(n + 1, dtype=numpy.int64)
    cdef int64_t[::1] start = start_out
    for p in range(n):
        start[p] = total
        if size[p] < 1:
            raise ValueError(f"pattern {p} has size {size[p]}: every pattern has a node")
        total += size[p]
    start[n] = total
    depth_out = numpy.empty(total, dtype=numpy.int32)
    label_out = numpy.empty(total, dtype=numpy.int32)
    cdef int32_t[::1] flat_depth = depth_out, flat_label = label_out
    with nogil:
        for p in range(n):
            node = <int32_t>p
            at = start[p + 1] - 1
            while node >= 0 and at >= start[p]:
                flat_depth[at] = depth[node]
                flat_label[at] = label[node]
                if parent[node] >= n:
                    bad = True
                    break
                node = parent[node]
                at -= 1
            if bad or node >= 0 or at != start[p] - 1:
                bad = True
                break
    if bad:
        raise ValueError(f"pattern {p}'s ancestors do not number its size minus one")
    return start_out, depth_out, label_out
