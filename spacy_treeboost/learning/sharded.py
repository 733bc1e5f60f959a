"""The linear fits as sums over document shards (`shard.DocumentShard`: the whole matrices, or one per shard file held
by the workers of `shard_files`): every sum a shard's sum added in shard order, so the model is the same bits for any
number of workers and threads (different shards group the sums otherwise, and their models differ in the last bits)."""
import logging
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy

from .features import interpolate, log_count_ratio
from .selection import LinearFit, Path, all_candidates
from .shard import DocumentShard, add_part, fold_split
from .solver import fista, gradient_scale, start_point, tron
from .tasks import make_workers, ray_node
from ..threads import Threads, ThreadTeam

__all__ = ["DocumentShard", "Shards", "final_fit", "fold_margins", "fold_split", "held_shards", "whole_shard"]

logger = logging.getLogger(__name__)


def whole_shard(matrices: Dict[str, Any]) -> DocumentShard:
    """One shard of the whole matrices (by name; None entries left out), not copied when CSC of float64."""
    from scipy.sparse import csc_matrix

    return DocumentShard(0, 0, {name: csc_matrix(X, dtype=numpy.float64) for name, X in matrices.items()
                                if X is not None})


class Shards:
    """The shards held by started `workers` (`_ShardHolder`s, a run of consecutive shards each; `in_process`: here):
    `map` asks every shard in shard order, `add` sums their answers in shard order, in this process.

    n_shards (int): How many shards the workers hold.
    names (List[str]): The names of the shards' matrices.
    """

    in_process = True
    n_shards = 0  # 0: not known
    names: List[str] = []

    def __init__(self, workers: Any, n_shards: int, names: List[str], in_process: bool = True) -> None:
        self.workers, self.n_shards, self.names, self.in_process = workers, n_shards, names, in_process
        self.actors = getattr(workers, "actors", [])
        self.node_ids: List[str] = workers.call_all("node") if self.actors else []
        workers.when = "during a fit"
        if n_shards > 1:
            logger.info("%d shards on %d workers on %d node(s)", n_shards, workers.n, len(set(self.node_ids)) or 1)

    @classmethod
    def here(cls, shards: List[DocumentShard]) -> "Shards":
        """The shards, held in this process."""
        workers = make_workers("local", 1, lambda i, _: (_ShardHolder, (shards,), {}), name="Shard holder")
        return cls(workers, len(shards), sorted(shards[0].matrices))

    def runs(self, method: str, *args: Any) -> Iterator[List[Any]]:
        """Every worker's answers to `method(*args)` (its run of shards'), in worker order, as they come."""
        args = self.workers.put(args)
        for i in range(self.workers.n):
            self.workers.send(i, "map", (method, args))
        for i in range(self.workers.n):
            yield self.workers.receive(i)

    def map(self, method: str, *args: Any) -> List[Any]:
        """Every shard's `method(*args)`, in shard order."""
        return [result for run in self.runs(method, *args) for result in run]

    def add(self, method: str, *args: Any) -> Tuple[Any, ...]:
        """The shards' `method(*args)` (tuples of numbers, arrays and `Part`s) added in shard order."""
        total: List[Any] = []
        for run in self.runs(method, *args):
            for part in run:
                total = [add_part(t, p) for t, p in zip(total, part)] if total else [add_part(None, p) for p in part]
        return tuple(total)

    def close(self) -> None:
        self.workers.close()


class _ShardHolder:
    """A worker holding a run of consecutive shards; `one_blas_thread` (outside the training process) limits its
    BLAS to one thread, as in the training process's fits: the same sums."""

    def __init__(self, shards: List[DocumentShard], one_blas_thread: bool = False) -> None:
        from threadpoolctl import threadpool_limits

        self.shards = shards
        self._blas = threadpool_limits(limits=1, user_api="blas") if one_blas_thread else None

    def map(self, method: str, args: Tuple[Any, ...]) -> List[Any]:
        return [getattr(shard, method)(*args) for shard in self.shards]

    def node(self) -> str:
        return ray_node()


