# cython: language_level=3
"""The storage of the miner's patterns: the forest's node links, the pattern nodes, each pattern's documents and
counts, and the arena of the occurrence lists not yet extended."""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.pair cimport pair
from cython.operator cimport dereference as deref

from spacy_treeboost.trees._buffers cimport GrowBuf

cdef enum:
    CHUNK_BITS = 16
    CHUNK = 65536
    BIG_COUNT = 255  # pool counts of BIG_COUNT or more are kept in a table beside the one-byte counts
    LINK_FAR = 65535  # links of this distance or more are looked up in a side table
    UNEXPANDED = 0
    EXPANDED = 1

cdef struct PNode:
    int32_t parent
    int32_t label
    int16_t depth
    int16_t size
    int32_t n_docs
    int32_t first_child
    int32_t n_children
    int32_t occ_slot
    uint8_t state

cdef struct FNode:
    # a forest node's parent and next-sibling links as distances (0: none; link_far: in a side table)
    uint16_t up
    uint16_t right

cdef struct OccRef:
    # an occurrence list in the arena from word `off`: `len` nodes, or (`wide`) `len` packed (node, multiplicity)
    # entries at an even offset; len 0 once released
    int64_t off
    int32_t len
    int32_t wide

cdef struct Scan:
    # what the child scan reads of a pattern: n_docs (-(doc + 1) for a pattern in one document), label, and where
    # its documents start in the pool
    int32_t docs
    int32_t label
    int64_t doc_off


cdef inline int32_t _far_link(const vector[pair[int32_t, int32_t]]& far, int32_t v) noexcept nogil:
    """The target of v's link in `far` (sorted by node; v is in it)."""
    cdef Py_ssize_t lo = 0, hi = far.size() - 1, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if far[mid].first < v:
            lo = mid + 1
        else:
            hi = mid
    return far[lo].second


cdef class PatternStore:
    cdef FNode* forest
    # the caller's label array (kept alive by `labels_owner`), not a copy: forked workers share its pages
    cdef const int32_t* labels
    cdef object labels_owner
    cdef vector[int32_t] label_rank
    cdef vector[pair[int32_t, int32_t]] up_far, right_far
    cdef uint16_t link_far
    cdef vector[int64_t] doc_start
    # the document of the first node of each block of 2^doc_block_bits forest nodes
    cdef vector[int32_t] block_doc
    cdef int doc_block_bits
    cdef int64_t n_nodes_forest
    cdef vector[PNode*] chunks
    cdef GrowBuf[Scan] scan
    cdef int32_t n_nodes
    cdef GrowBuf[int32_t] arena
    cdef GrowBuf[OccRef] occ
    cdef int64_t occ_garbage, compact_at
    cdef int64_t occ_words
    cdef GrowBuf[int32_t] pool_docs
    cdef GrowBuf[uint8_t] pool_counts
    cdef unordered_map[int64_t, int32_t] big_counts
    cdef public int32_t n_docs

    cdef inline PNode* node(self, int32_t i) noexcept nogil:
        return self.chunks[i >> CHUNK_BITS] + (i & (CHUNK - 1))

    cdef inline int32_t parent_of(self, int32_t v) noexcept nogil:
        """v's parent, or -1 for a document root."""
        cdef uint16_t d = self.forest[v].up
        if d == 0:
            return -1
        return v - d if d < self.link_far else _far_link(self.up_far, v)

    cdef inline int32_t next_of(self, int32_t v) noexcept nogil:
        """v's next sibling, or -1."""
        cdef uint16_t d = self.forest[v].right
        if d == 0:
            return -1
        return v + d if d < self.link_far else _far_link(self.right_far, v)

    cdef inline void _put_count(self, int64_t k, int32_t c):
        """Pool entry k's count: one byte, or BIG_COUNT and an entry of `big_counts`."""
        if c >= BIG_COUNT:
            self.big_counts[k] = c
        self.pool_counts[k] = BIG_COUNT if c >= BIG_COUNT else <uint8_t>c

    cdef inline int32_t _count(self, int64_t k) noexcept:
        """The count of pool entry k."""
        cdef uint8_t c = self.pool_counts[k]
        return c if c < BIG_COUNT else deref(self.big_counts.find(k)).second

    cdef int32_t _push(self, PNode& p) except -1
    cdef int _load_forest(self, const int32_t[::1] lab, const int32_t[::1] par, const int64_t[:] off,
                          const int32_t[:] rank, int link_far, int64_t compact_at, int doc_block_bits) except -1
    cdef void _release_occ(self, int32_t i) noexcept
    cdef int _compact_occ(self) except -1
    cdef const int64_t* _occ_list(self, int32_t s, vector[int64_t]& unpacked) noexcept
    cdef int _hold_occ(self, int32_t i, const int64_t* occ, Py_ssize_t n) except -1
    cdef void _set_docs(self, Py_ssize_t i, const int64_t* occ, Py_ssize_t n_occ)
    cdef void _put_docs(self, Py_ssize_t i, int64_t at, vector[pair[int64_t, int32_t]]& pd)
    cdef int32_t _support_at_least(self, vector[int64_t]& occ, int32_t k, int32_t* first)
