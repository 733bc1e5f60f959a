from typing import Tuple

import numpy

def split_csc_rows(
    indptr: numpy.ndarray, indices: numpy.ndarray, data: numpy.ndarray, side: numpy.ndarray, rank: numpy.ndarray
) -> Tuple[Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray], Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]]: ...

def copy_columns(
    src_start: numpy.ndarray, dst_start: numpy.ndarray, length: numpy.ndarray, src_docs: numpy.ndarray,
    src_counts: numpy.ndarray, docs: numpy.ndarray, counts: numpy.ndarray
) -> None: ...

def scale_columns_and_norms(
    indptr: numpy.ndarray, indices: numpy.ndarray, data: numpy.ndarray, scale: numpy.ndarray, sq_norms: numpy.ndarray
) -> None: ...
def divide_by_rows(indices: numpy.ndarray, data: numpy.ndarray, by: numpy.ndarray) -> None: ...
def check_pattern(indptr: numpy.ndarray, indices: numpy.ndarray, n_rows: int) -> None: ...
def pattern_matvec(
    indptr: numpy.ndarray, indices: numpy.ndarray, scale: numpy.ndarray, x: numpy.ndarray, out: numpy.ndarray
) -> None: ...
def pattern_rmatvec(
    indptr: numpy.ndarray, indices: numpy.ndarray, scale: numpy.ndarray, u: numpy.ndarray, out: numpy.ndarray
) -> None: ...
