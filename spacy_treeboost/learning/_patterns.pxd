# cython: language_level=3
"""The storage of the miner's cached patterns: the forest's node records with their links, the pattern nodes,
each pattern's documents and counts, and the arena of the occurrence lists not yet extended."""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.pair cimport pair
from cython.operator cimport dereference as deref

from spacy_treeboost.trees._buffers cimport GrowBuf

cdef enum:
    CHUNK_BITS = 16
    CHUNK = 65536

cdef enum:
    # pool counts of BIG_COUNT or more are kept in a table beside the one-byte counts
    BIG_COUNT = 255

cdef enum:
    # parent and next-sibling links are kept as 16-bit distances; this distance and longer ones are looked up
    LINK_FAR = 65535

cdef enum:
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
    # a forest node's parent and next-sibling links as distances (0: none; link_far: looked up in a side table),
    # side by side, so that the extensions of an occurrence read one record for both; its label is read from the
    # caller's label array, which the store keeps instead of a copy
    uint16_t up
    uint16_t right

cdef struct OccRef:
    # a pattern's occurrence list in the arena from word `off`: `len` nodes when every multiplicity is 1, else
    # (`wide`) `len` packed (node, multiplicity) entries of two words each at an even offset; len 0 once released
    int64_t off
    int32_t len
    int32_t wide

cdef struct Kept:
    # a document's kept single-document pattern (-1: none yet) and its size, read without touching the pattern
    int32_t node
    int32_t size

cdef struct Scan:
    # what the child scan reads of a pattern: n_docs, or -(doc + 1) for a pattern in one document; its label; where
    # its documents start in the pool (siblings' entries lie one after the other, and so do their documents)
    int32_t docs
    int32_t label
    int64_t doc_off


cdef inline int64_t _words(const OccRef& ref) noexcept nogil:
    """Arena words of an occurrence list."""
    return ref.len * (2 if ref.wide else 1)


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
    # the forest's int32 label ids: the caller's array (`labels_owner` keeps it alive), not a copy, so that a forked
    # worker shares the pages with its parent and the training process holds the labels once
    cdef const int32_t* labels
    cdef object labels_owner
    cdef vector[int32_t] label_rank
    cdef vector[pair[int32_t, int32_t]] up_far, right_far
    cdef uint16_t link_far
    cdef vector[int64_t] doc_start
    # per block of 2^doc_block_bits forest nodes, the document of the block's first node (`_doc_of`)
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

    cdef inline uint16_t _link_distance(self, vector[pair[int32_t, int32_t]]& far, int32_t v,
                                        int32_t target) except? 0:
        """The link from v to target (a node before or after it): the distance, or `link_far` and an entry of `far`."""
        cdef int32_t d = target - v if target > v else v - target
        if d < self.link_far:
            return <uint16_t>d
        far.push_back(pair[int32_t, int32_t](v, target))
        return self.link_far

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

    cdef inline void _push_count(self, int32_t c):
        """Counts take one byte in the pool; BIG_COUNT marks one kept in `big_counts` by its pool index."""
        if c >= BIG_COUNT:
            self.big_counts[<int64_t>self.pool_counts.size()] = c
            self.pool_counts.push_back(BIG_COUNT)
        else:
            self.pool_counts.push_back(<uint8_t>c)

    cdef inline int32_t _count(self, int64_t k) noexcept:
        """The count of pool entry k (noexcept: the search reads it per document, and a call that may raise
        costs an error check after every call)."""
        cdef uint8_t c = self.pool_counts[k]
        return c if c < BIG_COUNT else deref(self.big_counts.find(k)).second

    cdef inline int32_t _doc_of(self, int32_t node, int32_t hint) noexcept nogil:
        """The document of a node; `hint` is a document at or before it (the previous answer for nodes in
        ascending order), or -1.

        The hint's document and the next one are tried first; otherwise the node's block of forest nodes
        narrows the search to the documents that meet that block (a few), whatever the number of documents.
        """
        cdef const int64_t* start = self.doc_start.data()
        cdef int32_t lo, hi, mid, b
        if hint >= 0 and start[hint] <= node:
            if node < start[hint + 1]:
                return hint
            if hint + 2 <= self.n_docs and node < start[hint + 2]:
                return hint + 1
        b = node >> self.doc_block_bits
        lo = self.block_doc[b]
        hi = self.block_doc[b + 1] + 1
        while hi - lo > 1:
            mid = lo + (hi - lo) // 2
            if start[mid] <= node:
                lo = mid
            else:
                hi = mid
        return lo

    cdef int32_t _push(self, PNode& p) except -1
    cdef int _load_forest(self, const int32_t[::1] lab, const int32_t[::1] par, const int64_t[:] off,
                          const int32_t[:] rank, int link_far, int64_t compact_at, int doc_block_bits) except -1
    cdef int _link(self, const int32_t* parents) except -1
    cdef void _release_occ(self, int32_t i) noexcept
    cdef int _compact_occ(self) except -1
    cdef const int64_t* _occ_list(self, int32_t s, vector[int64_t]& unpacked) noexcept
    cdef int _hold_occ(self, int32_t i, const int64_t* occ, Py_ssize_t n) except -1
    cdef void _set_docs(self, Py_ssize_t i, const int64_t* occ, Py_ssize_t n_occ)
    cdef int32_t _support_at_least(self, vector[int64_t]& occ, int32_t k, int32_t* first)
    cdef int32_t _support(self, vector[int64_t]& occ, int32_t first)
