# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Trie-guided matching of rule patterns with embedding counts.

Every rule pattern's code (preorder (depth, label) pairs) is a path in a trie.
Matching a document extends occurrence lists by rightmost extension, following
only the trie's edges, so work is bounded by the rule prefixes that occur.
"""
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector
from libcpp.unordered_map cimport unordered_map
from libcpp.algorithm cimport sort as std_sort
from cython.operator cimport dereference as deref

from spacy_treeboost.models._occurrences cimport COUNT_CAP, MERGE_AT, sat_add, pack, occ_node, occ_mult, merge_occurrences

import numpy



cdef struct TrieNode:
    int32_t depth
    int32_t pattern


cdef class Matcher:
    """Count the embeddings of many patterns in documents.

    codes (Sequence[Sequence[Tuple[int, int]]]): each pattern's code, a sequence of
        (depth, label id) pairs in preorder, with depth 0 first.
    n_labels (int): the number of label ids; other ids never match.
    match_roots (bool): let document root nodes match (patterns containing the root).
    """
    cdef vector[TrieNode] trie
    cdef unordered_map[int64_t, int32_t] edges
    cdef vector[int32_t] root_of_label
    cdef int64_t n_labels, max_depth
    cdef public int32_t n_patterns
    cdef object _codes
    cdef bint match_roots

    def __init__(self, codes, int n_labels, bint match_roots=True):
        self.match_roots = match_roots
        self._codes = [tuple((int(d), int(l)) for d, l in code) for code in codes]
        self.n_labels = max(n_labels, 1)
        self.n_patterns = len(self._codes)
        self.max_depth = 1 + max([d for code in self._codes for d, _ in code] or [0])
        self.root_of_label.assign(self.n_labels, -1)
        cdef TrieNode tn
        cdef int32_t node, p
        cdef int64_t key
        for p, code in enumerate(self._codes):
            if not code or code[0][0] != 0:
                raise ValueError(f"pattern {p} has an invalid code {code!r}: it must start at depth 0")
            prev = 0
            for k, (d, l) in enumerate(code):
                if not (0 <= l < self.n_labels):
                    raise ValueError(f"pattern {p} uses label id {l} outside the vocabulary")
                if k and not (1 <= d <= prev + 1):
                    raise ValueError(f"pattern {p} has an invalid code {code!r}: depths must satisfy 1 <= d <= previous + 1")
                prev = d
                if k == 0:
                    node = self.root_of_label[l]
                    if node < 0:
                        node = self._new_node(0)
                        self.root_of_label[l] = node
                else:
                    key = self._key(node, d, l)
                    if self.edges.count(key):
                        node = self.edges[key]
                    else:
                        child = self._new_node(d)
                        self.edges[key] = child
                        node = child
            if self.trie[node].pattern >= 0:
                raise ValueError(f"patterns {self.trie[node].pattern} and {p} are the same tree")
            self.trie[node].pattern = p

    def __reduce__(self):
        return (Matcher, (self._codes, self.n_labels, self.match_roots))

    cdef int32_t _new_node(self, int32_t depth):
        cdef TrieNode tn
        tn.depth = depth
        tn.pattern = -1
        self.trie.push_back(tn)
        return self.trie.size() - 1

    cdef inline int64_t _key(self, int64_t node, int64_t depth, int64_t label) nogil:
        return (node * self.max_depth + depth) * self.n_labels + label

    def count(self, labels, parents, offsets):
        """Count every pattern's embeddings in every document of a forest.

        labels (numpy.ndarray): int32 label ids in preorder (-1 for unknown labels).
        parents (numpy.ndarray): int32 global parent indices (-1 for roots).
        offsets (numpy.ndarray): int64 document boundaries.
        RETURNS (Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]): doc indices,
            pattern indices and counts of every (document, pattern) that matched.
        """
        cdef const int32_t[:] lab = numpy.ascontiguousarray(labels, dtype=numpy.int32)
        cdef const int32_t[:] par = numpy.ascontiguousarray(parents, dtype=numpy.int32)
        cdef const int64_t[:] off = numpy.ascontiguousarray(offsets, dtype=numpy.int64)
        cdef Py_ssize_t n = lab.shape[0], n_docs = off.shape[0] - 1
        if par.shape[0] != n or (n_docs >= 0 and off[n_docs] != n):
            raise ValueError("labels, parents and offsets disagree in length")
        cdef vector[int32_t] next_sib, last_child
        cdef vector[int32_t] out_doc, out_pat, out_cnt
        cdef vector[vector[int64_t]] bufs
        bufs.resize(self.trie.size())
        cdef vector[int32_t] stack
        cdef unordered_map[int64_t, int32_t].iterator eit
        cdef Py_ssize_t doc, k, v, lo, hi
        cdef int32_t t, r, c, cur, d, dk, child, total, p
        cdef int64_t m
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
                    if bufs[t].empty():
                        stack.push_back(t)
                    bufs[t].push_back(pack(<int64_t>v, 1))
            while not stack.empty():
                t = stack.back()
                stack.pop_back()
                buf = &bufs[t]
                merge_occurrences(buf[0])
                if self.trie[t].pattern >= 0:
                    total = 0
                    for k in range(buf.size()):
                        total = sat_add(total, occ_mult(buf[0][k]))
                    out_doc.push_back(doc)
                    out_pat.push_back(self.trie[t].pattern)
                    out_cnt.push_back(total)
                dk = self.trie[t].depth
                for k in range(buf.size()):
                    r = occ_node(buf[0][k])
                    m = occ_mult(buf[0][k])
                    d = dk + 1
                    c = r + 1 if r + 1 < hi and par[r + 1] == r else -1
                    cur = r
                    while True:
                        while c >= 0:
                            if 0 <= lab[c] < self.n_labels and d < self.max_depth:
                                eit = self.edges.find(self._key(t, d, lab[c]))
                                if eit != self.edges.end():
                                    child = deref(eit).second
                                    if bufs[child].empty():
                                        stack.push_back(child)
                                    bufs[child].push_back(pack(<int64_t>c, m))
                                    if bufs[child].size() >= MERGE_AT and (bufs[child].size() & (bufs[child].size() - 1)) == 0:
                                        merge_occurrences(bufs[child])
                            c = next_sib[c - lo]
                        d -= 1
                        if d < 1:
                            break
                        c = next_sib[cur - lo]
                        cur = par[cur]
                buf.clear()
        return (numpy.asarray(<int32_t[:out_doc.size()]>out_doc.data()).copy() if out_doc.size() else numpy.zeros(0, numpy.int32),
                numpy.asarray(<int32_t[:out_pat.size()]>out_pat.data()).copy() if out_pat.size() else numpy.zeros(0, numpy.int32),
                numpy.asarray(<int32_t[:out_cnt.size()]>out_cnt.data()).copy() if out_cnt.size() else numpy.zeros(0, numpy.int32))


