# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The enumeration tree of patterns (`PatternCache`), grown by rightmost extension as the search reaches them."""
from libc.stdint cimport int32_t, int64_t, uint8_t
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.algorithm cimport sort as std_sort
from libcpp.pair cimport pair
from cython.operator cimport dereference as deref

from spacy_treeboost.learning._cpu cimport prefetch
from spacy_treeboost.learning._patterns cimport PNode, BIG_COUNT, LINK_FAR, UNEXPANDED, EXPANDED
from spacy_treeboost.models._occurrences cimport COUNT_CAP, sat_add, pack, occ_node, occ_mult, merge_occurrences

import numpy


cdef inline int32_t support_needed(PatternCache cache, int32_t size) noexcept:
    """The documents a pattern of `size` nodes must occur in."""
    return 1 if size <= cache.rare_up_to else cache.min_support


cdef inline int64_t node_code(PatternCache cache, int32_t i):
    """The code of pattern i's last node: depth, then label rank."""
    return cache.node(i).depth * <int64_t>cache.label_rank.size() + cache.label_rank[cache.node(i).label]


cdef inline int add_extension(int64_t key, int64_t occurrence, unordered_map[int64_t, int32_t]& slots,
                              vector[vector[int64_t]]& bufs, vector[int64_t]& keys) except -1:
    """Add an occurrence to the buffer of its extension's (depth, label) key."""
    cdef unordered_map[int64_t, int32_t].iterator it = slots.find(key)
    if it == slots.end():
        slots[key] = bufs.size()
        keys.push_back(key)
        bufs.push_back(vector[int64_t]())
        bufs.back().push_back(occurrence)
    else:
        bufs[deref(it).second].push_back(occurrence)
    return 0


cdef int build_singles(PatternCache cache, int32_t n_labels, bint include_root, const int32_t[:] order,
                       const int32_t* parents) except -1:
    """The single-node patterns (the roots of the enumeration tree) of the labels with enough documents."""
    cdef Py_ssize_t n = cache.n_nodes_forest, v, i
    cdef vector[int32_t] lab_docs, last_doc
    cdef int32_t l, doc = 0
    lab_docs.assign(n_labels, 0)
    last_doc.assign(n_labels, -1)
    for v in range(n):
        if parents[v] < 0 and not include_root:
            continue
        l = cache.labels[v]
        while cache.doc_start[doc + 1] <= v:
            doc += 1
        if last_doc[l] != doc:
            last_doc[l] = doc
            lab_docs[l] += 1
    cache.label_ok.assign(n_labels, 0)
    cdef vector[int32_t] slot
    slot.assign(n_labels, -1)
    for i in range(n_labels):
        l = order[i]
        if lab_docs[l] >= support_needed(cache, 1):
            cache.label_ok[l] = 1
            slot[l] = cache.n_nodes
            cache._push(PNode(parent=-1, label=l, depth=0, size=1, n_docs=0, first_child=-1, n_children=0,
                             occ_slot=-1, state=UNEXPANDED))
            cache.roots.push_back(slot[l])
    root_documents(cache, n_labels, include_root, slot, lab_docs, parents)
    if cache.single_document_dominance:
        cache.single_keep.assign(cache.n_docs, Kept(-1, 0))
    cdef int32_t d
    for i in range(cache.n_nodes):
        if cache.max_pattern_size > 1 and cache._never_extended(i):
            d = -cache.scan[i].docs - 1
            if cache.single_keep[d].node < 0:
                cache.single_keep[d].node = <int32_t>i
                cache.single_keep[d].size = cache.node(i).size
    return 0


