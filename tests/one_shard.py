"""The package's linear fit on one matrix (one shard of its rows), as the tests call it, and fits on shards of a
matrix's rows cut in memory (as shard files hold them)."""
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy

from spacy_treeboost.learning import sharded, subtree_linear
from spacy_treeboost.learning.heads import HeadSettings, fit_heads
from spacy_treeboost.learning.selection import HeadFit, Path


def fit_linear(X: Any, y: numpy.ndarray, *, C: float, l1_ratio: float = 0.0, loss: str = "logistic",
               max_iter: int = 1000, tol: float = 1e-3, init: Optional[numpy.ndarray] = None,
               threads: int = 1) -> Tuple[numpy.ndarray, float]:
    """The weights and intercept minimizing the objective of `solver` on X at C (`sharded.final_fit`; FISTA with an
    L1 share), from `init` (weights, then the intercept)."""
    with sharded.held_shards({"F": X}) as shards:
        fit = sharded.final_fit(shards, "F", y, C, nb=False, l1_ratio=l1_ratio, loss=loss, max_iter=max_iter, tol=tol,
                                threads=threads, init=init)
    return fit.weights, fit.intercept


def fit_matrix_head(X: Any, y: numpy.ndarray, paths: Sequence[Path], *, cv: int, max_scored: Optional[int] = None,
                    **solver: Any) -> HeadFit:
    """One head (`heads.fit_heads`) on the matrix X, one shard of its rows, its folds' documents capped at
    `max_scored`; `solver`: l1_ratio, loss, max_iter and tol."""
    with sharded.held_shards({"F": X}) as shards:
        return fit_heads(HeadSettings(cv=cv, cv_documents=max_scored, **solver), shards, [y], paths)[0][0]


def cut_shards(matrices: Dict[str, Any], size: int) -> List[sharded.DocumentShard]:
    """The shards of `size` consecutive rows each of the matrices (by name), in order."""
    whole = sharded.whole_shard(matrices).matrices
    n = next(iter(whole.values())).shape[0]
    return [sharded.DocumentShard(b, start, {name: X[start:start + size] for name, X in whole.items()})
            for b, start in enumerate(range(0, n, size))]


def fit_on_row_shards(monkeypatch: Any, size: int) -> None:
    """Make `SubtreeLinearClassifier` fit a Forest on `cut_shards` of `size` rows (held here) instead of one shard."""
    @contextmanager
    def held(matrices: Dict[str, Any]) -> Iterator[sharded.Shards]:
        group = sharded.Shards.here(cut_shards(matrices, size))
        try:
            yield group
        finally:
            group.close()

    monkeypatch.setattr(subtree_linear, "held_shards", held)
