# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Trie-guided matching of rule patterns with embedding counts: occurrence lists are extended by rightmost extension
along the trie's edges only, the later siblings of occurrences sharing a parent in one sweep over its children."""
from libc.stdint cimport int32_t, int64_t, uint64_t
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.pair cimport pair
from libcpp.algorithm cimport sort as std_sort
from cython.operator cimport dereference as deref

from spacy_treeboost.models._occurrences cimport COUNT_CAP, sat_add, pack, occ_node, occ_mult, merge_occurrences

import numpy


cdef extern from *:
    void __builtin_prefetch(const void* address) nogil

cdef enum:
    PREFETCH_AHEAD = 16  # rules ahead whose codes are fetched into the cache


cdef struct TrieNode:
    int32_t depth
    int32_t pattern
    int32_t min_child_depth
    int32_t max_child_depth
    uint64_t child_labels  # bit (label % 64) is set for the label of every edge to a child


# (parent, rightmost-path node) and (occurrence index, multiplicity), each packed as an occurrence
ctypedef pair[int64_t, int64_t] Sibling
ctypedef pair[pair[int64_t, int64_t], int32_t] FirstHit


cdef class PatternMatcher:
    """Count the embeddings of many patterns in documents.

    depth, label, code_start (numpy.ndarray): The patterns' codes as `rule_tables` lays them out.
    n_labels (int): The number of label ids; other ids never match.
    match_roots (bool): Let document root nodes match.
    """
    cdef vector[TrieNode] trie
    cdef unordered_map[int64_t, int32_t] edges
    cdef vector[int32_t] root_of_label
    cdef int64_t n_labels, max_depth
    cdef public int32_t n_patterns
    cdef object _depth, _label, _code_start
    cdef bint match_roots
    # per-call scratch: occurrence buffers per trie node, and each child's first hit
    cdef vector[vector[int64_t]] bufs
    cdef vector[int64_t] first_occ, first_node
    cdef vector[int32_t] touched, ancestor
    cdef vector[Sibling] siblings
    cdef vector[FirstHit] hits

    def __init__(self, depth, label, code_start, int n_labels, bint match_roots=True):
        self.match_roots = match_roots
        self._depth = numpy.ascontiguousarray(depth, dtype=numpy.int32)
        self._label = numpy.ascontiguousarray(label, dtype=numpy.int32)
        self._code_start = numpy.ascontiguousarray(code_start, dtype=numpy.int64)
        cdef const int32_t[:] dep = self._depth
        cdef const int32_t[:] lab = self._label
        cdef const int64_t[:] st = self._code_start
        if st.shape[0] < 1 or st[0] != 0 or st[st.shape[0] - 1] != dep.shape[0] or lab.shape[0] != dep.shape[0]:
            raise ValueError("depth, label and code_start disagree: code_start must run from 0 to the number of "
                             "pattern nodes, which depth and label must both have")
        self.n_labels = max(n_labels, 1)
        self.n_patterns = st.shape[0] - 1
        self.max_depth = 1 + (int(self._depth.max()) if dep.shape[0] else 0)
        self.root_of_label.assign(self.n_labels, -1)
        self.edges.reserve(dep.shape[0])
        cdef int32_t node = 0, child, p, d, l, prev
        cdef unordered_map[int64_t, int32_t].iterator found
        cdef int64_t key, k
        for p in range(self.n_patterns):
            if st[p + 1] <= st[p]:
                raise ValueError(f"pattern {p} has an invalid code (): it is empty" if st[p + 1] == st[p] else
                                 "code_start must not decrease")
            if dep[st[p]] != 0:
                raise ValueError(f"pattern {p} has an invalid code {self._code(p)!r}: it must start at depth 0")
            prev = 0
            for k in range(st[p], st[p + 1]):
                d, l = dep[k], lab[k]
                if not (0 <= l < self.n_labels):
                    raise ValueError(f"pattern {p} uses label id {l} outside the vocabulary")
                if k > st[p] and not (1 <= d <= prev + 1):
                    raise ValueError(f"pattern {p} has an invalid code {self._code(p)!r}: depths must satisfy "
                                     "1 <= d <= previous + 1")
                prev = d
                if k == st[p]:
                    node = self.root_of_label[l]
                    if node < 0:
                        node = self._new_node(0)
                        self.root_of_label[l] = node
                else:
                    key = self._key(node, d, l)
                    found = self.edges.find(key)
                    if found != self.edges.end():
                        node = deref(found).second
                    else:
                        child = self._new_node(d)
                        self.edges[key] = child
                        if self.trie[node].max_child_depth < 0 or d < self.trie[node].min_child_depth:
                            self.trie[node].min_child_depth = d
                        if d > self.trie[node].max_child_depth:
                            self.trie[node].max_child_depth = d
                        self.trie[node].child_labels |= (<uint64_t>1) << (l & 63)
                        node = child
            if self.trie[node].pattern >= 0:
                raise ValueError(f"patterns {self.trie[node].pattern} and {p} are the same tree")
            self.trie[node].pattern = p

    def _code(self, Py_ssize_t p):
        lo, hi = self._code_start[p], self._code_start[p + 1]
        return tuple(zip(self._depth[lo:hi].tolist(), self._label[lo:hi].tolist()))

    def __reduce__(self):
        return (PatternMatcher, (self._depth, self._label, self._code_start, self.n_labels, self.match_roots))

    cdef int32_t _new_node(self, int32_t depth):
        cdef TrieNode tn
        tn.depth = depth
        tn.pattern = -1
        tn.min_child_depth = -1
        tn.max_child_depth = -1
        tn.child_labels = 0
        self.trie.push_back(tn)
        return self.trie.size() - 1

    cdef inline int64_t _key(self, int64_t node, int64_t depth, int64_t label) nogil:
        return (node * self.max_depth + depth) * self.n_labels + label

    cdef inline int _hit(self, int32_t child, int32_t node, int64_t mult, int64_t occ, bint track, bint earlier) except -1:
        """Add an occurrence of trie node `child`; with `track`, remember its first (occ, node), which with `earlier`
        a later call may lower."""
        cdef vector[int64_t]* buf = &self.bufs[child]
        if buf.empty():
            self.touched.push_back(child)
            if track:
                self.first_occ[child] = occ
                self.first_node[child] = node
        elif earlier and (occ < self.first_occ[child] or (occ == self.first_occ[child] and node < self.first_node[child])):
            self.first_occ[child] = occ
            self.first_node[child] = node
        buf.push_back(pack(<int64_t>node, COUNT_CAP if mult > COUNT_CAP else mult))
        return 0

    cdef int _extend(self, int32_t t, const int32_t* lab, const int32_t* par, vector[int32_t]& next_sib,
                     Py_ssize_t lo, Py_ssize_t hi, vector[int32_t]& stack) except -1:
        """Extend the occurrences of trie node t along the trie's edges, then push the children hit in the order a
        scan of the occurrences one by one would first reach them."""
        cdef vector[int64_t]* buf = &self.bufs[t]
        cdef TrieNode tn = self.trie[t]
        cdef Py_ssize_t n_occ = buf.size(), k, g, e, ptr
        cdef int32_t dk = tn.depth, d, r, c, p
        cdef int64_t m, acc, kmin
        cdef unordered_map[int64_t, int32_t].iterator eit
        cdef bint ordered, track = n_occ > 1
        self.touched.clear()
        if tn.max_child_depth == dk + 1:
            d = dk + 1
            for k in range(n_occ):
                r = occ_node(buf[0][k])
                m = occ_mult(buf[0][k])
                c = r + 1 if r + 1 < hi and par[r + 1] == r else -1
                while c >= 0:
                    if 0 <= lab[c] < self.n_labels and (tn.child_labels >> (lab[c] & 63)) & 1:
                        eit = self.edges.find(self._key(t, d, lab[c]))
                        if eit != self.edges.end():
                            self._hit(deref(eit).second, c, m, k * self.max_depth + (self.max_depth - d), track, False)
                    c = next_sib[c - lo]
        if 1 <= tn.min_child_depth <= dk:
            self.ancestor.resize(n_occ)
            for k in range(n_occ):
                self.ancestor[k] = occ_node(buf[0][k])
            for d in range(dk, tn.min_child_depth - 1, -1):
                if d < dk:
                    for k in range(n_occ):
                        self.ancestor[k] = par[self.ancestor[k]]
                if d > tn.max_child_depth:
                    continue
                self.siblings.resize(n_occ)
                ordered = True
                for k in range(n_occ):
                    r = self.ancestor[k]
                    self.siblings[k].first = pack(par[r], r)
                    self.siblings[k].second = pack(k, occ_mult(buf[0][k]))
                    if k and self.siblings[k].first < self.siblings[k - 1].first:
                        ordered = False
                if not ordered:
                    std_sort(self.siblings.begin(), self.siblings.end())
                g = 0
                while g < n_occ:
                    p = occ_node(self.siblings[g].first)
                    e = g + 1
                    while e < n_occ and occ_node(self.siblings[e].first) == p:
                        e += 1
                    acc = 0
                    kmin = n_occ
                    ptr = g
                    c = next_sib[occ_mult(self.siblings[g].first) - lo]
                    while c >= 0:
                        while ptr < e and occ_mult(self.siblings[ptr].first) < c:
                            acc += occ_mult(self.siblings[ptr].second)
                            if occ_node(self.siblings[ptr].second) < kmin:
                                kmin = occ_node(self.siblings[ptr].second)
                            ptr += 1
                        if 0 <= lab[c] < self.n_labels and (tn.child_labels >> (lab[c] & 63)) & 1:
                            eit = self.edges.find(self._key(t, d, lab[c]))
                            if eit != self.edges.end():
                                self._hit(deref(eit).second, c, acc, kmin * self.max_depth + (self.max_depth - d), track, track)
                        c = next_sib[c - lo]
                    g = e
        self._push_touched(stack, n_occ == 1)
        return 0

    cdef int _push_touched(self, vector[int32_t]& stack, bint one_occurrence) except -1:
        """Push the trie nodes that `_extend` hit, in the order of their first hits."""
        cdef Py_ssize_t k
        cdef int32_t c
        if one_occurrence or self.touched.size() == 1:
            # the children were first hit in the scan's order already
            for k in range(self.touched.size()):
                stack.push_back(self.touched[k])
            return 0
        self.hits.resize(self.touched.size())
        for k in range(self.touched.size()):
            c = self.touched[k]
            self.hits[k].first.first = self.first_occ[c]
            self.hits[k].first.second = self.first_node[c]
            self.hits[k].second = c
        std_sort(self.hits.begin(), self.hits.end())
        for k in range(self.hits.size()):
            stack.push_back(self.hits[k].second)
        return 0

    def count(self, labels, parents, offsets):
        """Count every pattern's embeddings in every document of a forest.

        labels, parents, offsets (numpy.ndarray): The forest's preorder arrays (label -1: unknown).
        RETURNS (tuple): The document, pattern and count (int32) of every (document, pattern) that matched.
        """
        cdef const int32_t[:] lab = numpy.ascontiguousarray(labels, dtype=numpy.int32)
        cdef const int32_t[:] par = numpy.ascontiguousarray(parents, dtype=numpy.int32)
        cdef const int64_t[:] off = numpy.ascontiguousarray(offsets, dtype=numpy.int64)
        cdef Py_ssize_t n = lab.shape[0], n_docs = off.shape[0] - 1
        if par.shape[0] != n or (n_docs >= 0 and off[n_docs] != n):
            raise ValueError("labels, parents and offsets disagree in length")
        cdef vector[int32_t] next_sib, last_child
        cdef vector[int32_t] out_doc, out_pat, out_cnt
        self.bufs.clear()
        self.bufs.resize(self.trie.size())
        self.first_occ.assign(self.trie.size(), 0)
        self.first_node.assign(self.trie.size(), 0)
        cdef vector[int32_t] stack
        cdef Py_ssize_t doc, k, v, lo, hi
        cdef int32_t t, total, p
        cdef vector[int64_t]* buf
        for doc in range(n_docs):
            lo, hi = off[doc], off[doc + 1]
            next_sib.assign(hi - lo, -1)
            last_child.assign(hi - lo, -1)
            for v in range(hi - 1, lo - 1, -1):
                p = par[v]
                if p >= 0:
                    if not lo <= p < v:
                        raise ValueError(f"node {v} has parent {p}, which is not an earlier node of its document")
                    next_sib[v - lo] = last_child[p - lo]
                    last_child[p - lo] = v
            for v in range(lo, hi):
                if lab[v] < 0 or lab[v] >= self.n_labels or (par[v] < 0 and not self.match_roots):
                    continue
                t = self.root_of_label[lab[v]]
                if t >= 0:
                    if self.bufs[t].empty():
                        stack.push_back(t)
                    self.bufs[t].push_back(pack(<int64_t>v, 1))
            while not stack.empty():
                t = stack.back()
                stack.pop_back()
                buf = &self.bufs[t]
                merge_occurrences(buf[0])
                if self.trie[t].pattern >= 0:
                    total = 0
                    for k in range(buf.size()):
                        total = sat_add(total, occ_mult(buf[0][k]))
                    out_doc.push_back(doc)
                    out_pat.push_back(self.trie[t].pattern)
                    out_cnt.push_back(total)
                if self.trie[t].max_child_depth >= 0:
                    self._extend(t, &lab[0], &par[0], next_sib, lo, hi, stack)
                buf.clear()
        self.bufs.clear()
        self.bufs.shrink_to_fit()
        return _int32_array(out_doc), _int32_array(out_pat), _int32_array(out_cnt)


