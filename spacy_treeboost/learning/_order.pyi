from typing import Tuple

import numpy

def order_by_count(df: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]: ...
