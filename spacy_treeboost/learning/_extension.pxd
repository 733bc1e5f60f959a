# cython: language_level=3
"""The miner's enumeration tree of patterns, extended by rightmost extension as the search reaches them."""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector

from spacy_treeboost.learning._patterns cimport PatternStore

cdef struct Kept:
    # a document's kept single-document pattern (-1: none yet) and its size
    int32_t node
    int32_t size


cdef class PatternCache(PatternStore):
    cdef vector[uint8_t] label_ok
    cdef vector[int32_t] roots
    cdef vector[uint8_t] root_owned
    cdef vector[Kept] single_keep
    cdef public int32_t max_pattern_size, min_support, rare_up_to
    cdef public bint single_document_dominance
    cdef bint include_root_nodes
    cdef public int64_t max_cache_bytes

    cdef inline bint _never_extended(self, int32_t i) noexcept:
        """Pattern i occurs in one document and single-document dominance is on: its supertrees never win."""
        return self.single_document_dominance and self.scan[i].docs < 0

    cdef int _expand(self, int32_t i) except -1
    cdef bint _code_precedes(self, int32_t a, int32_t b)
