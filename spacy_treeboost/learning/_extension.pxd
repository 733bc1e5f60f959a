# cython: language_level=3
"""The miner's enumeration tree of patterns, extended by rightmost extension as the search reaches them."""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from cython.operator cimport dereference as deref

from spacy_treeboost.learning._patterns cimport PatternStore, Kept


cdef class PatternCache(PatternStore):
    cdef vector[uint8_t] label_ok
    cdef vector[int32_t] roots
    cdef vector[uint8_t] root_owned
    cdef vector[Kept] single_keep
    cdef public int32_t max_pattern_size, min_support, rare_up_to
    cdef public bint single_document_dominance
    cdef bint include_root_nodes
    cdef public int64_t max_cache_bytes

    cdef inline int32_t _support_needed(self, int32_t size) noexcept:
        """The documents a pattern of `size` nodes must occur in."""
        return 1 if size <= self.rare_up_to else self.min_support

    cdef inline bint _never_extended(self, int32_t i) noexcept:
        """Pattern i occurs in one document and single-document dominance is on: its supertrees never win."""
        return self.single_document_dominance and self.scan[i].docs < 0

    cdef inline bint _extendable(self, int32_t i) noexcept:
        """Pattern i is a root whose occurrences `_expand` lists from its documents (it holds no occurrence list)."""
        return (self.node(i).parent < 0 and self.node(i).size < self.max_pattern_size
                and not self._never_extended(i))

    cdef inline int64_t _node_code(self, int32_t i):
        """The code of pattern i's last node: depth, then label rank."""
        return self.node(i).depth * <int64_t>self.label_rank.size() + self.label_rank[self.node(i).label]
    cdef inline int _add_extension(self, int64_t key, int64_t occurrence, unordered_map[int64_t, int32_t]& slots,
                                   vector[vector[int64_t]]& bufs, vector[int64_t]& keys) except -1:
        cdef unordered_map[int64_t, int32_t].iterator it = slots.find(key)
        if it == slots.end():
            slots[key] = bufs.size()
            keys.push_back(key)
            bufs.push_back(vector[int64_t]())
            bufs.back().push_back(occurrence)
        else:
            bufs[deref(it).second].push_back(occurrence)
        return 0

    cdef int _build_singles(self, int32_t n_labels, bint include_root, const int32_t[:] order,
                            const int32_t* parents) except -1
    cdef int _root_documents(self, int32_t n_labels, bint include_root, vector[int32_t]& slot,
                             vector[int32_t]& lab_docs, const int32_t* parents) except -1
    cdef int _root_occurrences(self, int32_t i, vector[int64_t]& out) except -1
    cdef int _expand(self, int32_t i) except -1
    cdef bint _keep_single(self, int32_t d)
    cdef bint _code_precedes(self, int32_t a, int32_t b)
    cdef int _extensions(self, const int64_t* occ, Py_ssize_t n_occ, int32_t dk, unordered_map[int64_t, int32_t]& slots,
                         vector[vector[int64_t]]& bufs, vector[int64_t]& keys) except -1
    cdef tuple _code_key(self, int32_t i)
