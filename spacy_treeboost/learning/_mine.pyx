# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Subtree mining by rightmost extension over a search space cached across rounds (`PatternCache`), and each boosting
round's best rule by branch and bound (`SearchSpace`), with criteria whose bounds hold for every supertree."""
from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t, uint16_t
from libc.math cimport sqrt, fabs, INFINITY, NAN
from libc.stdlib cimport free
from libc.string cimport memcpy, memmove
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.algorithm cimport sort as std_sort, is_sorted, make_heap, pop_heap
from libcpp.pair cimport pair
from cython.operator cimport dereference as deref

from spacy_treeboost.learning._cpu cimport (random_access_alloc, release_free_heap, run_end, prefetch, shared_load,
                                            shared_store, add_pairs, positive_at, sqrt6, sqrt_diff)
from spacy_treeboost.models._occurrences cimport COUNT_CAP, sat_add, pack, occ_node, occ_mult, merge_occurrences
from spacy_treeboost.trees._buffers cimport GrowBuf

import numpy

cdef enum:
    CRIT_IWAKURA = 0
    CRIT_Z = 1
    CRIT_BACT = 2


cdef inline double value(int crit, double P, double N, double Wp, double Wn) noexcept nogil:
    """The selection value of a stump with blocks (P, N) and (Wp, Wn)."""
    return value_outside(crit, P, N, outside_term(crit, Wp, Wn))


cdef inline double outside_term(int crit, double Wp, double Wn) noexcept nogil:
    """The part of `value` from the documents without the pattern (the same for every threshold)."""
    cdef double b = sqrt_diff(0.0 if Wp < 0 else Wp, 0.0 if Wn < 0 else Wn)
    if crit == CRIT_IWAKURA:
        return fabs(b)
    return b * b


cdef inline double value_outside(int crit, double P, double N, double outside) noexcept nogil:
    """`value` given its `outside_term`: the same operations in the same order."""
    cdef double a = sqrt_diff(P, N)
    if crit == CRIT_IWAKURA:
        return fabs(a) + outside
    return a * a + outside


cdef inline double clip(double x, double lo, double hi) nogil:
    return lo if x < lo else (hi if x > hi else x)


cdef inline double bound(int crit, double Ap, double An, double Wp, double Wn, double Tp, double Tn) noexcept nogil:
    """An upper bound on the value of every supertree at every threshold, from the positive and negative weight
    inside the pattern's documents (Ap, An), outside them (Wp, Wn) and in all (Tp, Tn)."""
    cdef double ap, an, Bp, Bn
    if crit == CRIT_BACT:
        Bp = 2 * Ap - (Tp - Tn)
        Bn = 2 * An + (Tp - Tn)
        return Bp if Bp > Bn else Bn
    if crit == CRIT_Z:
        return Tp + Tn - 2 * sqrt(Wp * Wn)
    ap = clip((Tp - An) / 2, 0, Ap)
    an = clip((Tn - Ap) / 2, 0, An)
    cdef double x[6]
    cdef double r[6]
    x[0] = ap + An
    x[1] = Wp + (Ap - ap)
    x[2] = Wn
    x[3] = Ap + an
    x[4] = Wn + (An - an)
    x[5] = Wp
    sqrt6(x, r)
    Bp = r[0] + r[1] - r[2]
    Bn = r[3] + r[4] - r[5]
    return Bp if Bp > Bn else Bn


cdef inline double max0(double x) noexcept nogil:
    return x if x > 0 else 0.0


cdef inline double tie_tol(double v) noexcept nogil:
    """How close two criterion values count as a tie."""
    return 1e-12 * (fabs(v) if fabs(v) > 1.0 else 1.0)


CRITERIA = {"iwakura": CRIT_IWAKURA, "z": CRIT_Z, "bact": CRIT_BACT}


cdef double WEIGHT_SLACK = 1e-12


cdef inline double weight_bound(double S, double Tp, double Tn) noexcept nogil:
    """An upper bound, increasing in S, on the iwakura `bound` of a pattern of weight S = Ap + An: in
    Bp = sqrt(ap + An) + sqrt(Wp + Ap - ap) - sqrt(Wn), ap + An <= S, Wp + Ap <= Tp and Wn >= Tn - S; likewise Bn.
    WEIGHT_SLACK, far above the rounding of the sums, keeps it above the bound computed from the sums."""
    cdef double root = sqrt(S)
    cdef double Bp = root + sqrt(Tp + WEIGHT_SLACK) - sqrt(max0(Tn - S - WEIGHT_SLACK))
    cdef double Bn = root + sqrt(Tn + WEIGHT_SLACK) - sqrt(max0(Tp - S - WEIGHT_SLACK))
    return Bp if Bp > Bn else Bn


cdef double weight_cut(double Tp, double Tn, double threshold) noexcept nogil:
    """The largest S (by bisection) with weight_bound(S) < threshold, or -1 when weight_bound(0) reaches it; as
    sqrt is correctly rounded, every smaller S is below the threshold too."""
    cdef double lo = 0.0, hi = Tp + Tn + 1.0, mid
    cdef int k
    if not weight_bound(lo, Tp, Tn) < threshold:
        return -1.0
    for k in range(64):
        mid = 0.5 * (lo + hi)
        if weight_bound(mid, Tp, Tn) < threshold:
            lo = mid
        else:
            hi = mid
    return lo


def py_weight_bound(double S, double Tp, double Tn) -> float:
    """`weight_bound`, for the tests."""
    return weight_bound(S, Tp, Tn)


def py_weight_cut(double Tp, double Tn, double threshold) -> float:
    """`weight_cut`, for the tests."""
    return weight_cut(Tp, Tn, threshold)


def py_bound(str criterion, double Ap, double An, double Tp, double Tn) -> float:
    """The pruning bound for a pattern with positive/negative weight Ap/An inside its documents."""
    return bound(CRITERIA[criterion], Ap, An, max0(Tp - Ap), max0(Tn - An), Tp, Tn)


def tie_tolerance(double v) -> float:
    """`tie_tol`: how close two criterion values count as a tie."""
    return tie_tol(v)


def py_value(str criterion, double P, double N, double Wp, double Wn) -> float:
    """`value`, for the tests."""
    return value(CRITERIA[criterion], P, N, Wp, Wn)


cdef enum:
    CHUNK_BITS = 16
    CHUNK = 65536
    BIG_COUNT = 255  # pool counts of BIG_COUNT or more are kept in a table beside the one-byte counts
    LINK_FAR = 65535  # links of this distance or more are looked up in a side table
    UNEXPANDED = 0
    EXPANDED = 1
    TRIM_SHIFT = 4  # free heap pages go back to the system once the cache has grown by 1/2^TRIM_SHIFT

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

cdef struct Kept:
    # a document's kept single-document pattern (-1: none yet) and its size
    int32_t node
    int32_t size

cdef struct Scan:
    # what the child scan reads of a pattern: n_docs (-(doc + 1) for a pattern in one document), label, and where
    # its documents start in the pool
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


