# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The storage of the miner's patterns (`PatternStore`) and the per-label node counts of a forest."""
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t
from libc.stdlib cimport free
from libc.string cimport memcpy, memmove
from libcpp.vector cimport vector
from libcpp.algorithm cimport sort as std_sort, is_sorted
from libcpp.pair cimport pair

from spacy_treeboost.learning._cpu cimport random_access_alloc, release_free_heap
from spacy_treeboost.models._occurrences cimport sat_add, pack, occ_node, occ_mult

import numpy


cdef inline int64_t _words(const OccRef& ref) noexcept nogil:
    """Arena words of an occurrence list."""
    return ref.len * (2 if ref.wide else 1)


cdef inline int32_t doc_of(PatternStore store, int32_t node, int32_t hint) noexcept nogil:
    """The document of a node, given a document at or before it (or -1): tried with the next, then a bisection."""
    cdef const int64_t* start = store.doc_start.data()
    cdef int32_t lo, hi, mid, b
    if hint >= 0 and start[hint] <= node:
        if node < start[hint + 1]:
            return hint
        if hint + 2 <= store.n_docs and node < start[hint + 2]:
            return hint + 1
    b = node >> store.doc_block_bits
    lo = store.block_doc[b]
    hi = store.block_doc[b + 1] + 1
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        if start[mid] <= node:
            lo = mid
        else:
            hi = mid
    return lo


cdef inline uint16_t link_distance(PatternStore store, vector[pair[int32_t, int32_t]]& far, int32_t v,
                                   int32_t target) except? 0:
    """The link from v to target (a node before or after it): the distance, or `link_far` and an entry of `far`."""
    cdef int32_t d = target - v if target > v else v - target
    if d < store.link_far:
        return <uint16_t>d
    far.push_back(pair[int32_t, int32_t](v, target))
    return store.link_far


cdef int link_forest(PatternStore store, const int32_t* parents) except -1:
    """Parent and next-sibling links as distances, in one pass (`path`: the root-to-v path, last child each)."""
    cdef Py_ssize_t n = store.n_nodes_forest, v
    cdef vector[pair[int32_t, int32_t]] path
    for v in range(n):
        while not path.empty() and path.back().first != parents[v]:
            path.pop_back()
        if path.empty() and parents[v] >= 0:
            raise ValueError(f"node {v} has parent {parents[v]}, which is not on the path from its "
                             f"document root to node {v - 1}: the forest's arrays must be in preorder")
        if not path.empty():
            if path.back().second >= 0:
                store.forest[path.back().second].right = link_distance(
                    store, store.right_far, path.back().second, <int32_t>v)
            path.back().second = <int32_t>v
            store.forest[v].up = link_distance(store, store.up_far, <int32_t>v, parents[v])
        path.push_back(pair[int32_t, int32_t](<int32_t>v, -1))
    std_sort(store.right_far.begin(), store.right_far.end())
    return 0