cdef object _int32_array(vector[int32_t]& v):
    return numpy.asarray(<int32_t[:v.size()]>v.data()).copy() if v.size() else numpy.zeros(0, numpy.int32)


def codes_in_order(const int32_t[::1] depth, const int32_t[::1] label, const int64_t[::1] code_start,
                   const int64_t[::1] order, run=None, Py_ssize_t pieces=1):
    """(depth, label, code_start) of the codes of the int64 pattern ids `order`, in that order, copied code by code
    (no node index array); `run` (`ThreadTeam.map`) copies `pieces` contiguous runs of `order` on its threads."""
    cdef Py_ssize_t n_patterns = code_start.shape[0] - 1, m = order.shape[0]
    if n_patterns < 0 or code_start[0] != 0 or code_start[n_patterns] != depth.shape[0] \
            or label.shape[0] != depth.shape[0]:
        raise ValueError("code_start must run from 0 to the number of nodes of depth and label")
    if run is None:
        run, pieces = (lambda work, items: [work(item) for item in items]), 1
    n_pieces = int(max(1, min(pieces, m)))
    bounds = [(m * piece // n_pieces, m * (piece + 1) // n_pieces) for piece in range(n_pieces)]
    nodes = run(lambda b: _code_nodes(code_start, order, b[0], b[1]), bounds)
    first_node, total = [], 0
    for count in nodes:
        first_node.append(total)
        total += int(count)
    depth_out = numpy.empty(total, dtype=numpy.int32)
    label_out = numpy.empty(total, dtype=numpy.int32)
    start_out = numpy.empty(m + 1, dtype=numpy.int64)
    run(lambda piece: _copy_codes(depth, label, code_start, order, bounds[piece][0], bounds[piece][1],
                                  first_node[piece], depth_out, label_out, start_out), range(n_pieces))
    start_out[m] = total
    return depth_out, label_out, start_out


def _code_nodes(const int64_t[::1] code_start, const int64_t[::1] order, Py_ssize_t lo, Py_ssize_t hi) -> int:
    """The number of nodes of the codes of patterns order[lo:hi], after checking them."""
    cdef Py_ssize_t n_patterns = code_start.shape[0] - 1, i, bad = -1
    cdef int64_t total = 0, p
    cdef bint decreasing = False
    with nogil:
        for i in range(lo, hi):
            p = order[i]
            if p < 0 or p >= n_patterns:
                bad = i
                break
            if code_start[p + 1] < code_start[p]:
                decreasing = True
                break
            total += code_start[p + 1] - code_start[p]
    if bad >= 0:
        raise ValueError(f"pattern {order[bad]} lies outside the {n_patterns} patterns")
    if decreasing:
        raise ValueError("code_start must not decrease")
    return total


def _copy_codes(const int32_t[::1] depth, const int32_t[::1] label, const int64_t[::1] code_start,
                const int64_t[::1] order, Py_ssize_t lo, Py_ssize_t hi, int64_t at, int32_t[::1] d, int32_t[::1] l,
                int64_t[::1] s) -> None:
    """Copy the codes of patterns order[lo:hi] (checked) to d and l from node `at` on, each one's start in s."""
    cdef Py_ssize_t i
    cdef int64_t p, k
    with nogil:
        for i in range(lo, hi):
            s[i] = at
            if i + 2 * PREFETCH_AHEAD < hi:
                __builtin_prefetch(&code_start[order[i + 2 * PREFETCH_AHEAD]])
            if i + PREFETCH_AHEAD < hi:
                p = code_start[order[i + PREFETCH_AHEAD]]
                __builtin_prefetch(&depth[p])
                __builtin_prefetch(&label[p])
            p = order[i]
            for k in range(code_start[p], code_start[p + 1]):
                d[at] = depth[k]
                l[at] = label[k]
                at += 1
