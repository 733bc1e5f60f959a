# cython: language_level=3
"""Occurrence lists shared by the miner and the matcher: an occurrence is one int64, the rightmost-node image in the
high 32 bits and its multiplicity (embeddings, saturated) in the low 32 bits."""
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector
from libcpp.algorithm cimport sort as std_sort

cdef enum:
    COUNT_CAP = 2147483647


cdef inline int32_t sat_add(int32_t a, int32_t b) noexcept nogil:
    cdef int64_t s = <int64_t>a + b
    return COUNT_CAP if s > COUNT_CAP else <int32_t>s


cdef inline int64_t pack(int64_t node, int64_t mult) noexcept nogil:
    return (node << 32) | mult


cdef inline int32_t occ_node(int64_t occ) noexcept nogil:
    return <int32_t>(occ >> 32)


cdef inline int32_t occ_mult(int64_t occ) noexcept nogil:
    return <int32_t>(occ & 0x7FFFFFFF)


cdef inline void merge_occurrences(vector[int64_t]& occ) noexcept nogil:
    """Sort occurrences by node and add up the multiplicities of duplicates."""
    std_sort(occ.begin(), occ.end())
    cdef size_t k, out = 0
    for k in range(occ.size()):
        if out > 0 and occ_node(occ[out - 1]) == occ_node(occ[k]):
            occ[out - 1] = pack(occ_node(occ[k]), sat_add(occ_mult(occ[out - 1]), occ_mult(occ[k])))
        else:
            occ[out] = occ[k]
            out += 1
    occ.resize(out)
