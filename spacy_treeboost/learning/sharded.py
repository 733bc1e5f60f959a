"""Linear fits whose loss and gradient are sums over document shards (the linear learner's `shard_documents`).

The training documents are cut, by index, into shards of `shard_documents` consecutive documents. A
`DocumentShard` holds its rows of the feature matrices and computes, for one fit, its part of everything
that sums over documents: the loss and its gradient X^T u, the preconditioner's diagonal, the Hessian-vector
products, the naive Bayes counts and the columns' document counts (which find the subtrees seen in one
document, folded per document as `features.SingletonReduction` does). `fold_margins` and `final_fit` run
the trust-region Newton method of `solver.fit_linear` (FISTA for an L1 share) in this process and add the
shards' parts in shard order, whether the shards are held here or by Ray actors, a run of consecutive shards
each (`Shards`): the numbers, and so the model, are the same, bit for bit, for any
number of workers. They differ from the fits without shards in the last bits, since the sums are grouped
otherwise.
"""
import logging
from contextlib import contextmanager
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy

from .features import NB_ALPHA, find_singletons, interpolate, log_count_ratio, scale_columns
from .selection import LinearFit, Path, all_candidates, fold_split
from .solver import curvature, fista, gradient_tolerance, loss_terms, start_point, tron

logger = logging.getLogger(__name__)