cdef class PatternCache:
    """The rightmost-extension enumeration tree over one training forest, each pattern with its documents and counts.

    labels, parents, offsets (numpy.ndarray): The forest's preorder arrays.
    label_rank (numpy.ndarray): The rank of each label id in code-point order of the label strings.
    max_pattern_size (int): The largest pattern (nodes).
    min_support (int): The fewest documents a pattern must occur in.
    rare_up_to (int): Patterns of at most this many nodes need only occur.
    include_root (bool): Allow patterns that contain the documents' root nodes.
    max_cache_bytes (int): Raise MemoryError when the cache would grow past this.
    single_document_dominance (bool): Of the patterns of one document, cache only the first in the tie order and
        never extend it: they all tie under any weights, so `best_rule` gives the same answers.
    _link_far, _compact_at, _doc_block_bits (int): For the tests: the distance from which links are looked up in a
        side table, the garbage (words) from which the occurrence arena is compacted, and log2 of the forest
        nodes per block of the node-to-document lookup.
    """
    cdef vector[uint8_t] label_ok
    cdef vector[int32_t] roots
    cdef vector[uint8_t] root_owned
    cdef vector[Kept] single_keep
    cdef public int32_t max_pattern_size, min_support, rare_up_to
    cdef public bint single_document_dominance
    cdef bint include_root_nodes
    cdef public int64_t max_cache_bytes
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

    cdef inline void _put_count(self, int64_t k, int32_t c):
        """Pool entry k's count: one byte, or BIG_COUNT and an entry of `big_counts`."""
        if c >= BIG_COUNT:
            self.big_counts[k] = c
        self.pool_counts[k] = BIG_COUNT if c >= BIG_COUNT else <uint8_t>c

    cdef inline int32_t _count(self, int64_t k) noexcept:
        """The count of pool entry k."""
        cdef uint8_t c = self.pool_counts[k]
        return c if c < BIG_COUNT else deref(self.big_counts.find(k)).second

    cdef inline int32_t _doc_of(self, int32_t node, int32_t hint) noexcept nogil:
        """The document of a node, given a document at or before it (or -1): that one and the next are tried, then
        the documents that meet the node's block."""
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

    cdef inline int32_t _support_needed(self, int32_t size) noexcept:
        """The documents a pattern of `size` nodes must occur in."""
        return 1 if size <= self.rare_up_to else self.min_support

    cdef inline bint _never_extended(self, int32_t i) noexcept:
        """Pattern i occurs in one document and single-document dominance is on: its supertrees never win."""
        return self.single_document_dominance and self.scan[i].docs < 0

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

    def __dealloc__(self):
        free(self.forest)
        for k in range(self.chunks.size()):
            free(self.chunks[k])

    cdef int32_t _push(self, PNode& p) except -1:
        cdef PNode* chunk
        if (self.n_nodes >> CHUNK_BITS) >= <int32_t>self.chunks.size():
            chunk = <PNode*>random_access_alloc(CHUNK * sizeof(PNode))
            if chunk == NULL:
                raise MemoryError("cannot allocate the subtree search space")
            self.chunks.push_back(chunk)
        self.node(self.n_nodes)[0] = p
        self.scan.push_back(Scan(p.n_docs, p.label, 0))
        self.n_nodes += 1
        return self.n_nodes - 1

    cdef int _load_forest(self, const int32_t[::1] lab, const int32_t[::1] par, const int64_t[:] off,
                          const int32_t[:] rank, int link_far, int64_t compact_at, int doc_block_bits) except -1:
        """The forest's node links and the documents' first nodes (the caller's labels are kept, not copied)."""
        cdef Py_ssize_t n = lab.shape[0], v, d
        cdef int32_t n_labels = rank.shape[0]
        self.doc_block_bits = doc_block_bits
        self.link_far = <uint16_t>link_far
        self.compact_at = max(compact_at, 1)
        self.n_docs = off.shape[0] - 1
        if par.shape[0] != n or (n and off[off.shape[0] - 1] != n):
            raise ValueError("labels, parents and offsets disagree in length")
        self.n_nodes_forest = n
        self.forest = <FNode*>random_access_alloc(n * sizeof(FNode))
        if self.forest == NULL:
            raise MemoryError("cannot allocate the forest's node records")
        self.doc_start.resize(self.n_docs + 1)
        for d in range(self.n_docs + 1):
            self.doc_start[d] = off[d]
        self.block_doc.resize((n >> self.doc_block_bits) + 2)
        d = 0
        for v in range(self.block_doc.size()):
            while d + 1 < self.n_docs and self.doc_start[d + 1] <= (<int64_t>v << self.doc_block_bits):
                d += 1
            self.block_doc[v] = <int32_t>d
        self.label_rank.resize(n_labels)
        for v in range(n_labels):
            self.label_rank[v] = rank[v]
        for v in range(n):
            if lab[v] < 0 or lab[v] >= n_labels:
                raise ValueError(f"node {v} has label id {lab[v]} outside the vocabulary of {n_labels}")
            self.forest[v] = FNode(0, 0)
        self.labels_owner = lab
        self.labels = &lab[0] if n else NULL
        self._link(&par[0] if n else NULL)
        return 0

    cdef int _link(self, const int32_t* parents) except -1:
        """Parent and next-sibling links as distances, in one pass; `path` holds the path from the document root to
        the last node, each with its last child so far."""
        cdef Py_ssize_t n = self.n_nodes_forest, v
        cdef vector[pair[int32_t, int32_t]] path
        for v in range(n):
            while not path.empty() and path.back().first != parents[v]:
                path.pop_back()
            if path.empty() and parents[v] >= 0:
                raise ValueError(f"node {v} has parent {parents[v]}, which is not on the path from its "
                                 f"document root to node {v - 1}: the forest's arrays must be in preorder")
            if not path.empty():
                if path.back().second >= 0:
                    self.forest[path.back().second].right = self._link_distance(
                        self.right_far, path.back().second, <int32_t>v)
                path.back().second = <int32_t>v
                self.forest[v].up = self._link_distance(self.up_far, <int32_t>v, parents[v])
            path.push_back(pair[int32_t, int32_t](<int32_t>v, -1))
        std_sort(self.right_far.begin(), self.right_far.end())
        return 0

    cdef void _release_occ(self, int32_t i) noexcept:
        """Pattern i's occurrence list is no longer needed: its entries become garbage of the arena."""
        cdef int32_t s = self.node(i)[0].occ_slot
        if s < 0:
            return
        self.occ_words -= _words(self.occ[s])
        self.occ_garbage += _words(self.occ[s])
        self.occ[s].len = 0
        self.node(i)[0].occ_slot = -1

    cdef int _compact_occ(self) except -1:
        """Move the held lists down over the garbage once it is a quarter of their size, and give the rest of the
        arena back (each entry moves O(1) times on average)."""
        cdef int64_t live = self.occ_words, w = 0
        cdef Py_ssize_t s
        cdef OccRef* ref
        if 4 * self.occ_garbage <= live or self.occ_garbage < self.compact_at:
            return 0
        for s in range(self.occ.size()):
            ref = &self.occ[s]
            if ref.len == 0:
                continue
            if ref.wide:
                w += w & 1
            if ref.off != w:
                memmove(self.arena.data() + w, self.arena.data() + ref.off, _words(ref[0]) * sizeof(int32_t))
                ref.off = w
            w += _words(ref[0])
        self.arena.resize(w)
        self.arena.shrink_to_fit()
        self.occ_garbage = 0
        return 0

    cdef const int64_t* _occ_list(self, int32_t s, vector[int64_t]& unpacked) noexcept:
        """Slot s's occurrence list as packed entries: in the arena if wide, else in `unpacked`; valid until the arena
        grows."""
        cdef OccRef ref = self.occ[s]
        cdef const int32_t* nodes = self.arena.data() + ref.off
        cdef Py_ssize_t k
        if ref.wide:
            return <const int64_t*>nodes
        unpacked.resize(ref.len)
        for k in range(ref.len):
            unpacked[k] = pack(<int64_t>nodes[k], 1)
        return unpacked.data()

    cdef int _hold_occ(self, int32_t i, const int64_t* occ, Py_ssize_t n) except -1:
        """Keep pattern i's occurrence list in the arena: the nodes alone if every multiplicity is 1, else wide."""
        cdef Py_ssize_t k
        cdef int32_t wide = 0
        for k in range(n):
            if occ_mult(occ[k]) != 1:
                wide = 1
                break
        cdef int64_t at = self.arena.size()
        cdef int32_t* out
        if wide:
            at += at & 1
            self.arena.resize(at + 2 * n)
            memcpy(self.arena.data() + at, occ, n * sizeof(int64_t))
        else:
            self.arena.resize(at + n)
            out = self.arena.data() + at
            for k in range(n):
                out[k] = occ_node(occ[k])
        self.node(i)[0].occ_slot = self.occ.size()
        cdef OccRef ref = OccRef(at, <int32_t>n, wide)
        self.occ.push_back(ref)
        self.occ_words += _words(ref)
        return 0

    cdef void _set_docs(self, Py_ssize_t i, const int64_t* occ, Py_ssize_t n_occ):
        """Per-document counts from an occurrence list sorted by node."""
        cdef vector[pair[int64_t, int32_t]] pd
        cdef int32_t doc = -1, cur_doc = -1, c = 0
        cdef Py_ssize_t k
        for k in range(n_occ):
            doc = self._doc_of(occ_node(occ[k]), doc)
            if doc != cur_doc:
                if cur_doc >= 0:
                    pd.push_back(pair[int64_t, int32_t](-<int64_t>c, cur_doc))
                cur_doc = doc
                c = 0
            c = sat_add(c, occ_mult(occ[k]))
        if cur_doc >= 0:
            pd.push_back(pair[int64_t, int32_t](-<int64_t>c, cur_doc))
        if not is_sorted(pd.begin(), pd.end()):
            std_sort(pd.begin(), pd.end())
        self.scan[i].doc_off = self.pool_docs.size()
        self.node(i)[0].n_docs = pd.size()
        self.scan[i].docs = -(pd[0].second + 1) if pd.size() == 1 else <int32_t>pd.size()
        for k in range(pd.size()):
            self.pool_docs.push_back(pd[k].second)
            self.pool_counts.push_back(0)
            self._put_count(self.pool_counts.size() - 1, <int32_t>(-pd[k].first))

    cdef int32_t _support_at_least(self, vector[int64_t]& occ, int32_t k, int32_t* first):
        """The documents of a sorted occurrence list when they are 1 or at least k, otherwise a number in [2, k);
        `first` receives the first one's document."""
        first[0] = self._doc_of(occ_node(occ[0]), -1)
        if k > 2:
            return self._support(occ, first[0])
        return 1 if self._doc_of(occ_node(occ[occ.size() - 1]), first[0]) == first[0] else 2

    cdef int32_t _support(self, vector[int64_t]& occ, int32_t first):
        """The number of documents of a sorted occurrence list whose first occurrence is in document `first`."""
        cdef int32_t n = 1, last = first, doc = first
        cdef Py_ssize_t k
        for k in range(1, occ.size()):
            doc = self._doc_of(occ_node(occ[k]), doc)
            if doc != last:
                n += 1
                last = doc
        return n

    def cache_bytes(self) -> int:
        """Approximate bytes held by the cached search space."""
        return (self.n_nodes * sizeof(PNode) + self.scan.capacity() * sizeof(Scan)
                + self.occ.capacity() * sizeof(OccRef) + 4 * self.arena.capacity()
                + 4 * self.pool_docs.capacity() + self.pool_counts.capacity() + 32 * self.big_counts.size())

    def memory_report(self) -> dict:
        """Bytes held per part of the search space (capacities, not sizes), to see what grows."""
        cdef Py_ssize_t k, unexpanded = 0
        for k in range(self.occ.size()):
            unexpanded += self.occ[k].len > 0
        return {
            "patterns": self.n_nodes,
            "pattern_nodes": self.chunks.size() * CHUNK * sizeof(PNode),
            "child_scan": self.scan.capacity() * sizeof(Scan),
            "pattern_documents": 4 * self.pool_docs.capacity() + self.pool_counts.capacity(),
            "large_counts": self.big_counts.size(),
            "pattern_document_entries": self.pool_docs.size(),
            "occurrence_lists": 4 * self.occ_words,
            "occurrence_arena": 4 * self.arena.capacity(),
            "occurrence_headers": self.occ.capacity() * sizeof(OccRef),
            "occurrence_lists_held": unexpanded,
            "forest_labels": 4 * self.n_nodes_forest,
            "forest_links": sizeof(FNode) * self.n_nodes_forest + 8 * (
                self.up_far.capacity() + self.right_far.capacity() + self.doc_start.capacity())
                + 4 * self.block_doc.capacity(),
        }

    @property
    def n_patterns(self) -> int:
        return self.n_nodes

    def pattern_code(self, int32_t i):
        """The pattern's code: a tuple of (depth, label id) in preorder."""
        out = []
        while i >= 0:
            out.append((self.node(i)[0].depth, self.node(i)[0].label))
            i = self.node(i)[0].parent
        return tuple(reversed(out))

    def pattern_docs(self, int32_t i):
        """(docs, counts) of pattern i, sorted by count descending, then doc."""
        cdef PNode p = self.node(i)[0]
        docs = numpy.empty(p.n_docs, dtype=numpy.int32)
        counts = numpy.empty(p.n_docs, dtype=numpy.int32)
        cdef int32_t[:] dv = docs, cv = counts
        cdef Py_ssize_t k
        for k in range(p.n_docs):
            dv[k] = self.pool_docs[self.scan[i].doc_off + k]
            cv[k] = self._count(self.scan[i].doc_off + k)
        return docs, counts

    def pattern_matrix(self):
        """Every pattern's documents and counts as one CSC matrix's (indptr, documents, counts), column i pattern i,
        documents sorted in each column."""
        cdef int64_t n = self.n_nodes, total = 0, off, start
        cdef int32_t i, k, m
        for i in range(n):
            total += self.node(i)[0].n_docs
        indptr = numpy.empty(n + 1, dtype=numpy.int64)
        docs = numpy.empty(total, dtype=numpy.int32)
        counts = numpy.empty(total, dtype=numpy.int32)
        cdef int64_t[::1] ip = indptr
        cdef int32_t[::1] dv = docs, cv = counts
        cdef vector[pair[int32_t, int32_t]] col
        ip[0] = 0
        start = 0
        for i in range(n):
            m = self.node(i)[0].n_docs
            off = self.scan[i].doc_off
            col.resize(m)
            for k in range(m):
                col[k].first = self.pool_docs[off + k]
                col[k].second = self._count(off + k)
            std_sort(col.begin(), col.end())
            for k in range(m):
                dv[start + k] = col[k].first
                cv[start + k] = col[k].second
            start += m
            ip[i + 1] = start
        return indptr, docs, counts

    def pattern_table(self):
        """Every pattern node's parent (-1 for a root), depth, label id and size (int32 arrays): pattern i's code is
        the (depth, label) of its ancestors, root first, then its own."""
        cdef int32_t n = self.n_nodes, i
        parent = numpy.empty(n, dtype=numpy.int32)
        depth = numpy.empty(n, dtype=numpy.int32)
        label = numpy.empty(n, dtype=numpy.int32)
        size = numpy.empty(n, dtype=numpy.int32)
        cdef int32_t[::1] pv = parent, dv = depth, lv = label, sv = size
        for i in range(n):
            pv[i] = self.node(i)[0].parent
            dv[i] = self.node(i)[0].depth
            lv[i] = self.node(i)[0].label
            sv[i] = self.node(i)[0].size
        return parent, depth, label, size

    def pattern_size(self, int32_t i) -> int:
        return self.node(i)[0].size

    def __init__(self, labels, parents, offsets, label_rank, *, int max_pattern_size=3,
                 int min_support=1, int rare_up_to=0, bint include_root=False, max_cache_bytes=2 << 30,
                 bint single_document_dominance=False, int _link_far=LINK_FAR, int64_t _compact_at=1 << 18,
                 int _doc_block_bits=12):
        cdef const int32_t[::1] lab = numpy.ascontiguousarray(labels, dtype=numpy.int32)
        cdef const int32_t[::1] par = numpy.ascontiguousarray(parents, dtype=numpy.int32)
        cdef const int64_t[:] off = numpy.ascontiguousarray(offsets, dtype=numpy.int64)
        cdef const int32_t[:] rank = numpy.ascontiguousarray(label_rank, dtype=numpy.int32)
        if max_pattern_size < 1:
            raise ValueError(f"max_pattern_size must be at least 1, got {max_pattern_size}")
        if min_support < 1:
            raise ValueError(f"min_support must be at least 1, got {min_support}")
        if not 2 <= _link_far <= LINK_FAR:
            raise ValueError(f"_link_far must be in [2, {LINK_FAR}], got {_link_far}")
        if not 1 <= _doc_block_bits <= 30:
            raise ValueError(f"_doc_block_bits must be in [1, 30], got {_doc_block_bits}")
        if rare_up_to < 0:
            raise ValueError(f"rare_up_to must be at least 0, got {rare_up_to}")
        self.max_pattern_size = max_pattern_size
        self.min_support = min_support
        self.rare_up_to = rare_up_to
        self.max_cache_bytes = max_cache_bytes
        self.single_document_dominance = single_document_dominance
        self._load_forest(lab, par, off, rank, _link_far, _compact_at, _doc_block_bits)
        order = numpy.argsort(numpy.asarray(rank), kind="stable").astype(numpy.int32)
        self._build_singles(rank.shape[0], include_root, order, &par[0] if lab.shape[0] else NULL)

    cdef int _build_singles(self, int32_t n_labels, bint include_root, const int32_t[:] order,
                            const int32_t* parents) except -1:
        cdef Py_ssize_t n = self.n_nodes_forest, v, i
        cdef vector[int32_t] lab_docs, last_doc
        cdef int32_t l, doc = 0
        lab_docs.assign(n_labels, 0)
        last_doc.assign(n_labels, -1)
        for v in range(n):
            if parents[v] < 0 and not include_root:
                continue
            l = self.labels[v]
            while self.doc_start[doc + 1] <= v:
                doc += 1
            if last_doc[l] != doc:
                last_doc[l] = doc
                lab_docs[l] += 1
        self.label_ok.assign(n_labels, 0)
        cdef vector[int32_t] slot
        slot.assign(n_labels, -1)
        for i in range(n_labels):
            l = order[i]
            if lab_docs[l] >= self._support_needed(1):
                self.label_ok[l] = 1
                slot[l] = self.n_nodes
                self._push(PNode(parent=-1, label=l, depth=0, size=1, n_docs=0, first_child=-1, n_children=0,
                                 occ_slot=-1, state=UNEXPANDED))
                self.roots.push_back(slot[l])
        self._root_documents(n_labels, include_root, slot, lab_docs, parents)
        if self.single_document_dominance:
            self.single_keep.assign(self.n_docs, Kept(-1, 0))
        cdef int32_t d
        for i in range(self.n_nodes):
            if self.max_pattern_size > 1 and self._never_extended(i):
                d = -self.scan[i].docs - 1
                if self.single_keep[d].node < 0:
                    self.single_keep[d].node = <int32_t>i
                    self.single_keep[d].size = self.node(i).size
        return 0

    cdef int _root_documents(self, int32_t n_labels, bint include_root, vector[int32_t]& slot,
                             vector[int32_t]& lab_docs, const int32_t* parents) except -1:
        """Each root pattern's documents and counts, counted document by document into its place in the pool, then
        ordered by count (as `_set_docs` orders them). The roots' occurrence lists are not kept: `_expand` lists a
        root's occurrences from its documents when it is first extended (`_root_occurrences`)."""
        cdef Py_ssize_t i, k, m
        cdef int64_t v, total = 0, at
        cdef int32_t l, d, c
        cdef vector[int64_t] fill
        cdef vector[int32_t] in_doc, touched
        cdef unordered_map[int64_t, int32_t] big
        cdef vector[pair[int64_t, int32_t]] pd
        self.include_root_nodes = include_root
        fill.resize(self.n_nodes)
        for i in range(self.n_nodes):
            fill[i] = total
            total += lab_docs[self.node(i)[0].label]
        self.pool_docs.resize(total)
        self.pool_counts.resize(total)
        in_doc.assign(n_labels, 0)
        for d in range(self.n_docs):
            for v in range(self.doc_start[d], self.doc_start[d + 1]):
                if parents[v] < 0 and not include_root:
                    continue
                l = self.labels[v]
                if slot[l] < 0:
                    continue
                if in_doc[l] == 0:
                    touched.push_back(l)
                in_doc[l] = sat_add(in_doc[l], 1)
            for k in range(touched.size()):
                l = touched[k]
                at = fill[slot[l]]
                fill[slot[l]] += 1
                self.pool_docs[at] = d
                if in_doc[l] >= BIG_COUNT:
                    big[at] = in_doc[l]
                    self.pool_counts[at] = BIG_COUNT
                else:
                    self.pool_counts[at] = <uint8_t>in_doc[l]
                in_doc[l] = 0
            touched.clear()
        at = 0
        for i in range(self.n_nodes):
            m = lab_docs[self.node(i)[0].label]
            pd.resize(m)
            for k in range(m):
                c = self.pool_counts[at + k]
                pd[k] = pair[int64_t, int32_t](-<int64_t>(c if c < BIG_COUNT else big[at + k]), self.pool_docs[at + k])
            if not is_sorted(pd.begin(), pd.end()):
                std_sort(pd.begin(), pd.end())
            for k in range(m):
                self.pool_docs[at + k] = pd[k].second
                self._put_count(at + k, <int32_t>(-pd[k].first))
            self.scan[i].doc_off = at
            self.node(i)[0].n_docs = <int32_t>m
            self.scan[i].docs = -(pd[0].second + 1) if m == 1 else <int32_t>m
            at += m
        return 0

    cdef int _root_occurrences(self, int32_t i, vector[int64_t]& out) except -1:
        """Root pattern i's occurrence list (packed, multiplicity 1, by node), from the nodes of its documents."""
        cdef int32_t l = self.node(i)[0].label, m = self.node(i)[0].n_docs
        cdef int64_t off = self.scan[i].doc_off, v
        cdef vector[int32_t] docs
        cdef Py_ssize_t k
        cdef int64_t total = 0
        docs.assign(self.pool_docs.data() + off, self.pool_docs.data() + off + m)
        std_sort(docs.begin(), docs.end())
        for k in range(m):
            total += self._count(off + k)
        out.clear()
        out.reserve(total)
        for k in range(m):
            for v in range(self.doc_start[docs[k]], self.doc_start[docs[k] + 1]):
                if self.labels[v] == l and (self.include_root_nodes or self.forest[v].up != 0):
                    out.push_back(pack(v, 1))
        return 0


    cdef int _expand(self, int32_t i) except -1:
        """Materialize every rightmost extension of pattern i (weight-independent)."""
        cdef PNode p = self.node(i)[0]
        cdef int32_t dk = p.depth, d, lab
        cdef Py_ssize_t j, s
        cdef unordered_map[int64_t, int32_t] slots
        cdef vector[vector[int64_t]] bufs
        cdef vector[int64_t] keys
        cdef vector[int64_t]* buf
        cdef int64_t n_labels = self.label_rank.size()
        cdef vector[int64_t] unpacked
        if p.occ_slot >= 0:
            self._extensions(self._occ_list(p.occ_slot, unpacked), self.occ[p.occ_slot].len, dk, slots, bufs, keys)
        else:
            self._root_occurrences(i, unpacked)
            self._extensions(unpacked.data(), unpacked.size(), dk, slots, bufs, keys)
        unpacked.clear()
        unpacked.shrink_to_fit()
        # order children by code: (depth, label rank)
        cdef vector[pair[int64_t, int32_t]] order
        for s in range(keys.size()):
            d = <int32_t>(keys[s] // n_labels)
            lab = <int32_t>(keys[s] % n_labels)
            order.push_back(pair[int64_t, int32_t](d * n_labels + self.label_rank[lab], <int32_t>s))
        std_sort(order.begin(), order.end())
        cdef bint keep_occ = p.size + 1 < self.max_pattern_size
        cdef int32_t first = self.n_nodes, n_kids = 0
        cdef int32_t support, first_doc
        for j in range(order.size()):
            s = order[j].second
            buf = &bufs[s]
            merge_occurrences(buf[0])
            support = self._support_at_least(buf[0], self.min_support, &first_doc)
            if support < self._support_needed(p.size + 1):
                buf.clear()
                buf.shrink_to_fit()
                continue
            self._push(PNode(parent=i, label=<int32_t>(keys[s] % n_labels), depth=<int32_t>(keys[s] // n_labels),
                             size=p.size + 1, n_docs=0, first_child=-1, n_children=0, occ_slot=-1, state=UNEXPANDED))
            if support == 1 and self.single_document_dominance and not self._keep_single(first_doc):
                self.n_nodes -= 1
                self.scan.pop_back()
                buf.clear()
                buf.shrink_to_fit()
                continue
            self._set_docs(self.n_nodes - 1, buf.data(), buf.size())
            if support < self._support_needed(p.size + 2):
                self.node(self.n_nodes - 1)[0].state = EXPANDED
            elif keep_occ and not (support == 1 and self.single_document_dominance):
                self._hold_occ(self.n_nodes - 1, buf.data(), buf.size())
            buf.clear()
            buf.shrink_to_fit()
            n_kids += 1
        self._release_occ(i)
        self._compact_occ()
        self.node(i)[0].first_child = first
        self.node(i)[0].n_children = n_kids
        self.node(i)[0].state = EXPANDED
        if self.cache_bytes() > self.max_cache_bytes:
            raise MemoryError(
                f"The subtree search space needs more than max_cache_mb={self.max_cache_bytes >> 20} MB "
                f"({self.n_nodes} patterns cached over {self.n_docs} documents). Raise max_cache_mb (if the "
                f"machine has the memory), lower max_pattern_size (now {self.max_pattern_size}) or raise "
                f"min_support (now {self.min_support}; 2 or more drops the subtrees of a single document).")
        return 0

    cdef bint _keep_single(self, int32_t d):
        """Whether the pattern just pushed, which occurs in document d only, comes before the document's
        kept one in the tie order (size, then code); if so it becomes the kept one."""
        cdef Kept* kept = &self.single_keep[d]
        cdef int32_t new = self.n_nodes - 1, size = self.node(new).size
        if kept.node >= 0 and (size > kept.size or (size == kept.size and not self._code_precedes(new, kept.node))):
            return False
        kept.node = new
        kept.size = size
        return True

    cdef bint _code_precedes(self, int32_t a, int32_t b):
        """Whether pattern a comes before pattern b in the tie order: size ascending, then code ascending (their
        first differing nodes, found by walking both up to a common parent)."""
        cdef int32_t sa = self.node(a).size, sb = self.node(b).size, pa, pb
        if sa != sb:
            return sa < sb
        if a == b:
            return False
        pa = self.node(a).parent
        pb = self.node(b).parent
        while pa != pb:
            a = pa
            b = pb
            pa = self.node(a).parent
            pb = self.node(b).parent
        return self._node_code(a) < self._node_code(b)

    cdef int _extensions(self, const int64_t* occ, Py_ssize_t n_occ, int32_t dk, unordered_map[int64_t, int32_t]& slots,
                         vector[vector[int64_t]]& bufs, vector[int64_t]& keys) except -1:
        """Every rightmost extension of the sorted occurrences `occ` of a pattern whose rightmost node is at depth dk,
        added to one buffer per (depth, label) key. The later siblings of the rightmost-path node at depth d are
        swept once per parent, each with the summed multiplicities of the occurrences to its left (O(n) per depth)."""
        cdef int64_t n_labels = self.label_rank.size()
        cdef Py_ssize_t k, g, e, ptr
        cdef int32_t d, r, c, parent, lab
        cdef int64_t acc
        cdef bint ordered
        cdef vector[int32_t] ancestor
        cdef vector[pair[int64_t, int64_t]] siblings  # (pack(parent, node), multiplicity)
        for k in range(n_occ):
            if k + 8 < n_occ:
                c = occ_node(occ[k + 8]) + 1
                if c < self.n_nodes_forest:
                    prefetch(self.forest + c)
                    prefetch(self.labels + c)
            r = occ_node(occ[k])
            c = r + 1 if r + 1 < self.n_nodes_forest and self.parent_of(r + 1) == r else -1
            while c >= 0:
                lab = self.labels[c]
                if self.label_ok[lab]:
                    self._add_extension((dk + 1) * n_labels + lab, pack(<int64_t>c, occ_mult(occ[k])), slots, bufs, keys)
                c = self.next_of(c)
        if dk == 0 or n_occ == 0:
            return 0
        ancestor.resize(n_occ)
        siblings.resize(n_occ)
        for k in range(n_occ):
            ancestor[k] = occ_node(occ[k])
        for d in range(dk, 0, -1):
            ordered = True
            for k in range(n_occ):
                if d < dk:
                    ancestor[k] = self.parent_of(ancestor[k])
                siblings[k].first = pack(self.parent_of(ancestor[k]), ancestor[k])
                siblings[k].second = occ_mult(occ[k])
                if k and siblings[k].first < siblings[k - 1].first:
                    ordered = False
            if not ordered:
                std_sort(siblings.begin(), siblings.end())
            g = 0
            while g < n_occ:
                parent = occ_node(siblings[g].first)
                e = g + 1
                while e < n_occ and occ_node(siblings[e].first) == parent:
                    e += 1
                acc = 0
                ptr = g
                c = self.next_of(occ_mult(siblings[g].first))
                while c >= 0:
                    while ptr < e and occ_mult(siblings[ptr].first) < c:
                        acc += siblings[ptr].second
                        ptr += 1
                    lab = self.labels[c]
                    if self.label_ok[lab]:
                        self._add_extension(d * n_labels + lab, pack(<int64_t>c, COUNT_CAP if acc > COUNT_CAP else acc),
                                            slots, bufs, keys)
                    c = self.next_of(c)
                g = e
        return 0

    def expand_all(self) -> int:
        """Materialize every pattern up to max_pattern_size; return how many there are."""
        cdef int32_t i = 0
        while i < <int32_t>self.n_nodes:
            if (self.node(i)[0].size < self.max_pattern_size and self.node(i)[0].state == UNEXPANDED
                    and not self._never_extended(i)):
                self._expand(i)
            i += 1
        return self.n_nodes

    def own_root_labels(self, owned) -> int:
        """Search only the patterns whose root label id has a true entry in `owned` (the others' occurrence lists are
        released); return how many roots remain."""
        cdef const uint8_t[:] mask = numpy.ascontiguousarray(owned, dtype=numpy.uint8)
        if mask.shape[0] != self.label_rank.size():
            raise ValueError(f"owned needs one entry per label id ({self.label_rank.size()}), got {mask.shape[0]}")
        cdef Py_ssize_t r
        cdef int32_t i, n_owned = 0
        self.root_owned.assign(self.roots.size(), 1)
        for r in range(self.roots.size()):
            i = self.roots[r]
            if mask[self.node(i).label]:
                n_owned += 1
                continue
            self.root_owned[r] = 0
            if self.node(i).state == UNEXPANDED and (self.node(i).occ_slot >= 0 or (
                    self.node(i).size < self.max_pattern_size and not self._never_extended(i))):
                self._release_occ(i)
                self.node(i).state = EXPANDED
        self._compact_occ()
        return n_owned

    def pattern_code_key(self, int32_t i):
        """The tie-order key of pattern i: (size, ((depth, label rank), ...))."""
        cdef int32_t size = self.node(i)[0].size
        out = []
        while i >= 0:
            out.append((self.node(i)[0].depth, self.label_rank[self.node(i)[0].label]))
            i = self.node(i)[0].parent
        return (size, tuple(reversed(out)))

def label_sizes(labels, parents, int32_t n_labels, bint include_root):
    """The int64 number of forest nodes of each label id, the roots (parent -1) left out unless `include_root`, in
    one pass (numpy's bincount would copy the int32 labels to int64 first)."""
    cdef const int32_t[::1] lab = numpy.ascontiguousarray(labels, dtype=numpy.int32)
    cdef const int32_t[::1] par = numpy.ascontiguousarray(parents, dtype=numpy.int32)
    if lab.shape[0] != par.shape[0]:
        raise ValueError(f"labels and parents differ in length ({lab.shape[0]} and {par.shape[0]})")
    if n_labels < 0:
        raise ValueError(f"n_labels must be at least 0, got {n_labels}")
    sizes = numpy.zeros(n_labels, dtype=numpy.int64)
    cdef int64_t[::1] out = sizes
    cdef Py_ssize_t v, n = lab.shape[0], at = -1
    with nogil:
        for v in range(n):
            if lab[v] < 0 or lab[v] >= n_labels:
                at = v
                break
            if include_root or par[v] >= 0:
                out[lab[v]] += 1
    if at >= 0:
        raise ValueError(f"label id {lab[at]} at node {at} is outside [0, {n_labels})")
    return sizes


cdef struct Sums:
    double Ap
    double An
    double Wp
    double Wn
    int32_t cp
    int32_t cn


cdef struct Cand:
    double value
    int32_t node
    int32_t z
    int32_t sign
    double P
    double N
    double Ap
    double An


cdef class SearchSpace(PatternCache):
    """A `PatternCache` (whose arguments it takes) and the search of its best rule each boosting round."""
    # per-round scratch, kept so that rounds reuse their memory instead of faulting fresh pages in
    cdef vector[int32_t] root_label, root_docs
    cdef vector[double] rbound_buf
    cdef vector[Sums] rsums_buf
    cdef vector[pair[double, int32_t]] heap
    cdef vector[double] sbound
    # per document (w, +0.0) if positive, (+0.0, w) if negative, w >= +0.0; a positive document's
    # second value is -0.0, which adds nothing to a sum but marks the document (`positive_at`)
    cdef vector[double] wpn
    cdef double Tp, Tn
    cdef int32_t Np, Nn
    cdef vector[double] ub_by_support, single_bound
    cdef public int64_t nodes_visited
    cdef double cut_threshold, cut_weight
    cdef double* shared_best
    cdef int prepared_crit
    cdef int64_t trim_at

    def prepare(self, weights, y, str criterion="iwakura") -> None:
        """Compute the next `best_rule` call's per-document bounds, so that `best_rule(..., prepared=True)` with the
        same weights, labels and criterion only searches.

        weights (numpy.ndarray): float64 document weights, summing to 1.
        y (numpy.ndarray): int8 labels in {-1, +1}.
        criterion (str): "iwakura", "z" or "bact".
        """
        cdef const double[:] w = numpy.ascontiguousarray(weights, dtype=numpy.float64)
        cdef const signed char[:] yy = numpy.ascontiguousarray(y, dtype=numpy.int8)
        self._check_round(weights, y, w, yy)
        cdef int crit = CRITERIA[criterion]
        self._prepare(w, yy, crit)
        self.prepared_crit = crit + 1

    cdef int _check_round(self, weights, y, const double[:] w, const signed char[:] yy) except -1:
        if w.shape[0] != self.n_docs or yy.shape[0] != self.n_docs:
            raise ValueError("weights and labels must have one entry per training document")
        if not numpy.all(numpy.isfinite(weights)) or numpy.any(numpy.asarray(weights) < 0) or not numpy.sum(weights) > 0:
            raise ValueError("weights must be finite, non-negative and not all zero")
        if not numpy.all(numpy.abs(numpy.asarray(y)) == 1):
            raise ValueError("labels must be -1 or +1")
        return 0

    def best_rule(self, weights, y, str criterion="iwakura", bint presence=False, shared_best=None,
                  bint prepared=False):
        """Find the best rule this round by branch and bound.

        weights (numpy.ndarray): float64 document weights, summing to 1.
        y (numpy.ndarray): int8 labels in {-1, +1}.
        criterion (str): "iwakura" (printed gain), "z" (real AdaBoost Z) or "bact".
        presence (bool): fix the threshold at z=1 (-FQ).
        shared_best (Optional[numpy.ndarray]): One float64 in shared memory, the best value the searches of the
            other root labels have found this round (-inf to start), read and raised by each: pruning against it
            finds the same rule.
        prepared (bool): `prepare` was called with these weights, labels and criterion: only search.
        RETURNS (dict): node (-1 when no pattern exists), z, sign, value, P, N, A_pos, A_neg, nodes_visited...
        """
        cdef int crit = CRITERIA[criterion]
        cdef const double[:] w
        cdef const signed char[:] yy
        if prepared:
            if self.prepared_crit != crit + 1:
                raise ValueError("best_rule(prepared=True) needs a call of prepare with the same criterion first")
        else:
            w = numpy.ascontiguousarray(weights, dtype=numpy.float64)
            yy = numpy.ascontiguousarray(y, dtype=numpy.int8)
            self._check_round(weights, y, w, yy)
            self._prepare(w, yy, crit)
        self.prepared_crit = 0
        cdef double[::1] shared
        if shared_best is not None:
            shared = shared_best
            if shared.shape[0] < 1:
                raise ValueError("shared_best needs one element")
            self.shared_best = &shared[0]
        try:
            return self._best_rule(crit, presence)
        finally:
            self.shared_best = NULL

    cdef void _prepare(self, const double[:] w, const signed char[:] yy, int crit):
        """The class totals, the interleaved weights `wpn` and the bounds by support and by single document."""
        cdef Py_ssize_t k
        self.Tp = self.Tn = 0
        self.Np = self.Nn = 0
        self.wpn.assign(2 * self.n_docs, 0.0)
        for k in range(self.n_docs):
            if yy[k] > 0:
                self.Tp += w[k]
                self.Np += 1
                self.wpn[2 * k] = w[k] + 0.0
                self.wpn[2 * k + 1] = -0.0
            else:
                self.Tn += w[k]
                self.Nn += 1
                self.wpn[2 * k + 1] = w[k] + 0.0
        self._support_bounds(w, yy, crit)
        self._single_bounds(crit)

    cdef dict _best_rule(self, int crit, bint presence):
        cdef Py_ssize_t r
        cdef Cand best
        best.value = -INFINITY
        best.node = -1
        best.z = 1
        best.sign = 1
        self.nodes_visited = 0
        cdef int32_t patterns_before = self.n_nodes
        self.cut_threshold = NAN
        cdef int32_t n_labels = self.label_rank.size()
        self.sbound.assign(n_labels, -INFINITY)
        cdef Py_ssize_t n_roots = self.roots.size()
        self.rbound_buf.resize(n_roots)
        self.rsums_buf.resize(n_roots)
        cdef double* rbound = self.rbound_buf.data()
        cdef Sums* rsums = self.rsums_buf.data()
        if <Py_ssize_t>self.root_label.size() != n_roots:
            self.root_label.resize(n_roots)
            self.root_docs.resize(n_roots)
            for r in range(n_roots):
                self.root_label[r] = self.node(self.roots[r]).label
                self.root_docs[r] = self.node(self.roots[r]).n_docs
        # a root of another worker's label is bounded by its number of documents alone, without summing them
        for r in range(n_roots):
            if self.root_owned.empty() or self.root_owned[r]:
                self._sums(self.roots[r], &rsums[r])
                rbound[r] = self._bound(crit, &rsums[r])
            else:
                rbound[r] = self.ub_by_support[self.root_docs[r]]
            self.sbound[self.root_label[r]] = rbound[r]
        # the root of largest bound first, then the heap of the roots whose bound reaches the best value found
        cdef Py_ssize_t top = -1
        for r in range(self.roots.size()):
            if (self.root_owned.empty() or self.root_owned[r]) and (top < 0 or rbound[r] > rbound[top]):
                top = r
        if top >= 0:
            self._visit(self.roots[top], &rsums[top], crit, presence, &best)
        cdef double threshold = self._threshold(&best)
        self.heap.clear()
        for r in range(self.roots.size()):
            if r != top and (self.root_owned.empty() or self.root_owned[r]) and not rbound[r] < threshold:
                self.heap.push_back(pair[double, int32_t](rbound[r], -<int32_t>r))
        make_heap(self.heap.begin(), self.heap.end())
        while not self.heap.empty():
            pop_heap(self.heap.begin(), self.heap.end())
            r = -self.heap.back().second
            self.heap.pop_back()
            if rbound[r] < self._threshold(&best):
                break
            self._visit(self.roots[r], &rsums[r], crit, presence, &best)
        # free pages go back to the system once the search space has grown by a fraction (rounds reuse them)
        if self.n_nodes >= self.trim_at and self.n_nodes != patterns_before:
            release_free_heap()
            self.trim_at = self.n_nodes + (self.n_nodes >> TRIM_SHIFT)
        cdef int32_t root = best.node
        while root >= 0 and self.node(root).parent >= 0:
            root = self.node(root).parent
        return {"node": best.node, "z": best.z, "sign": best.sign, "value": best.value,
                "P": best.P, "N": best.N, "A_pos": best.Ap, "A_neg": best.An,
                "T_pos": self.Tp, "T_neg": self.Tn, "nodes_visited": self.nodes_visited,
                "root": root, "root_bound": rbound[root] if root >= 0 else -INFINITY}


    cdef void _support_bounds(self, const double[:] w, const signed char[:] yy, int crit):
        """ub_by_support[n] bounds every pattern that occurs in at most n documents: the weight of each class inside
        them is at most the sum of its n largest weights."""
        weights, positive = numpy.asarray(w), numpy.asarray(yy) > 0
        cdef const double[:] wp = numpy.sort(weights[positive])[::-1] + 0.0
        cdef const double[:] wn = numpy.sort(weights[~positive])[::-1] + 0.0
        cdef Py_ssize_t k
        self.ub_by_support.assign(self.n_docs + 1, 0.0)
        cdef Sums sm
        sm.Ap = sm.An = 0
        sm.cp = sm.cn = 0
        for k in range(self.n_docs + 1):
            self._complete(&sm)
            self.ub_by_support[k] = self._bound(crit, &sm)
            if k < wp.shape[0]:
                sm.Ap += wp[k]
                sm.cp += 1
            if k < wn.shape[0]:
                sm.An += wn[k]
                sm.cn += 1

    cdef inline double _prune_tol(self, double v) noexcept:
        """Pruning tolerance: looser than the tie tolerance, so rounding never prunes a tie."""
        return 1e-9 * (fabs(v) if fabs(v) > 1.0 else 1.0)

    cdef inline double _threshold(self, Cand* best) noexcept:
        """Patterns whose bound is below this cannot win: the best value found here or, if larger, by the other
        searches of this round (`shared_best`), less the pruning tolerance."""
        cdef double v = best.value
        cdef double other
        if self.shared_best != NULL:
            other = shared_load(self.shared_best)
            if other > v:
                v = other
        return v - self._prune_tol(v)

    cdef inline void _complete(self, Sums* sm) noexcept:
        """Weights outside the pattern's documents; a block without documents weighs exactly 0."""
        sm.Wp = 0.0 if sm.cp >= self.Np else max0(self.Tp - sm.Ap)
        sm.Wn = 0.0 if sm.cn >= self.Nn else max0(self.Tn - sm.An)

    cdef inline double _bound(self, int crit, Sums* sm) noexcept:
        return bound(crit, sm.Ap, sm.An, sm.Wp, sm.Wn, self.Tp, self.Tn)

    cdef inline double _weight_cut(self, double threshold) noexcept:
        """The largest pattern weight Ap + An whose `weight_bound` is below `threshold` (-1 if none is)."""
        if threshold != self.cut_threshold:
            self.cut_threshold = threshold
            self.cut_weight = weight_cut(self.Tp, self.Tn, threshold)
        return self.cut_weight

    cdef void _single_bounds(self, int crit) noexcept:
        """single_bound[d]: the bound of a pattern occurring in document d only."""
        cdef Sums sm
        cdef Py_ssize_t d
        self.single_bound.resize(self.n_docs)
        for d in range(self.n_docs):
            sm.Ap = 0.0
            sm.An = 0.0
            sm.Ap += self.wpn[2 * d]
            sm.An += self.wpn[2 * d + 1]
            sm.cp = positive_at(self.wpn.data(), d)
            sm.cn = 1 - sm.cp
            self._complete(&sm)
            self.single_bound[d] = self._bound(crit, &sm)

    cdef inline void _sums(self, int32_t i, Sums* sm) noexcept:
        cdef const Scan* p = &self.scan[i]
        cdef int32_t n = 1 if p.docs < 0 else p.docs
        cdef double g[2]
        cdef int32_t cp = 0
        g[0] = g[1] = 0.0
        add_pairs(self.pool_docs.data() + p.doc_off, n, self.wpn.data(), g, &cp)
        sm.Ap = g[0]
        sm.An = g[1]
        sm.cp = cp
        sm.cn = n - cp
        self._complete(sm)

    cdef int _visit(self, int32_t i, Sums* sm, int crit, bint presence, Cand* best) except -1:
        """Evaluate pattern i (whose sums are known and bound passed), then its extensions; a child in one document d
        has the bound single_bound[d], so it is pruned without sums."""
        self.nodes_visited += 1
        self._evaluate(i, sm, crit, presence, best)
        if self.node(i).size >= self.max_pattern_size or self._never_extended(i):
            return 0
        if self.node(i).state == UNEXPANDED:
            self._expand(i)
        cdef int32_t c, first = self.node(i).first_child, n_kids = self.node(i).n_children, nd
        cdef Sums csm
        cdef const double* support_bound = self.ub_by_support.data()
        cdef const double* label_bound = self.sbound.data()
        cdef const double* single_bound = self.single_bound.data()
        cdef const Scan* scan = self.scan.data()
        cdef double threshold = self._threshold(best)
        for c in range(first, first + n_kids):
            if c + 8 < self.n_nodes:
                prefetch(scan + c + 8)
            if scan[c].doc_off + 32 < <int64_t>self.pool_docs.size():
                prefetch(self.pool_docs.data() + scan[c].doc_off + 32)
            nd = scan[c].docs
            if label_bound[scan[c].label] < threshold:
                continue
            if nd < 0:
                if single_bound[-nd - 1] < threshold or support_bound[1] < threshold:
                    continue
                self._sums(c, &csm)
            else:
                if support_bound[nd] < threshold:
                    continue
                self._sums(c, &csm)
                if crit == CRIT_IWAKURA and csm.Ap + csm.An <= self._weight_cut(threshold):
                    continue
                if self._bound(crit, &csm) < threshold:
                    continue
            self._visit(c, &csm, crit, presence, best)
            threshold = self._threshold(best)
            scan = self.scan.data()
        return 0

    cdef void _evaluate(self, int32_t i, Sums* sm, int crit, bint presence, Cand* best):
        cdef PNode* p = self.node(i)
        cdef double Gp = 0, Gn = 0, P, N, v, g, Lp, Ln
        cdef int32_t gp = 0, gn = 0
        cdef const double* wpn = self.wpn.data()
        cdef Cand cand
        cand.node = i
        cand.Ap = sm.Ap
        cand.An = sm.An
        cand.z = 1
        cand.sign = 1
        cand.P = sm.Ap
        cand.N = sm.An
        if crit == CRIT_BACT:
            g = 2 * (sm.Ap - sm.An) - (self.Tp - self.Tn)
            cand.value = fabs(g)
            cand.sign = -1 if g < -tie_tol(g) else 1
            self._offer(&cand, best)
            return
        if presence:
            cand.value = value(crit, sm.Ap, sm.An, sm.Wp, sm.Wn)
            self._offer(&cand, best)
            return
        # groups in descending count: after a group, {count >= z} holds every group so far; ties go to the later group
        cdef int64_t doc_off = self.scan[i].doc_off, k = doc_off, j, end = doc_off + p.n_docs
        cdef const uint8_t* counts = self.pool_counts.data()
        cdef int32_t cnt
        cdef double G[2]
        cdef double outside = outside_term(crit, sm.Wp, sm.Wn)
        G[0] = G[1] = 0.0
        cand.value = -INFINITY
        while k < end:
            if counts[k] < BIG_COUNT:
                j = run_end(counts, k + 1, end, counts[k])
            else:
                cnt = self._count(k)
                j = k + 1
                while j < end and counts[j] == BIG_COUNT and self._count(j) == cnt:
                    j += 1
            if j < end:
                add_pairs(self.pool_docs.data() + k, j - k, wpn, G, &gp)
            else:
                # the last group: the running sums are the pattern's sums, bit for bit
                G[0] = sm.Ap
                G[1] = sm.An
                gp = sm.cp
            k = j
            Gp = G[0]
            Gn = G[1]
            gn = <int32_t>(k - doc_off) - gp
            Lp = 0.0 if gp >= sm.cp else max0(sm.Ap - Gp)
            Ln = 0.0 if gn >= sm.cn else max0(sm.An - Gn)
            P = Gp + Ln
            N = Gn + Lp
            v = value_outside(crit, P, N, outside)
            if v >= cand.value - tie_tol(cand.value):
                cand.z = self._count(k) + 1 if k < end else 1
                cand.P = P
                cand.N = N
                cand.value = v
        self._offer(&cand, best)

    cdef void _offer(self, Cand* cand, Cand* best):
        cdef double tol = tie_tol(best.value)
        if best.node >= 0 and cand.value < best.value - tol:
            return
        if best.node < 0 or cand.value > best.value + tol or self._precedes(cand, best):
            best[0] = cand[0]
            if self.shared_best != NULL and best.value > shared_load(self.shared_best):
                shared_store(self.shared_best, best.value)

    cdef bint _precedes(self, Cand* a, Cand* b):
        """Tie order: size ascending, code ascending (`_code_precedes`), z ascending, sign +1 first."""
        if a.node != b.node:
            return self._code_precedes(a.node, b.node)
        if a.z != b.z:
            return a.z < b.z
        return a.sign > b.sign