cdef class PatternStore:
    """The forest's node links and the cached patterns with their documents and counts; `PatternCache` fills it."""

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
        link_forest(self, &par[0] if n else NULL)
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
        """Slot s's occurrence list as packed entries (in the arena or `unpacked`), valid until the arena grows."""
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
            doc = doc_of(self, occ_node(occ[k]), doc)
            if doc != cur_doc:
                if cur_doc >= 0:
                    pd.push_back(pair[int64_t, int32_t](-<int64_t>c, cur_doc))
                cur_doc = doc
                c = 0
            c = sat_add(c, occ_mult(occ[k]))
        if cur_doc >= 0:
            pd.push_back(pair[int64_t, int32_t](-<int64_t>c, cur_doc))
        cdef int64_t at = self.pool_docs.size()
        self.pool_docs.resize(at + pd.size())
        self.pool_counts.resize(at + pd.size())
        self._put_docs(i, at, pd)

    cdef void _put_docs(self, Py_ssize_t i, int64_t at, vector[pair[int64_t, int32_t]]& pd):
        """Pattern i's (-count, document) pairs into the pool from `at` (sized for them), by count descending, then
        document."""
        cdef Py_ssize_t k, m = pd.size()
        if not is_sorted(pd.begin(), pd.end()):
            std_sort(pd.begin(), pd.end())
        for k in range(m):
            self.pool_docs[at + k] = pd[k].second
            self._put_count(at + k, <int32_t>(-pd[k].first))
        self.scan[i].doc_off = at
        self.node(i)[0].n_docs = <int32_t>m
        self.scan[i].docs = -(pd[0].second + 1) if m == 1 else <int32_t>m

    cdef int32_t _support_at_least(self, vector[int64_t]& occ, int32_t k, int32_t* first):
        """The documents of a sorted occurrence list when they are 1 or at least k, otherwise a number in [2, k);
        `first` receives the first one's document."""
        cdef int32_t n = 1, last, doc
        cdef Py_ssize_t j
        first[0] = last = doc = doc_of(self, occ_node(occ[0]), -1)
        if k > 2:
            for j in range(1, occ.size()):
                doc = doc_of(self, occ_node(occ[j]), doc)
                if doc != last:
                    n += 1
                    last = doc
            return n
        return 1 if doc_of(self, occ_node(occ[occ.size() - 1]), first[0]) == first[0] else 2

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

    def take_patterns(self):
        """Every pattern moved out of the store (left empty), each part freed once copied.

        RETURNS (Tuple): The table (parent, -1 for a root; last node's depth and label id; size: int32 arrays) and the
            CSC (indptr, documents, counts), column i pattern i, counts uint8 where they all fit (else int32).
        """
        cdef int64_t n = self.n_nodes, total = 0, off, start = 0
        cdef int32_t i, k, m
        cdef PNode* p
        self.arena.release()
        self.occ.release()
        parent = numpy.empty(n, dtype=numpy.int32)
        depth = numpy.empty(n, dtype=numpy.int32)
        label = numpy.empty(n, dtype=numpy.int32)
        size = numpy.empty(n, dtype=numpy.int32)
        indptr = numpy.empty(n + 1, dtype=numpy.int64)
        cdef int32_t[::1] pv = parent, dv = depth, lv = label, sv = size
        cdef int64_t[::1] ip = indptr
        ip[0] = 0
        for i in range(n):
            p = self.node(i)
            pv[i] = p.parent
            dv[i] = p.depth
            lv[i] = p.label
            sv[i] = p.size
            total += p.n_docs
            ip[i + 1] = total
            if (i & (CHUNK - 1)) == CHUNK - 1 or i == n - 1:
                free(self.chunks[i >> CHUNK_BITS])
                self.chunks[i >> CHUNK_BITS] = NULL
                if ((i >> CHUNK_BITS) & 15) == 15:
                    release_free_heap()
        self.chunks.clear()
        self.n_nodes = 0
        release_free_heap()
        cdef bint one_byte = True
        for item in self.big_counts:
            one_byte = one_byte and item.second <= 255
        docs = numpy.empty(total, dtype=numpy.int32)
        counts = numpy.empty(total, dtype=numpy.uint8 if one_byte else numpy.int32)
        cdef int32_t[::1] docv = docs
        cdef uint8_t[::1] small
        cdef int32_t[::1] large
        if one_byte:
            small = counts
        else:
            large = counts
        cdef vector[pair[int32_t, int32_t]] col
        for i in range(n):
            m = <int32_t>(ip[i + 1] - ip[i])
            off = self.scan[i].doc_off
            col.resize(m)
            for k in range(m):
                col[k].first = self.pool_docs[off + k]
                col[k].second = self._count(off + k)
            std_sort(col.begin(), col.end())
            for k in range(m):
                docv[start + k] = col[k].first
                if one_byte:
                    small[start + k] = <uint8_t>col[k].second
                else:
                    large[start + k] = col[k].second
            start += m
        self.pool_docs.release()
        self.pool_counts.release()
        self.scan.release()
        self.big_counts.clear()
        return (parent, depth, label, size), (indptr, docs, counts)


def label_sizes(labels, parents, int32_t n_labels, bint include_root):
    """The int64 number of forest nodes of each label id, the roots left out unless `include_root` (bincount copies)."""
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
