# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
# distutils: language = c++
"""The merge of several miners' patterns into one miner's order (sharded mining), and patterns' codes as flat arrays."""
from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy


ctypedef fused count_t:
    uint8_t
    int32_t


ctypedef fused out_count_t:
    uint8_t
    int32_t
    double


def copy_columns(const int64_t[::1] order, const int64_t[::1] owner, int64_t shard, const int64_t[::1] src_start,
                 const int64_t[::1] length, const int64_t[::1] dst_start, const int32_t[::1] src_docs,
                 const count_t[::1] src_counts, int32_t[::1] docs, out_count_t[::1] counts):
    """Copy miner `shard`'s columns of (docs, counts) into the merged arrays: output column c, from dst_start[c],
    is merged pattern j = order[c], whose miner owner[j] holds its length[j] entries from src_start[j]."""
    cdef Py_ssize_t c, k, n_cols = order.shape[0]
    cdef int64_t a, b, n, j, n_patterns = owner.shape[0]
    cdef bint outside = False
    if src_start.shape[0] != n_patterns or length.shape[0] != n_patterns:
        raise ValueError("owner, src_start and length must have one entry per merged pattern")
    if dst_start.shape[0] < n_cols:
        raise ValueError("dst_start must have one entry per output column")
    if src_docs.shape[0] != src_counts.shape[0] or docs.shape[0] != counts.shape[0]:
        raise ValueError("docs and counts must have the same length, in the source and in the output")
    if out_count_t is uint8_t and count_t is not uint8_t:
        raise ValueError("uint8 output counts need uint8 source counts")
    with nogil:
        for c in range(n_cols):
            j = order[c]
            if j < 0 or j >= n_patterns:
                outside = True
                break
            if owner[j] != shard:
                continue
            a = src_start[j]
            b = dst_start[c]
            n = length[j]
            if a < 0 or b < 0 or n < 0 or a + n > src_docs.shape[0] or b + n > docs.shape[0]:
                outside = True
                break
            for k in range(n):
                docs[b + k] = src_docs[a + k]
                counts[b + k] = src_counts[a + k]
    if outside:
        raise ValueError(f"column {c} lies outside the merged patterns, the source or the output arrays")


def merge_levels(const int32_t[::1] parent, const int32_t[::1] size, const int64_t[::1] base, int64_t n_roots):
    """The one-miner order of the miners' patterns beyond their shared roots (miner k's from base[k], each one's
    parent a local index, below n_roots a root): by size, then the parent's merged place, then miner, then the
    miner's order. RETURNS: per merged pattern its index in `parent`, its miner and its parent's merged place."""
    cdef Py_ssize_t n_shards = base.shape[0] - 1, k, best
    cdef int64_t n = base[n_shards] if n_shards >= 0 else 0, i, p, key, best_key, placed = 0
    cdef int32_t level = 2, next_level
    if n_shards < 1 or base[0] != 0 or parent.shape[0] != n or size.shape[0] != n:
        raise ValueError("parent and size need one entry per pattern, base the miners' bounds from 0 to their total")
    for k in range(n_shards):
        if base[k + 1] < base[k]:
            raise ValueError("base must not decrease")
    position_out = numpy.empty(n, dtype=numpy.int64)
    owner_out = numpy.empty(n, dtype=numpy.int64)
    parent_out = numpy.empty(n, dtype=numpy.int32)
    rank_of = numpy.full(n, -1, dtype=numpy.int64)
    at_of = numpy.array(base[:n_shards], dtype=numpy.int64)
    cdef int64_t[::1] position = position_out, owner = owner_out, rank = rank_of, at = at_of
    cdef int32_t[::1] merged_parent = parent_out
    cdef bint bad = False
    with nogil:
        while placed < n and not bad:
            next_level = 0
            while True:
                best = -1
                best_key = 0
                for k in range(n_shards):
                    i = at[k]
                    if i >= base[k + 1]:
                        continue
                    if size[i] != level:
                        if size[i] < level:
                            bad = True
                        elif next_level == 0 or size[i] < next_level:
                            next_level = size[i]
                        continue
                    p = parent[i]
                    if p < 0 or p >= n_roots + base[k + 1] - base[k]:
                        bad = True
                        continue
                    key = p if p < n_roots else rank[base[k] + p - n_roots]
                    if key < 0 or key >= n_roots + placed:
                        bad = True  # a parent not placed before its child
                        continue
                    if best < 0 or key < best_key:
                        best, best_key = k, key
                if best < 0 or bad:
                    break
                i = at[best]
                rank[i] = n_roots + placed
                position[placed] = i
                owner[placed] = best
                merged_parent[placed] = <int32_t>best_key
                placed += 1
                at[best] += 1
            if next_level == 0:
                break
            level = next_level
    if bad or placed != n:
        raise ValueError("the miners' patterns are not in level order with their parents placed first")
    return position_out, owner_out, parent_out


def pattern_codes(const int32_t[::1] parent, const int32_t[::1] depth, const int32_t[::1] label,
                  const int32_t[::1] size):
    """A miner's enumeration tree (per pattern: parent or -1, its last node's depth and label, size) as flat
    codes (start, depth, label): pattern p's code is depth[start[p]:start[p + 1]] and label[...], root first."""
    cdef Py_ssize_t n = parent.shape[0], p
    cdef int64_t k, total = 0, at
    cdef int32_t node
    cdef bint bad = False
    if depth.shape[0] != n or label.shape[0] != n or size.shape[0] != n:
        raise ValueError("parent, depth, label and size need one entry per pattern")
    start_out = numpy.empty(n + 1, dtype=numpy.int64)
    cdef int64_t[::1] start = start_out
    for p in range(n):
        start[p] = total
        if size[p] < 1:
            raise ValueError(f"pattern {p} has size {size[p]}: every pattern has a node")
        total += size[p]
    start[n] = total
    depth_out = numpy.empty(total, dtype=numpy.int32)
    label_out = numpy.empty(total, dtype=numpy.int32)
    cdef int32_t[::1] flat_depth = depth_out, flat_label = label_out
    with nogil:
        for p in range(n):
            node = <int32_t>p
            at = start[p + 1] - 1
            while node >= 0 and at >= start[p]:
                flat_depth[at] = depth[node]
                flat_label[at] = label[node]
                if parent[node] >= n:
                    bad = True
                    break
                node = parent[node]
                at -= 1
            if bad or node >= 0 or at != start[p] - 1:
                bad = True
                break
    if bad:
        raise ValueError(f"pattern {p}'s ancestors do not number its size minus one")
    return start_out, depth_out, label_out
