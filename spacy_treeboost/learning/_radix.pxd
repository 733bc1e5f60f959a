# cython: language_level=3
"""The radix sort shared by the miner (the bounds by support) and the linear learner's kernels (the rules' order):
a stable least-significant-digit sort of 64-bit keys on 11-bit digits, its passes (`digit_counts`,
`scatter_digits`) also run on pieces of the keys on several threads (`_order.order_by_magnitude`). A non-negative
double's bits order as its value does, so both sort doubles through their bits."""
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy, memset
from libcpp.vector cimport vector


cdef inline void digit_counts(const uint64_t* keys, Py_ssize_t lo, Py_ssize_t hi, int shift,
                              int64_t* counts) noexcept nogil:
    """counts[d] = how many of keys[lo:hi] have digit d (11 bits) at `shift`."""
    cdef Py_ssize_t i
    memset(counts, 0, 2048 * sizeof(int64_t))
    for i in range(lo, hi):
        counts[(keys[i] >> shift) & 0x7FF] += 1


cdef inline void scatter_digits(const uint64_t* src, const int64_t* src_order, bint identity, Py_ssize_t lo,
                                Py_ssize_t hi, int shift, int64_t* at, uint64_t* dst,
                                int64_t* dst_order) noexcept nogil:
    """One stable pass: src[lo:hi] to the next place `at[d]` of their digit d in dst, and beside them in dst_order
    (unless NULL) their entries of src_order, or their indices themselves when `identity`."""
    cdef Py_ssize_t i
    cdef int64_t place
    cdef int digit
    for i in range(lo, hi):
        digit = (src[i] >> shift) & 0x7FF
        place = at[digit]
        at[digit] = place + 1
        dst[place] = src[i]
        if dst_order != NULL:
            dst_order[place] = i if identity else src_order[i]


cdef inline void sort_keys(uint64_t* keys, uint64_t* spare, int64_t* order, int64_t* spare_order,
                           Py_ssize_t n) noexcept nogil:
    """Sort keys[:n] ascending, stably, and permute order[:n] alongside (order may be NULL); spare and spare_order
    (NULL with order) are scratch of n entries. A pass is skipped where every key has the same digit."""
    cdef int64_t count[2048]
    cdef int64_t total, c
    cdef int shift, digit
    cdef uint64_t* src = keys
    cdef uint64_t* dst = spare
    cdef int64_t* src_order = order
    cdef int64_t* dst_order = spare_order
    if n < 2:
        return
    for shift in range(0, 64, 11):
        digit_counts(src, 0, n, shift, count)
        if count[(src[0] >> shift) & 0x7FF] == n:
            continue
        total = 0
        for digit in range(2048):
            c = count[digit]
            count[digit] = total
            total += c
        scatter_digits(src, src_order, False, 0, n, shift, count, dst, dst_order if order != NULL else NULL)
        src, dst = dst, src
        src_order, dst_order = dst_order, src_order
    if src != keys:
        memcpy(keys, src, n * sizeof(uint64_t))
        if order != NULL:
            memcpy(order, src_order, n * sizeof(int64_t))


cdef inline void sort_decreasing(vector[double]& v, vector[uint64_t]& keys, vector[uint64_t]& scratch) noexcept nogil:
    """The values of v (finite, not negative) in decreasing order, -0.0 as 0.0, by the radix sort `sort_keys` of their
    bits; keys and scratch are reused across calls."""
    cdef Py_ssize_t n = v.size(), i
    cdef double x
    keys.resize(n)
    scratch.resize(n)
    for i in range(n):
        x = v[i] + 0.0
        memcpy(&keys[i], &x, sizeof(double))
    if n:
        sort_keys(keys.data(), scratch.data(), NULL, NULL, n)
    for i in range(n):
        memcpy(&v[i], &keys[n - 1 - i], sizeof(double))
