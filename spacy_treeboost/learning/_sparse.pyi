from typing import Tuple

import numpy

def split_csc_rows(
    indptr: numpy.ndarray, indices: numpy.ndarray, data: numpy.ndarray, side: numpy.ndarray, rank: numpy.ndarray
) -> Tuple[Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray], Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]]: ...
