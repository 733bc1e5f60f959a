from typing import Any, Callable, List, Optional, Tuple

import numpy

def order_by_count(df: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]: ...
def order_by_magnitude(
    w: numpy.ndarray, run: Optional[Callable[..., List[Any]]] = None, pieces: int = 1
) -> Optional[numpy.ndarray]: ...