class _Layout:
    """The reduced problem of the selected shards (`DocumentShard.reduce`): the maps between its points and the full
    problem's, and the size of its gradient at the start (`g_zero_scale`)."""

    def __init__(self, shards: Any, d: int, keep_all: bool, threads: Union[int, Threads] = 1) -> None:
        self.shards, self.d, self.keep_all = shards, d, keep_all
        df = None if shards.n_shards == 1 else shards.add("column_counts")[0]
        found = shards.map("reduce", df, keep_all)
        counts = numpy.array([n for n, _ in found], dtype=numpy.int64)
        offsets = numpy.concatenate([[0], numpy.cumsum(counts)[:-1]]).astype(numpy.int64)
        shards.map("place", offsets, int(counts.sum()), threads if shards.in_process else 1)
        keep = None if keep_all else found[0][1] if df is None else numpy.flatnonzero(df >= 2)
        self.keep = None if keep is None else keep.astype(numpy.int32 if d < 2 ** 31 else numpy.int64, copy=False)
        self.g_zero_scale: Optional[float] = None

    def reduce(self, x: numpy.ndarray) -> numpy.ndarray:
        if self.keep is None:
            return x
        return numpy.concatenate([x[self.keep], *self.shards.map("reduce_point", x), x[-1:]])

    def expand(self, z: numpy.ndarray) -> numpy.ndarray:
        if self.keep is None:
            return z
        x = numpy.zeros(self.d + 1)
        x[self.keep] = z[: len(self.keep)]
        for cols, values in self.shards.map("expand", z):
            x[cols] = values
        x[-1] = z[-1]
        return x