cdef int root_documents(PatternCache cache, int32_t n_labels, bint include_root, vector[int32_t]& slot,
                        vector[int32_t]& lab_docs, const int32_t* parents) except -1:
    """Each root pattern's documents and counts in the pool, ordered as `_set_docs` orders them (its occurrences are
    listed again from them when it is first extended, `root_occurrences`)."""
    cdef Py_ssize_t i, k, m
    cdef int64_t v, total = 0, at
    cdef int32_t l, d, c
    cdef vector[int64_t] fill
    cdef vector[int32_t] in_doc, touched
    cdef unordered_map[int64_t, int32_t] big
    cdef vector[pair[int64_t, int32_t]] pd
    cache.include_root_nodes = include_root
    fill.resize(cache.n_nodes)
    for i in range(cache.n_nodes):
        fill[i] = total
        total += lab_docs[cache.node(i)[0].label]
    cache.pool_docs.resize(total)
    cache.pool_counts.resize(total)
    in_doc.assign(n_labels, 0)
    for d in range(cache.n_docs):
        for v in range(cache.doc_start[d], cache.doc_start[d + 1]):
            if parents[v] < 0 and not include_root:
                continue
            l = cache.labels[v]
            if slot[l] < 0:
                continue
            if in_doc[l] == 0:
                touched.push_back(l)
            in_doc[l] = sat_add(in_doc[l], 1)
        for k in range(touched.size()):
            l = touched[k]
            at = fill[slot[l]]
            fill[slot[l]] += 1
            cache.pool_docs[at] = d
            if in_doc[l] >= BIG_COUNT:
                big[at] = in_doc[l]
                cache.pool_counts[at] = BIG_COUNT
            else:
                cache.pool_counts[at] = <uint8_t>in_doc[l]
            in_doc[l] = 0
        touched.clear()
    at = 0
    for i in range(cache.n_nodes):
        m = lab_docs[cache.node(i)[0].label]
        pd.resize(m)
        for k in range(m):
            c = cache.pool_counts[at + k]
            pd[k] = pair[int64_t, int32_t](-<int64_t>(c if c < BIG_COUNT else big[at + k]), cache.pool_docs[at + k])
        cache._put_docs(i, at, pd)
        at += m
    return 0


cdef int root_occurrences(PatternCache cache, int32_t i, vector[int64_t]& out) except -1:
    """Root pattern i's occurrence list (packed, multiplicity 1, by node), from the nodes of its documents."""
    cdef int32_t l = cache.node(i)[0].label, m = cache.node(i)[0].n_docs
    cdef int64_t off = cache.scan[i].doc_off, v
    cdef vector[int32_t] docs
    cdef Py_ssize_t k
    cdef int64_t total = 0
    docs.assign(cache.pool_docs.data() + off, cache.pool_docs.data() + off + m)
    std_sort(docs.begin(), docs.end())
    for k in range(m):
        total += cache._count(off + k)
    out.clear()
    out.reserve(total)
    for k in range(m):
        for v in range(cache.doc_start[docs[k]], cache.doc_start[docs[k] + 1]):
            if cache.labels[v] == l and (cache.include_root_nodes or cache.forest[v].up != 0):
                out.push_back(pack(v, 1))
    return 0


cdef bint keep_single(PatternCache cache, int32_t d):
    """Whether the pattern just pushed, in document d only, precedes d's kept one in the tie order (then kept)."""
    cdef Kept* kept = &cache.single_keep[d]
    cdef int32_t new = cache.n_nodes - 1, size = cache.node(new).size
    if kept.node >= 0 and (size > kept.size or (size == kept.size and not cache._code_precedes(new, kept.node))):
        return False
    kept.node = new
    kept.size = size
    return True


