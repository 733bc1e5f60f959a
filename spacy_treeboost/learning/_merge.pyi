from typing import Tuple

import numpy

def copy_columns(
    order: numpy.ndarray, owner: numpy.ndarray, shard: int, src_start: numpy.ndarray, length: numpy.ndarray,
    dst_start: numpy.ndarray, src_docs: numpy.ndarray, src_counts: numpy.ndarray, docs: numpy.ndarray,
    counts: numpy.ndarray
) -> None: ...
def merge_levels(
    parent: numpy.ndarray, size: numpy.ndarray, base: numpy.ndarray, n_roots: int
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]: ...
def pattern_codes(
    parent: numpy.ndarray, depth: numpy.ndarray, label: numpy.ndarray, size: numpy.ndarray
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]: ...
