from typing import Any, Callable, List, Optional, Tuple

import numpy

class PatternMatcher:
    n_patterns: int
    def __init__(
        self, depth: numpy.ndarray, label: numpy.ndarray, code_start: numpy.ndarray, n_labels: int,
        match_roots: bool = ...
    ) -> None: ...
    def count(
        self, labels: numpy.ndarray, parents: numpy.ndarray, offsets: numpy.ndarray
    ) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]: ...

def codes_in_order(
    depth: numpy.ndarray, label: numpy.ndarray, code_start: numpy.ndarray, order: numpy.ndarray,
    run: Optional[Callable[..., List[Any]]] = None, pieces: int = 1
) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]: ...
