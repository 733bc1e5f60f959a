# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""Preorder layout of dependency trees, without recursion."""
from libc.stdint cimport int32_t, int64_t
from libcpp.vector cimport vector

import numpy


ctypedef fused parent_t:
    int32_t
    int64_t


def preorder_depths(parent_t[::1] parents):
    """The int32 depth of each node from its parent index (int32 or int64, -1 for a root), nodes in preorder."""
    cdef Py_ssize_t n = parents.shape[0], v
    depths = numpy.empty(n, dtype=numpy.int32)
    cdef int32_t[::1] d = depths
    cdef int64_t p
    for v in range(n):
        p = parents[v]
        if p < 0:
            d[v] = 0
        elif p < v:
            d[v] = d[p] + 1
        else:
            raise ValueError(f"node {v} has parent {p}; nodes must be in preorder (every parent before its child)")
    return depths


def dependency_preorder(heads):
    """Lay out tokens as one tree: sentence roots under a virtual root, children in token order.

    heads (numpy.ndarray): int32 head token of each token, -1 for a sentence root.
    RETURNS (tuple): `order`, the token at each preorder position 1..n (0 is the virtual root), and `parents`, the
        preorder position of each position's parent (-1 for the root).
    """
    cdef const int32_t[:] h = numpy.ascontiguousarray(heads, dtype=numpy.int32)
    cdef Py_ssize_t n = h.shape[0], i, k
    cdef vector[int32_t] start, kids, stack, pos
    start.assign(n + 2, 0)
    for i in range(n):
        if h[i] < -1 or h[i] >= n or h[i] == i:
            raise ValueError(f"token {i} has an invalid head {h[i]}")
        start[h[i] + 2] += 1
    for i in range(1, n + 2):
        start[i] += start[i - 1]
    kids.resize(n)
    cdef vector[int32_t] fill = start
    for i in range(n):
        kids[fill[h[i] + 1]] = i
        fill[h[i] + 1] += 1
    order = numpy.empty(n, dtype=numpy.int32)
    parents = numpy.empty(n + 1, dtype=numpy.int32)
    cdef int32_t[:] o = order, p = parents
    pos.assign(n, -1)
    p[0] = -1
    cdef int32_t v, nxt = 1, node
    # the stack holds tokens; -1 is the virtual root
    for k in range(start[1] - 1, start[0] - 1, -1):
        stack.push_back(kids[k])
    while not stack.empty():
        v = stack.back()
        stack.pop_back()
        pos[v] = nxt
        o[nxt - 1] = v
        p[nxt] = 0 if h[v] < 0 else pos[h[v]]
        nxt += 1
        for k in range(start[v + 2] - 1, start[v + 1] - 1, -1):
            stack.push_back(kids[k])
    if nxt != n + 1:
        raise ValueError(f"the heads contain a cycle: {n + 1 - nxt} tokens are not reachable from a sentence root")
    return order, parents
