from typing import Any, Dict, Optional

import numpy

from ._extension import PatternCache

class SearchSpace(PatternCache):
    nodes_visited: int
    docs_summed: int
    children_checked: int
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
