from typing import Any, Dict, Optional

import numpy

from ._extension import PatternCache

CRITERIA: Dict[str, int]

def py_bound(criterion: str, Ap: float, An: float, Tp: float, Tn: float) -> float: ...
def py_weight_bound(S: float, Tp: float, Tn: float) -> float: ...
def py_weight_cut(Tp: float, Tn: float, threshold: float) -> float: ...
def py_value(criterion: str, P: float, N: float, Wp: float, Wn: float) -> float: ...
def tie_tolerance(v: float) -> float: ...

class SearchSpace(PatternCache):
    nodes_visited: int
    def prepare(self, weights: numpy.ndarray, y: numpy.ndarray, criterion: str = ...) -> None: ...
    def best_rule(
        self,
        weights: Optional[numpy.ndarray],
        y: numpy.ndarray,
        criterion: str = ...,
        presence: bool = ...,
        shared_best: Optional[numpy.ndarray] = ...,
        prepared: bool = ...,
    ) -> Dict[str, Any]: ...