class DocumentShard:
    """Rows `start` to `start + n` of the feature matrices (CSC, by name), and one fit's state on them."""

    def __init__(self, index: int, start: int, matrices: Dict[str, Any]) -> None:
        self.index, self.start, self.matrices = index, start, matrices
        self._selected: Optional[Tuple[Any, ...]] = None

    def select(self, name: str, y: numpy.ndarray, folds: Optional[numpy.ndarray], fold: Optional[int]) -> int:
        """Take matrix `name`'s rows outside fold `fold` (all rows when `folds` is None) as the training rows, the
        others as the held-out rows, and their labels from `y` (all documents'); returns the columns."""
        X = self.matrices[name]
        stop = self.start + X.shape[0]
        part = None if folds is None else folds[self.start:stop]
        labels = y[self.start:stop]
        key = self._selected
        if key is None or key[0] != name or key[1] != fold or not _same(key[2], part) or not _same(key[3], labels):
            if part is None or fold is None:
                self.train, self.test, self.y = X, X[:0], labels
            else:
                self.train, self.test = fold_split(X, part, fold)
                self.y = labels[part != fold]
            self._selected = (name, fold, part, labels)
        self.A, self.B = self.train, self.test
        return int(X.shape[1])

    def nb_counts(self) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The training rows' column sums over positive and over negative documents."""
        return (self.train.T @ (self.y > 0).astype(numpy.float64), self.train.T @ (self.y < 0).astype(numpy.float64))

    def scale(self, scale: Optional[numpy.ndarray]) -> None:
        """Scale the columns of the training and held-out rows (None: as selected)."""
        if scale is None:
            self.A, self.B = self.train, self.test
        else:
            self.A, self.B = scale_columns(self.train, scale), scale_columns(self.test, scale)
        if not bool(numpy.all(self.A.data != 0)):
            self.A = self.A.copy()
            self.A.eliminate_zeros()

    def column_counts(self) -> Tuple[numpy.ndarray]:
        """How many training rows of this shard have each column."""
        return (numpy.diff(self.A.indptr).astype(numpy.int64),)

    def reduce(self, df: numpy.ndarray, keep_all: bool) -> int:
        """Lay out the reduced problem for the columns' document counts `df` over all shards: the columns in two or
        more documents, then one column per document with columns in no other (its samples); returns how many
        samples this shard has (none with `keep_all`, which keeps every column)."""
        if keep_all:
            self.keep, self.k, self.share, self.norms = None, self.A.shape[1], numpy.zeros(0), numpy.zeros(0)
            self.cols = self.slot = self.samples = numpy.zeros(0, dtype=numpy.int64)
            return 0
        s = find_singletons(self.A, df)
        self.keep, self.k, self.cols, self.slot, self.share = s.keep, len(s.keep), s.cols, s.slot, s.share
        self.samples, self.norms = s.samples, s.norms
        return len(self.samples)

    def place(self, offsets: numpy.ndarray, total: int) -> None:
        """Build the reduced rows: the kept columns, then `total` sample columns, this shard's from
        k + offsets[index]. Only the columns this shard has are stored (`local`, CSC, and the CSR of their
        transpose sharing its arrays): column by column, the products read and write the weights in order and only
        this shard's documents at random, and skip the columns of other shards (as rows, they would gather and
        scatter over all the weights, which outgrow the caches first)."""
        from scipy.sparse import csc_matrix, csr_matrix

        self.offset = int(offsets[self.index])
        kept = self.A if self.keep is None else self.A[:, self.keep]
        ends = numpy.clip(numpy.arange(1, total + 1) - self.offset, 0, len(self.samples))
        indptr = numpy.concatenate([kept.indptr, kept.indptr[-1] + ends]).astype(numpy.int64)
        self.d = self.k + total
        self.local = numpy.flatnonzero(numpy.diff(indptr))
        indptr = numpy.concatenate([[0], indptr[self.local + 1]])
        indices = numpy.concatenate([kept.indices, self.samples]).astype(numpy.int64)
        data = numpy.concatenate([kept.data, self.norms])
        n, m = self.A.shape[0], len(self.local)
        self.R = csc_matrix((data, indices, indptr), shape=(n, m))
        self.RT = csr_matrix((data, indices, indptr), shape=(m, n))
        self.R2T = csr_matrix((data * data, indices, indptr), shape=(m, n))

    def _weights(self, local: numpy.ndarray) -> numpy.ndarray:
        """A vector over all the reduced problem's columns, zero but at this shard's."""
        out = numpy.zeros(self.d)
        out[self.local] = local
        return out

    def reduce_point(self, x: numpy.ndarray) -> numpy.ndarray:
        """This shard's samples' coordinates of the reduced point matching the full one x."""
        return numpy.bincount(self.slot, weights=self.share * x[self.cols], minlength=len(self.samples))

    def expand(self, z: numpy.ndarray) -> Tuple[numpy.ndarray, numpy.ndarray]:
        """The weights of this shard's columns seen in one document, at the reduced point z."""
        return self.cols, z[self.k + self.offset + self.slot] * self.share

    def value_grad(self, x: numpy.ndarray, loss: str) -> Tuple[float, numpy.ndarray, float]:
        f = self.R @ x[:-1][self.local] + x[-1]
        value, d = loss_terms(self.y * f, loss)
        g_f = self.y * d
        return value, self._weights(self.RT @ g_f), float(g_f.sum())

    def preconditioner(self, x: numpy.ndarray, loss: str) -> Tuple[numpy.ndarray, float]:
        self.curvature = curvature(self.y * (self.R @ x[:-1][self.local] + x[-1]), loss)
        return self._weights(self.R2T @ self.curvature), float(self.curvature.sum())

    def hessp(self, v: numpy.ndarray) -> Tuple[numpy.ndarray, float]:
        u = self.R @ v[:-1][self.local]
        u += v[-1]
        u *= self.curvature
        return self._weights(self.RT @ u), float(u.sum())

    def margins(self, w: numpy.ndarray, c: float) -> numpy.ndarray:
        """The held-out rows' margins."""
        return self.B @ w + c


def _same(a: Optional[numpy.ndarray], b: Optional[numpy.ndarray]) -> bool:
    if a is None or b is None:
        return a is b
    return numpy.array_equal(a, b)


def make_shards(matrices: Dict[str, Any], size: int) -> List[DocumentShard]:
    """The shards of `size` documents of the matrices (by name; None entries are left out)."""
    from scipy.sparse import csc_matrix

    csc = {name: csc_matrix(X, dtype=numpy.float64) for name, X in matrices.items() if X is not None}
    n = next(iter(csc.values())).shape[0]
    return [DocumentShard(b, start, {name: X[start:start + size] for name, X in csc.items()})
            for b, start in enumerate(range(0, n, size))]


