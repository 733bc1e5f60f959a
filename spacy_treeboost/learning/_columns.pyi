from typing import Any, Callable, List, Optional, Tuple

import numpy

def split_csc_rows(
    indptr: numpy.ndarray, indices: numpy.ndarray, data: Optional[numpy.ndarray], side: numpy.ndarray, rank: numpy.ndarray,
    run: Callable[..., List[Any]], bounds: List[Tuple[int, int]]
) -> Tuple[Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray], Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]]: ...
def take_columns(
    indptr: numpy.ndarray, indices: numpy.ndarray, data: Optional[numpy.ndarray], columns: numpy.ndarray,
    tail_rows: numpy.ndarray, tail_values: numpy.ndarray
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]: ...
def return_free_heap() -> bool: ...