class ShardedNewton:
    """The L2 problem as `solver.tron` asks for it, each sum over documents the shards' parts added in shard order;
    `hessp` at the point of the last `preconditioner`."""

    def __init__(self, shards: Any, loss: str, l2: float, threads: Union[int, Threads] = 1) -> None:
        self.shards, self.loss, self.l2 = shards, loss, l2
        self.team = ThreadTeam(threads)

    def value_grad(self, x: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
        value, grad_w, grad_c = self.shards.add("value_grad", x, self.loss)
        w = x[:-1]
        grad = numpy.empty_like(x)
        numpy.multiply(w, self.l2, out=grad[:-1])
        grad[:-1] += grad_w
        grad[-1] = grad_c
        return value + 0.5 * self.l2 * float(w @ w), grad

    def preconditioner(self, x: numpy.ndarray) -> numpy.ndarray:
        diagonal, total = self.shards.add("preconditioner", x, self.loss)
        M = numpy.empty_like(x)
        numpy.multiply(diagonal, 0.01, out=M[:-1])
        M[:-1] += self.l2
        M[-1] = self.l2 + 0.01 * total
        return M

    def hessp(self, v: numpy.ndarray) -> numpy.ndarray:
        product, total = self.shards.add("hessp", v)
        out = numpy.empty_like(v)
        numpy.multiply(v[:-1], self.l2, out=out[:-1])
        out[:-1] += product
        out[-1] = total
        return out


def _fit(shards: Any, layout: _Layout, y: numpy.ndarray, C: float, *, l1_ratio: float, loss: str, max_iter: int,
         tol: float, init: Optional[numpy.ndarray], threads: Union[int, Threads] = 1) -> Tuple[numpy.ndarray, float]:
    """The weights and intercept at C on the selected, scaled and laid out shards (y: their training labels), from
    `init` (weights then intercept; None: zero weights and the prior's intercept)."""
    problem = ShardedNewton(shards, loss, (1.0 - l1_ratio) / C, threads)
    if layout.g_zero_scale is None:
        # the penalty's gradient at zero weights is zero: the gradient there is the same for every C
        layout.g_zero_scale = gradient_scale(problem.value_grad(layout.reduce(start_point(y, layout.d, loss)))[1],
                                             l1_ratio)
    gtol = max(tol * layout.g_zero_scale, 1e-300)
    x0 = start_point(y, layout.d, loss) if init is None else numpy.asarray(init, dtype=numpy.float64)
    try:
        if l1_ratio > 0.0:
            x = fista(x0, problem.value_grad, l1_ratio / C, max_iter, gtol)
        else:
            reduced = layout.reduce(x0)
            del x0, init  # the full start is freed unless the caller holds it
            x = layout.expand(tron(problem, reduced, max_iter, gtol))
    finally:
        problem.team.close()
    return x[:-1], float(x[-1])


def _prepare(shards: Any, nb: bool, l1_ratio: float, d: int,
             threads: Union[int, Threads]) -> Tuple[Optional[numpy.ndarray], _Layout]:
    """Scale the selected shards' columns (naive Bayes with `nb`) and lay out their problem (reduced for L2)."""
    scale = log_count_ratio(*shards.add("nb_counts")) if nb else None
    shards.map("scale", scale)
    return scale, _Layout(shards, d, keep_all=l1_ratio > 0, threads=threads)


def fold_margins(shards: Any, name: str, y: numpy.ndarray, folds: numpy.ndarray, fold: int, paths: Sequence[Path], *,
                 l1_ratio: float, loss: str, max_iter: int, tol: float,
                 threads: Union[int, Threads] = 1) -> numpy.ndarray:
    """The margins of fold `fold`'s documents under the fits on the other folds of matrix `name` for every candidate
    of `paths`, each path's Cs fitted in increasing order, warm-started: shape (candidates, documents in the fold)."""
    y = numpy.asarray(y, dtype=numpy.float64)
    train = folds != fold
    d = shards.map("select", name, y, folds, fold, threads if shards.in_process else 1)[0]
    out = numpy.zeros((len(all_candidates(paths)), int((~train).sum())))
    logger.info("cross-validation fold %d of %d: %d candidate(s) on %d documents", fold + 1, int(folds.max()) + 1,
                len(out), int(train.sum()))
    k = 0
    for path in paths:
        _, layout = _prepare(shards, path.nb, l1_ratio, d, threads)
        init = None
        for C in path.Cs:
            w, c = _fit(shards, layout, y[train], C, l1_ratio=l1_ratio, loss=loss, max_iter=max_iter, tol=tol,
                        init=init, threads=threads)
            for beta in path.betas:
                out[k] = numpy.concatenate(shards.map("margins", interpolate(w, beta), c))
                k += 1
            init = numpy.append(w, c)
            del w  # the fit's own vector: the next fit starts from init alone
    shards.map("release")
    return out


def final_fit(shards: Any, name: str, y: numpy.ndarray, C: float, *, nb: bool, l1_ratio: float, loss: str,
              max_iter: int, tol: float, threads: Union[int, Threads] = 1,
              init: Optional[numpy.ndarray] = None, folds: Optional[numpy.ndarray] = None,
              fold: Optional[int] = None) -> LinearFit:
    """The fit at C on every document of matrix `name` (with `folds`: those outside fold `fold`), naive Bayes scaled
    with `nb`, from `init` (the weights of the unscaled features, then the intercept)."""
    y = numpy.asarray(y, dtype=numpy.float64)
    d = shards.map("select", name, y, folds, fold, threads if shards.in_process else 1)[0]
    scale, layout = _prepare(shards, nb, l1_ratio, d, threads)
    if init is not None and scale is not None:
        scaled = numpy.zeros(d + 1)
        numpy.divide(init[:-1], scale, out=scaled[:-1], where=scale != 0)
        scaled[-1], init = init[-1], scaled
    w, c = _fit(shards, layout, y if folds is None else y[folds != fold], C, l1_ratio=l1_ratio, loss=loss,
                max_iter=max_iter, tol=tol, init=init, threads=threads)
    shards.map("release")
    return LinearFit(w, c, scale)


@contextmanager
def held_shards(matrices: Dict[str, Any]) -> Iterator[Shards]:
    """A context holding one shard of the whole matrices (`whole_shard`) here, for every fit."""
    group = Shards.here([whole_shard(matrices)])
    try:
        yield group
    finally:
        group.close()