class Shards:
    """The shards held by up to `n_workers` workers of `backend` ("local": this process), a run of consecutive shards
    each: `map` asks every shard in shard order, `add` sums their answers in shard order, in this process. (Handing a
    running sum on from Ray actor to actor, each adding its run's, gives the same bits, but was slower on 2 actors.)"""

    def __init__(self, shards: List[DocumentShard], n_workers: int = 1, backend: str = "local",
                 address: Optional[str] = None) -> None:
        from .tasks import make_workers

        n = min(n_workers, len(shards))
        cuts = numpy.linspace(0, len(shards), n + 1).round().astype(int)
        self.in_process = backend == "local"
        self.workers = make_workers(backend, n, lambda i, _: (_ShardHolder, (shards[cuts[i]:cuts[i + 1]],
                                                                             not self.in_process), {}),
                                    ray_address=address, name="Shard holder")
        self.actors = getattr(self.workers, "actors", [])
        self.node_ids: List[str] = [] if self.in_process else self.workers.call_all("node")
        self.workers.when = "during a fit"
        logger.info("%d shards on %d workers on %d node(s)", len(shards), n, len(set(self.node_ids)) or 1)

    def map(self, method: str, *args: Any) -> List[Any]:
        """Every shard's `method(*args)`, in shard order."""
        parts = self.workers.call_all("map", (method, self.workers.put(args)))
        return [result for part in parts for result in part]

    def add(self, method: str, *args: Any) -> Tuple[Any, ...]:
        """The shards' `method(*args)` (tuples) added in shard order."""
        return _add_tuples(self.map(method, *args))

    def close(self) -> None:
        self.workers.close()


class _ShardHolder:
    """A worker holding a run of consecutive shards; `one_blas_thread` (elsewhere than the training process) sets
    its BLAS on one thread, as the fits in the training process are: the same sums."""

    def __init__(self, shards: List[DocumentShard], one_blas_thread: bool = False) -> None:
        from threadpoolctl import threadpool_limits

        self.shards = shards
        self._blas = threadpool_limits(limits=1, user_api="blas") if one_blas_thread else None

    def map(self, method: str, args: Tuple[Any, ...]) -> List[Any]:
        return [getattr(shard, method)(*args) for shard in self.shards]

    def node(self) -> str:
        """The Ray node this actor runs on."""
        import ray

        return str(ray.get_runtime_context().get_node_id())


def _add(parts: Sequence[Any]) -> Any:
    """The parts added in order."""
    total = parts[0].copy() if isinstance(parts[0], numpy.ndarray) else parts[0]
    for part in parts[1:]:
        total += part
    return total


def _add_tuples(parts: Sequence[Tuple[Any, ...]]) -> Tuple[Any, ...]:
    """The tuples added in order, item by item."""
    return tuple(_add(items) for items in zip(*parts))


