"""The merge of the shard-file workers' subtrees (`shard_files`) into the one miner's order, level by level, kept by
`min_support` and `keep_rare_up_to` applied to the sums of their document counts."""
import logging
from typing import List, NamedTuple, Sequence, Tuple

import numpy

from .classifier import NO_SUBTREE, _label_rank
from .features import PatternTree, order_by_frequency
from .tasks import Workers
from ..trees.forest import ROOT_LABEL

logger = logging.getLogger(__name__)

# a level's patterns: the merged index of each one's parent (-1 for single nodes), its new node's depth and label id
Keys = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]
# candidates of one level merged at once in this process; more are merged in parts
MAX_CANDIDATES = 1_000_000


def positions(keys: Keys, mine: Keys, rank: numpy.ndarray) -> numpy.ndarray:
    """Where each of the patterns `mine` lies among the sorted distinct `keys` (-1: not among them)."""
    m = len(keys[0])
    parent, depth, label = (numpy.concatenate([a, b]) for a, b in zip(keys, mine))
    order = numpy.lexsort((rank[label], depth, parent))  # stable: an equal merged key comes first
    merged = order < m
    last = numpy.maximum.accumulate(numpy.where(merged, order, -1))
    out = numpy.empty(len(mine[0]), dtype=numpy.int64)
    out[order[~merged] - m] = last[~merged]
    found = out >= 0
    hit = found.copy()
    hit[found] = ((keys[0][out[found]] == mine[0][found]) & (keys[1][out[found]] == mine[1][found])
                  & (keys[2][out[found]] == mine[2][found]))
    return numpy.where(hit, out, -1)


def merge_level(merged: Tuple[numpy.ndarray, ...], part: Tuple[numpy.ndarray, ...],
                rank: numpy.ndarray) -> Tuple[numpy.ndarray, ...]:
    """The union of one level's patterns (parent, depth, label, documents) of two sets, sorted by parent, depth and
    label rank, the documents of a pattern in both added."""
    parent, depth, label, docs = (numpy.concatenate([a, b]) for a, b in zip(merged, part))
    order = numpy.lexsort((rank[label], depth, parent))
    parent, depth, label, docs = parent[order], depth[order], label[order], docs[order].astype(numpy.int64)
    new = numpy.ones(len(parent), dtype=bool)
    new[1:] = (parent[1:] != parent[:-1]) | (depth[1:] != depth[:-1]) | (label[1:] != label[:-1])
    starts = numpy.flatnonzero(new)
    return parent[starts], depth[starts], label[starts], numpy.add.reduceat(docs, starts) if len(starts) else docs


def merged_strings(parts: Sequence[Sequence[str]]) -> List[str]:
    """The workers' label strings numbered canonically: the virtual root, then the others sorted."""
    return [ROOT_LABEL, *sorted(set().union(*parts) - {ROOT_LABEL})]


class MergedPatterns:
    """The workers' kept patterns merged level by level, one worker at a time: parent (merged index), depth, label,
    size and documents, in the one miner's order. Only extensions of kept patterns are candidates, and a level of
    more than `max_candidates` candidates is merged in parts, each the extensions of a range of parents."""

    def __init__(self, workers: Workers, max_pattern_size: int, rank: numpy.ndarray, min_support: int,
                 rare_up_to: int, max_candidates: int = MAX_CANDIDATES) -> None:
        columns: List[List[numpy.ndarray]] = [[], [], [], [], []]
        base, previous = 0, (0, 0)
        for size in range(1, max_pattern_size + 1):
            candidates = sum(workers.call_all("count", (size,)))
            parts = 1 if size == 1 else max(1, min(previous[1] - previous[0], -(-candidates // max_candidates)))
            bounds = numpy.linspace(previous[0], previous[1], parts + 1).round().astype(numpy.int64)
            start = base
            for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
                level = self._merge(workers, size, lo, hi, rank, 1 if size <= rare_up_to else min_support)
                keys = workers.put(level[:3])
                for i in range(workers.n):
                    workers.send(i, "place", (size, keys, base, lo, hi))
                for i in range(workers.n):
                    workers.receive(i)
                columns[0].append(level[0].astype(numpy.int32))
                columns[1].append(level[1].astype(numpy.uint8))
                columns[2].append(level[2])
                columns[3].append(numpy.full(len(level[0]), size, dtype=numpy.uint8))
                columns[4].append(level[3])
                base += len(level[0])
            logger.info("%d subtrees of %d nodes kept of %d candidates (%d part(s))", base - start, size, candidates,
                        parts)
            if base == start:
                break
            previous = (start, base)
        self.parent, self.depth, self.label, self.size, self.docs = (_joined(parts) for parts in columns)

    @staticmethod
    def _merge(workers: Workers, size: int, lo: int, hi: int, rank: numpy.ndarray,
               min_support: int) -> Tuple[numpy.ndarray, ...]:
        """The patterns of `size` nodes extending merged patterns lo to hi - 1, in >= `min_support` documents."""
        empty = numpy.zeros(0, dtype=numpy.int64)
        level: Tuple[numpy.ndarray, ...] = (empty, empty.astype(numpy.int32), empty.astype(numpy.int32), empty)
        for i in range(workers.n):
            workers.send(i, "level", (size, lo, hi))
            level = merge_level(level, workers.receive(i), rank)
        keep = level[3] >= min_support
        return tuple(values[keep] for values in level)


def _joined(parts: List[numpy.ndarray]) -> numpy.ndarray:
    """The parts concatenated, the list emptied: a column's parts are freed once joined, before the next is."""
    joined = numpy.concatenate(parts) if parts else numpy.zeros(0, dtype=numpy.int64)
    parts.clear()
    return joined


class Mined(NamedTuple):
    """The kept subtrees (in the one miner's order), their documents, and `inverse`: the column of each."""
    tree: PatternTree
    docs: numpy.ndarray
    inverse: numpy.ndarray


def mine_files(workers: Workers, strings: List[str], max_pattern_size: int, min_support: int, keep_rare_up_to: int,
               include_root_patterns: bool, max_cache_mb: float, max_candidates: int = MAX_CANDIDATES) -> Mined:
    """The workers mine their documents (labels numbered as `strings`); the merged subtrees are kept by `min_support`
    and `keep_rare_up_to` as `mining.mine_subtrees` keeps them."""
    settings = dict(max_pattern_size=max_pattern_size, include_root=include_root_patterns,
                    max_cache_bytes=int(max_cache_mb) << 20)
    workers.call_all("mine", (workers.put(strings), settings))
    rare = min(keep_rare_up_to, max_pattern_size) if min_support > 1 else 0
    merged = MergedPatterns(workers, max_pattern_size, _label_rank(strings), min_support, rare, max_candidates)
    if not len(merged.docs):
        raise ValueError(NO_SUBTREE)
    tree = PatternTree(strings, merged.parent, merged.depth, merged.label, merged.size)
    inverse = order_by_frequency(merged.docs)[1]
    return Mined(tree, merged.docs, inverse.astype(numpy.int32) if len(inverse) < 2 ** 31 else inverse)
