from typing import Any, Dict, Tuple

import numpy

CRITERIA: Dict[str, int]

class SearchSpace:
    n_docs: int
    max_pattern_size: int
    min_support: int
    max_cache_bytes: int
    nodes_visited: int
    docs_summed: int
    children_checked: int
    def __init__(
        self,
        labels: numpy.ndarray,
        parents: numpy.ndarray,
        offsets: numpy.ndarray,
        label_rank: numpy.ndarray,
        *,
        max_pattern_size: int = ...,
        min_support: int = ...,
        include_root: bool = ...,
        max_cache_bytes: int = ...,
    ) -> None: ...
    @property
    def n_patterns(self) -> int: ...
    def cache_bytes(self) -> int: ...
    def memory_report(self) -> Dict[str, int]: ...
    def expand_all(self) -> int: ...
    def pattern_code(self, i: int) -> Tuple[Tuple[int, int], ...]: ...
    def pattern_docs(self, i: int) -> Tuple[numpy.ndarray, numpy.ndarray]: ...
    def pattern_size(self, i: int) -> int: ...
    def best_rule(
        self, weights: numpy.ndarray, y: numpy.ndarray, criterion: str = ..., presence: bool = ...
    ) -> Dict[str, Any]: ...

def py_bound(criterion: str, Ap: float, An: float, Tp: float, Tn: float) -> float: ...
def py_value(criterion: str, P: float, N: float, Wp: float, Wn: float) -> float: ...
