"""Subtree mining for the linear learner: every subtree up to a size as a count matrix; several workers mine
separate root labels, merged back into the one miner's order."""
import os
from typing import Any, Dict, Optional, Sequence, Tuple

import numpy

from ._columns import return_free_heap
from ._merge import copy_columns, merge_levels
from .classifier import _label_rank
from .features import PatternCodes, order_by_frequency
from .tasks import run_tasks
from ..threads import ThreadTeam
from ..trees.forest import Forest

# max_pattern_size=None: SHORT_PATTERN_SIZE in trees of <= SHORT_DOCUMENT_NODES nodes on average, else PATTERN_SIZE
PATTERN_SIZE = 3
SHORT_PATTERN_SIZE = 2
SHORT_DOCUMENT_NODES = 32.0


def pattern_size(n_nodes: int, n_docs: int) -> int:
    """The largest subtree that `max_pattern_size=None` mines in training documents of `n_nodes` nodes in all."""
    return SHORT_PATTERN_SIZE if n_nodes <= SHORT_DOCUMENT_NODES * n_docs else PATTERN_SIZE


def mine_subtrees(X: Forest, *, max_pattern_size: int, min_support: int, include_root_patterns: bool,
                  max_cache_mb: int, keep_rare_up_to: int = 0, n_workers: int = 1, backend: Optional[str] = None,
                  ray_address: Optional[str] = None, min_shard_documents: int = 2000,
                  by_frequency: bool = False) -> Tuple[Any, ...]:
    """Every subtree of X up to `max_pattern_size` nodes in >= `min_support` documents, and every one of at most
    `keep_rare_up_to` nodes: the (n_docs, n_subtrees) CSC count matrix and each subtree's pattern code.

    n_workers (int): Workers that mine separate root labels, at most one per `min_shard_documents` documents.
    by_frequency (bool): Columns in frequency order, counts as uint8 (where they fit) or int32, and return the
        inverse of the column order too.
    """
    from scipy.sparse import csc_matrix

    from .backends import assign_root_labels

    rare = min(keep_rare_up_to, max_pattern_size) if min_support > 1 else 0
    vocab = X.vocab.to_list()
    settings = dict(max_pattern_size=max_pattern_size, min_support=min_support, rare_up_to=rare,
                    include_root=include_root_patterns, max_cache_bytes=int(max_cache_mb) << 20)
    forest = (X.labels, X.parents, X.offsets, _label_rank(vocab))
    n_workers = min(n_workers, max(1, len(X) // max(1, min_shard_documents)))
    if n_workers == 1:
        shards = [_mine_shard(forest, settings, None)]
    else:
        owners = assign_root_labels(X.labels, X.parents, len(vocab), n_workers, include_root_patterns)
        # the last shard sends the roots' documents: first, so that on processes this process mines it
        done = run_tasks(_Miner, (forest, settings, owners, n_workers), range(n_workers - 1, -1, -1), n_workers,
                         backend, ray_address, "Mining worker", lambda shard: f"while mining shard {shard}")
        shards = [done[s] for s in range(n_workers)]
    places, table = merged_columns(shards)
    parent, depth, label, size = table
    codes = PatternCodes.from_tree(parent, depth, label, size, vocab)
    order, inverse = order_by_frequency(places[2]) if by_frequency else (numpy.arange(len(codes)), None)
    dtype: Any = numpy.float64
    if by_frequency:
        dtype = numpy.uint8 if all(s["matrix"][2].dtype == numpy.uint8 for s in shards) else numpy.int32
    matrix = csc_matrix(gather_columns(shards, places, order, min(n_workers, os.cpu_count() or 1), dtype)[::-1],
                        shape=(len(X), len(codes)))
    del shards, places, table, parent, depth, label, size, order
    return_free_heap()  # the miners' freed memory, scattered among the arrays kept
    return (matrix, codes) if inverse is None else (matrix, codes, inverse)


def _mine_shard(forest: Tuple[numpy.ndarray, ...], settings: Dict[str, Any], owned: Optional[numpy.ndarray],
                with_roots: bool = True) -> Dict[str, Any]:
    """Every pattern of the root labels `owned` (None: all); the roots' documents only `with_roots`."""
    from ._extension import PatternCache

    space = PatternCache(*forest, **settings)
    if owned is not None:
        space.own_root_labels(owned)
    space.expand_all()
    table, (indptr, docs, counts) = space.take_patterns()
    del space
    n_roots = int(numpy.count_nonzero(table[0] < 0))
    if owned is not None and not with_roots:
        end = int(indptr[n_roots])
        indptr = numpy.concatenate([numpy.zeros(n_roots + 1, dtype=indptr.dtype), indptr[n_roots + 1:] - end])
        docs, counts = docs[end:], counts[end:]
        if counts.dtype != numpy.uint8 and len(counts) and int(counts.max()) < 256:  # the large counts were roots'
            counts = counts.astype(numpy.uint8)
    return {"matrix": (indptr, docs, counts), "table": table, "n_roots": n_roots, "with_roots": with_roots}


def merged_columns(shards: Sequence[Dict[str, Any]]) -> Tuple[Tuple[numpy.ndarray, ...], Tuple[numpy.ndarray, ...]]:
    """Where each pattern of the one-miner order lies among the shards (shard, start, length), and the merged table
    (parent, depth, label, size); each parent lives in one miner, so `merge_levels` orders the union."""
    if len(shards) == 1:
        indptr = shards[0]["matrix"][0]
        return (numpy.zeros(len(indptr) - 1, dtype=numpy.int64), indptr[:-1].astype(numpy.int64),
                numpy.diff(indptr).astype(numpy.int64)), shards[0]["table"]
    R = shards[0]["n_roots"]
    with_roots = next(k for k, s in enumerate(shards) if s["with_roots"])
    tables = [s["table"] for s in shards]
    indptrs = [s["matrix"][0] for s in shards]
    base = numpy.zeros(len(shards) + 1, dtype=numpy.int64)
    numpy.cumsum([len(t[0]) - R for t in tables], out=base[1:])
    # the parents and sizes of the patterns beyond the roots of every shard, one after the other: shard k's from base[k]
    parents, sizes = (numpy.concatenate([t[c][R:] for t in tables]).astype(numpy.int32, copy=False) for c in (0, 3))
    position, owner, merged_parent = merge_levels(parents, sizes, base, R)
    del parents, sizes

    def gathered(head: numpy.ndarray, parts: Sequence[numpy.ndarray], dtype: Any) -> numpy.ndarray:
        """The roots' `head`, then the merged patterns' values from the shards' `parts` beyond the roots."""
        out = numpy.empty(R + len(position), dtype=dtype)
        out[:R] = head
        out[R:] = numpy.concatenate(parts)[position]
        return out

    table = (numpy.concatenate([tables[0][0][:R], merged_parent]).astype(numpy.int32, copy=False),
             *(gathered(tables[0][c][:R], [t[c][R:] for t in tables], numpy.int32) for c in (1, 2, 3)))
    roots = indptrs[with_roots][:R + 1]
    places = (numpy.concatenate([numpy.full(R, with_roots, dtype=numpy.int64), owner]),
              gathered(roots[:-1], [p[R:-1] for p in indptrs], numpy.int64),
              gathered(numpy.diff(roots), [numpy.diff(p[R:]) for p in indptrs], numpy.int64))
    return places, table


def gather_columns(shards: Sequence[Dict[str, Any]], places: Tuple[numpy.ndarray, ...], order: numpy.ndarray,
                   threads: int = 1, dtype: Any = numpy.float64) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The CSC arrays (indptr, docs, counts) of the merged patterns `order`, copied from the shards."""
    owner, starts, lengths = places
    order = numpy.ascontiguousarray(order, dtype=numpy.int64)
    indptr = numpy.zeros(len(order) + 1, dtype=numpy.int64)
    numpy.cumsum(lengths[order], out=indptr[1:])
    docs = numpy.empty(int(indptr[-1]), dtype=numpy.int32)
    counts = numpy.empty(int(indptr[-1]), dtype=dtype)

    def copy(k: int) -> None:
        copy_columns(order, owner, k, starts, lengths, indptr, shards[k]["matrix"][1], shards[k]["matrix"][2], docs,
                     counts)

    with ThreadTeam(threads) as team:
        team.map(copy, range(len(shards)))
    return indptr, docs, counts


class _Miner:
    """Runs shard s: the patterns of its root labels (the last shard sends the roots' documents)."""

    def __init__(self, forest: Tuple[numpy.ndarray, ...], settings: Dict[str, Any], owners: numpy.ndarray,
                 n_shards: int, threads: Any = 1) -> None:
        self.forest, self.settings, self.owners, self.n_shards = forest, settings, owners, n_shards

    def run(self, shard: int) -> Dict[str, Any]:
        return _mine_shard(self.forest, self.settings, self.owners == shard, shard == self.n_shards - 1)