cdef int extensions(PatternCache cache, const int64_t* occ, Py_ssize_t n_occ, int32_t dk,
                    unordered_map[int64_t, int32_t]& slots, vector[vector[int64_t]]& bufs,
                    vector[int64_t]& keys) except -1:
    """Every rightmost extension of the sorted occurrences `occ` (rightmost node at depth dk), one buffer per (depth,
    label) key; the later siblings at depth d are swept once per parent with the summed multiplicities to their left."""
    cdef int64_t n_labels = cache.label_rank.size()
    cdef Py_ssize_t k, g, e, ptr
    cdef int32_t d, r, c, parent, lab
    cdef int64_t acc
    cdef bint ordered
    cdef vector[int32_t] ancestor
    cdef vector[pair[int64_t, int64_t]] siblings  # (pack(parent, node), multiplicity)
    for k in range(n_occ):
        if k + 8 < n_occ:
            c = occ_node(occ[k + 8]) + 1
            if c < cache.n_nodes_forest:
                prefetch(cache.forest + c)
                prefetch(cache.labels + c)
        r = occ_node(occ[k])
        c = r + 1 if r + 1 < cache.n_nodes_forest and cache.parent_of(r + 1) == r else -1
        while c >= 0:
            lab = cache.labels[c]
            if cache.label_ok[lab]:
                add_extension((dk + 1) * n_labels + lab, pack(<int64_t>c, occ_mult(occ[k])), slots, bufs, keys)
            c = cache.next_of(c)
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
                ancestor[k] = cache.parent_of(ancestor[k])
            siblings[k].first = pack(cache.parent_of(ancestor[k]), ancestor[k])
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
            c = cache.next_of(occ_mult(siblings[g].first))
            while c >= 0:
                while ptr < e and occ_mult(siblings[ptr].first) < c:
                    acc += siblings[ptr].second
                    ptr += 1
                lab = cache.labels[c]
                if cache.label_ok[lab]:
                    add_extension(d * n_labels + lab, pack(<int64_t>c, COUNT_CAP if acc > COUNT_CAP else acc),
                                  slots, bufs, keys)
                c = cache.next_of(c)
            g = e
    return 0


cdef class PatternCache(PatternStore):
    """The rightmost-extension enumeration tree over one training forest, each pattern with its documents and counts.

    labels, parents, offsets (numpy.ndarray): The forest's preorder arrays.
    label_rank (numpy.ndarray): The rank of each label id in code-point order of the label strings.
    max_pattern_size (int): The largest pattern (nodes).
    min_support (int): The fewest documents a pattern must occur in.
    rare_up_to (int): Patterns of at most this many nodes need only occur.
    include_root (bool): Allow patterns that contain the documents' root nodes.
    max_cache_bytes (int): Raise MemoryError when the cache would grow past this.
    single_document_dominance (bool): Of the patterns of one document, cache only the first in the tie order and
        never extend it (they tie under any weights).
    _link_far, _compact_at, _doc_block_bits (int): For the tests: `LINK_FAR`, the arena garbage (words) that starts
        a compaction, and log2 of the nodes per block of the node-to-document lookup.
    """

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
        build_singles(self, rank.shape[0], include_root, order, &par[0] if lab.shape[0] else NULL)

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
            extensions(self, self._occ_list(p.occ_slot, unpacked), self.occ[p.occ_slot].len, dk, slots, bufs, keys)
        else:
            root_occurrences(self, i, unpacked)
            extensions(self, unpacked.data(), unpacked.size(), dk, slots, bufs, keys)
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
            if support >= support_needed(self, p.size + 1):
                self._push(PNode(parent=i, label=<int32_t>(keys[s] % n_labels), depth=<int32_t>(keys[s] // n_labels),
                                 size=p.size + 1, n_docs=0, first_child=-1, n_children=0, occ_slot=-1,
                                 state=UNEXPANDED))
                if support == 1 and self.single_document_dominance and not keep_single(self, first_doc):
                    self.n_nodes -= 1
                    self.scan.pop_back()
                else:
                    self._set_docs(self.n_nodes - 1, buf.data(), buf.size())
                    if support < support_needed(self, p.size + 2):
                        self.node(self.n_nodes - 1)[0].state = EXPANDED
                    elif keep_occ and not (support == 1 and self.single_document_dominance):
                        self._hold_occ(self.n_nodes - 1, buf.data(), buf.size())
                    n_kids += 1
            buf.clear()
            buf.shrink_to_fit()
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

    cdef bint _code_precedes(self, int32_t a, int32_t b):
        """Whether pattern a precedes b in the tie order: size, then code (their nodes below a common parent)."""
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
        return node_code(self, a) < node_code(self, b)

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
        """Search only the patterns whose root label id is true in `owned`; return how many roots remain."""
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
