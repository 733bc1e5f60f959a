import numpy

from ._patterns import PatternStore

class PatternCache(PatternStore):
    max_pattern_size: int
    min_support: int
    rare_up_to: int
    max_cache_bytes: int
    single_document_dominance: bool
    def __init__(
        self,
        labels: numpy.ndarray,
        parents: numpy.ndarray,
        offsets: numpy.ndarray,
        label_rank: numpy.ndarray,
        *,
        max_pattern_size: int = ...,
        min_support: int = ...,
        rare_up_to: int = ...,
        include_root: bool = ...,
        max_cache_bytes: int = ...,
        single_document_dominance: bool = ...,
    ) -> None: ...
    def expand_all(self) -> int: ...
    def own_root_labels(self, owned: numpy.ndarray) -> int: ...