class _Layout:
    """The reduced problem of the selected shards (see `DocumentShard.reduce`): its columns kept and their
    positions, and the maps between its points and the full problem's."""

    def __init__(self, shards: Any, d: int, keep_all: bool) -> None:
        self.shards, self.d, self.keep_all = shards, d, keep_all
        df = shards.add("column_counts")[0]
        counts = numpy.array(shards.map("reduce", df, keep_all), dtype=numpy.int64)
        offsets = numpy.concatenate([[0], numpy.cumsum(counts)[:-1]]).astype(numpy.int64)
        shards.map("place", offsets, int(counts.sum()))
        self.keep = None if keep_all else numpy.flatnonzero(df >= 2)

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
    """`solver.Newton` over shards: each quantity that sums over documents is the shards' parts added in shard
    order."""

    def __init__(self, shards: Any, loss: str, l2: float) -> None:
        self.shards, self.loss, self.l2 = shards, loss, l2

    def value_grad(self, x: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
        value, grad_w, grad_c = self.shards.add("value_grad", x, self.loss)
        w = x[:-1]
        grad = numpy.empty_like(x)
        grad[:-1] = grad_w + self.l2 * w
        grad[-1] = grad_c
        return value + 0.5 * self.l2 * float(w @ w), grad

    def preconditioner(self, x: numpy.ndarray) -> numpy.ndarray:
        diagonal, total = self.shards.add("preconditioner", x, self.loss)
        M = numpy.empty_like(x)
        M[:-1] = self.l2 + 0.01 * diagonal
        M[-1] = self.l2 + 0.01 * total
        return M

    def hessp(self, v: numpy.ndarray) -> numpy.ndarray:
        product, total = self.shards.add("hessp", v)
        out = numpy.empty_like(v)
        out[:-1] = self.l2 * v[:-1] + product
        out[-1] = total
        return out


def _fit(shards: Any, layout: _Layout, y: numpy.ndarray, C: float, *, l1_ratio: float, loss: str, max_iter: int,
         tol: float, init: Optional[numpy.ndarray]) -> Tuple[numpy.ndarray, float]:
    """`solver.fit_linear` on the selected, scaled and laid out shards (y: their training labels, in order)."""
    l2 = (1.0 - l1_ratio) / C
    problem = ShardedNewton(shards, loss, l2)
    zero = start_point(y, layout.d, loss)
    x0 = zero if init is None else numpy.array(init, dtype=numpy.float64)
    gtol = gradient_tolerance(problem.value_grad(layout.reduce(zero))[1], tol, l1_ratio)
    if l1_ratio == 0.0:
        x = layout.expand(tron(problem, layout.reduce(x0), max_iter, gtol))
    else:
        x = fista(x0, problem.value_grad, l1_ratio / C, max_iter, gtol)
    return x[:-1].copy(), float(x[-1])


def _nb_scale(shards: Any, alpha: float = NB_ALPHA) -> numpy.ndarray:
    """`features.nb_ratio` of the selected shards' training rows."""
    pos, neg = shards.add("nb_counts")
    return log_count_ratio(pos, neg, alpha)


def fold_margins(shards: Any, name: str, y: numpy.ndarray, folds: numpy.ndarray, fold: int, paths: Sequence[Path], *,
                 l1_ratio: float, loss: str, max_iter: int, tol: float, **_: Any) -> numpy.ndarray:
    """`selection.fold_margins` of matrix `name` held by `shards`."""
    y = numpy.asarray(y, dtype=numpy.float64)
    train = folds != fold
    d = shards.map("select", name, y, folds, fold)[0]
    out = numpy.zeros((len(all_candidates(paths)), int((~train).sum())))
    logger.info("cross-validation fold %d of %d: %d candidate(s) on %d documents in shards", fold + 1,
                int(folds.max()) + 1, len(out), int(train.sum()))
    k = 0
    for path in paths:
        shards.map("scale", _nb_scale(shards) if path.nb else None)
        layout = _Layout(shards, d, keep_all=l1_ratio > 0)
        init = None
        for C in path.Cs:
            w, c = _fit(shards, layout, y[train], C, l1_ratio=l1_ratio, loss=loss, max_iter=max_iter, tol=tol,
                        init=init)
            init = numpy.append(w, c)
            for beta in path.betas:
                out[k] = numpy.concatenate(shards.map("margins", interpolate(w, beta), c))
                k += 1
    return out


def final_fit(shards: Any, name: str, y: numpy.ndarray, C: float, *, nb: bool, l1_ratio: float, loss: str,
              max_iter: int, tol: float, **_: Any) -> LinearFit:
    """`selection.final_fit` of matrix `name` held by `shards`."""
    y = numpy.asarray(y, dtype=numpy.float64)
    d = shards.map("select", name, y, None, None)[0]
    scale = _nb_scale(shards) if nb else None
    shards.map("scale", scale)
    layout = _Layout(shards, d, keep_all=l1_ratio > 0)
    w, c = _fit(shards, layout, y, C, l1_ratio=l1_ratio, loss=loss, max_iter=max_iter, tol=tol, init=None)
    return LinearFit(w, c, numpy.ones(d) if scale is None else scale)


@contextmanager
def held_shards(F: Any, T: Any, shard_documents: Optional[int], n_workers: int, backend: Optional[str],
                ray_address: Optional[str]) -> Iterator[Optional["Shards"]]:
    """The shards of F and T of `shard_documents` documents each for every fit: held by Ray actors with backend
    "ray" and several workers, else here; None when `shard_documents` is None.

    RETURNS (Iterator[Optional[Shards]]): A context holding the shards, released on exit.
    """
    if shard_documents is None:
        yield None
        return
    shards = make_shards({"F": F, "T": T}, shard_documents)
    on_ray = backend == "ray" and n_workers > 1
    group = Shards(shards, n_workers if on_ray else 1, "ray" if on_ray else "local", ray_address)
    del shards
    try:
        yield group
    finally:
        group.close()
