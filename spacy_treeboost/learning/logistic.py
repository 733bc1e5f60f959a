"""Regularized linear models on sparse features: the solver under the corrective and linear learners.

For labels y in {-1, +1} and margins f = Xw + c (the intercept c is not penalized) the
objective is

    sum_i loss(y_i f_i) + (1 / C) * ((1 - l1_ratio) / 2 * ||w||^2 + l1_ratio * ||w||_1)

with loss "logistic" (log(1 + exp(-m))) or "squared_hinge" (max(0, 1 - m)^2). For
l1_ratio = 0 this is scikit-learn's `LogisticRegression(C=C)` / `LinearSVC(C=C,
loss="squared_hinge")` with an unpenalized intercept. L2 problems are solved by a
trust-region Newton method with conjugate gradients on Hessian-vector products (as
LIBLINEAR's primal solver does; the generalized Hessian for the squared hinge),
elastic-net problems by FISTA with backtracking; both are deterministic. `tol` is
relative: a solve stops when the gradient (FISTA: the gradient mapping) is `tol`
times that at the start from zero weights, whatever the scale of the features.
"""
import logging
import math
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union

import numpy

from ..params import Interval, Items, Options, Rule, rule, validate_params
from .threads import Threads, ThreadTeam
from ._sparse import (cg_direction_range, cg_residual_range, cg_step_range, check_pattern, column_values, dot_range,
                      pattern_matvec, pattern_rmatvec, split_csc_rows, squared_rmatvec, take_columns)

if TYPE_CHECKING:
    import scipy.sparse as sp

logger = logging.getLogger(__name__)

LOSSES = ("logistic", "squared_hinge")
NB_ALPHA = 1.0
DEFAULT_CS = (0.01, 0.03, 0.1, 0.25, 1.0, 3.0, 10.0)  # 0.25, not 0.3: srsly's JSON writes 0.3 as 0.30000000000000004
MAX_C = 1e6
MIN_C = 1e-6


def _chooses_C(params: Mapping[str, Any]) -> bool:
    return params.get("C") is None


SOLVER_CONSTRAINTS: Dict[str, Rule] = {
    "C": rule(Interval("real", MIN_C, MAX_C), None, hint=(
        f"use a regularization strength from {MIN_C:g} to {MAX_C:g} (larger means weaker regularization), or None "
        "to choose it by cross-validation")),
    "Cs": rule(Items(Interval("real", MIN_C, MAX_C)), hint=f"list one or more values of C from {MIN_C:g} to {MAX_C:g}",
               when=_chooses_C),
    "l1_ratio": rule(Interval("real", 0.0, 1.0), hint="use a number from 0 (L2) to 1 (L1)"),
    "loss": rule(Options(*LOSSES)),
    "cv": rule(Interval("int", 2, 20), hint="use a whole number of folds from 2 to 20", when=_chooses_C),
    "max_iter": rule(Interval("int", 1, 1_000_000)),
    "tol": rule(Interval("real", 0, 1, "neither"), hint="use a small positive number such as 1e-3"),
}


def check_settings(*, C: Optional[float], Cs: Sequence[float], l1_ratio: float, loss: str, cv: int,
                   max_iter: int, tol: float) -> None:
    """Raise a ValueError naming the first setting out of range (`SOLVER_CONSTRAINTS`)."""
    validate_params(dict(C=C, Cs=Cs, l1_ratio=l1_ratio, loss=loss, cv=cv, max_iter=max_iter, tol=tol),
                    SOLVER_CONSTRAINTS)


def _loss_terms(m: numpy.ndarray, loss: str) -> Tuple[float, numpy.ndarray]:
    """Sum of losses at margins m = y f, and d loss / d m."""
    if loss == "logistic":
        value = float(numpy.logaddexp(0.0, -m).sum())
        with numpy.errstate(over="ignore"):
            d = -1.0 / (1.0 + numpy.exp(m))
        return value, d
    h = numpy.maximum(0.0, 1.0 - m)
    return float(h @ h), -2.0 * h


def _smooth(x: numpy.ndarray, X: "sp.spmatrix", y: numpy.ndarray, loss: str, l2: float) -> Tuple[float, numpy.ndarray]:
    w, c = x[:-1], x[-1]
    f = X @ w + c
    value, d = _loss_terms(y * f, loss)
    g_f = y * d
    grad = numpy.empty_like(x)
    if isinstance(X, _ColumnBlocks):
        X.rmatvec(g_f, plus=(w, l2), out=grad[:-1])
    else:
        grad[:-1] = X.T @ g_f + l2 * w
    grad[-1] = g_f.sum()
    return value + 0.5 * l2 * float(w @ w), grad


class _Problem:
    """The smooth part of the objective, its gradient and Hessian-vector products (the curvature of the
    loss kept for the last point seen, since the solver asks for many products at one point)."""

    def __init__(self, X: "sp.spmatrix", y: numpy.ndarray, loss: str, l2: float) -> None:
        self.X, self.y, self.loss, self.l2 = X, y, loss, l2
        self._at: Optional[numpy.ndarray] = None
        self._curvature = numpy.zeros(0)

    def value_grad(self, x: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
        return _smooth(x, self.X, self.y, self.loss, self.l2)

    def hessp(self, x: numpy.ndarray, v: numpy.ndarray) -> numpy.ndarray:
        if self._at is None or not numpy.array_equal(x, self._at):
            self._curvature = _curvature(self.y * (self.X @ x[:-1] + x[-1]), self.loss)
            self._at = x.copy()
        return _hessian_product(self.X, self._curvature, self.l2, v)


def _hessian_product(X: "sp.spmatrix", curvature: numpy.ndarray, l2: float, v: numpy.ndarray) -> numpy.ndarray:
    """H v for the Hessian (weights, then the unpenalized intercept) at the point of the loss's `curvature`."""
    u = X @ v[:-1]
    u += v[-1]
    u *= curvature
    out = numpy.empty_like(v)
    if isinstance(X, _ColumnBlocks):
        X.rmatvec(u, plus=(v[:-1], l2), out=out[:-1])
    else:
        numpy.multiply(v[:-1], l2, out=out[:-1])
        out[:-1] += X.T @ u
    out[-1] = u.sum()
    return out


class _SingletonReduction:
    """An L2 problem with the features that occur in one sample each folded into one feature per sample.

    The features j of sample i that no other sample has enter only its margin, through
    u_i = sum_j x_ij w_j; for a given u_i their penalty sum_j w_j^2 is smallest, u_i^2 / n_i^2
    with n_i^2 = sum_j x_ij^2, at w_j = u_i x_ij / n_i^2. So the problem is exactly the one
    over the other features and one feature per such sample, of value n_i and weight
    v_i = u_i / n_i, with w_j = v_i x_ij / n_i; the gradient has the same norm at matching
    points. Features no sample has (explicit zeros only) get weight 0. Large subtree spaces are mostly such
    features, so the solver works on far shorter vectors.
    """

    def __init__(self, X: "sp.spmatrix") -> None:
        from scipy.sparse import csc_matrix

        X = csc_matrix(X)
        if not bool(numpy.all(X.data != 0)):
            X = X.copy()
            X.eliminate_zeros()
        n, self.d = X.shape
        df = numpy.diff(X.indptr)
        self.keep = numpy.flatnonzero(df >= 2)
        self.cols = numpy.flatnonzero(df == 1)
        once = X.indptr[self.cols]
        self.rows = X.indices[once].astype(numpy.int64)
        values = X.data[once]
        sq = numpy.bincount(self.rows, weights=values ** 2, minlength=n)
        self.samples = numpy.flatnonzero(sq > 0)
        norms = numpy.sqrt(sq)
        self.share = values / norms[self.rows]
        slot = numpy.full(n, -1, dtype=numpy.int64)
        slot[self.samples] = numpy.arange(len(self.samples))
        self.slot = slot[self.rows]
        if len(self.keep) == self.d:
            self.X = X
            return
        indptr, indices, data = take_columns(X.indptr.astype(X.indices.dtype, copy=False), X.indices, X.data,
                                             self.keep.astype(numpy.int64, copy=False),
                                             self.samples.astype(X.indices.dtype),
                                             norms[self.samples])
        self.X = csc_matrix((data, indices, indptr), shape=(n, len(self.keep) + len(self.samples)))

    def reduce(self, x: numpy.ndarray) -> numpy.ndarray:
        """The reduced problem's point (weights, then intercept) matching the full one's x."""
        if len(self.keep) == self.d:
            return x
        v = numpy.bincount(self.slot, weights=self.share * x[self.cols], minlength=len(self.samples))
        return numpy.concatenate([x[self.keep], v, x[-1:]])

    def expand(self, z: numpy.ndarray) -> numpy.ndarray:
        """The full problem's point of the reduced one's z."""
        if len(self.keep) == self.d:
            return z
        x = numpy.zeros(self.d + 1)
        x[self.keep] = z[: len(self.keep)]
        x[self.cols] = z[len(self.keep) + self.slot] * self.share
        x[-1] = z[-1]
        return x


BLOCK_NNZ = 1 << 23
N_BLOCKS = 8


def column_pieces(indptr: numpy.ndarray, n_pieces: int) -> List[Tuple[int, int]]:
    """`n_pieces` runs of consecutive columns (lo, hi) of a CSC matrix with `indptr`, of about equal entries (some
    may be empty)."""
    d = len(indptr) - 1
    cuts = numpy.searchsorted(indptr, numpy.linspace(0, indptr[-1], n_pieces + 1)[1:-1])
    edges = [0] + numpy.clip(cuts, 0, d).tolist() + [d]
    return list(zip(edges[:-1], edges[1:]))


CG_PIECE = 1 << 16


class _Pieces:
    """A vector's entries in fixed pieces of `CG_PIECE`, for the compiled vector kernels of `_pcg` on a `ThreadTeam`: a
    sum is each piece's sum (in index order) added in piece order, the same for any number of threads."""

    def __init__(self, n: int, team: Optional[ThreadTeam]) -> None:
        self.bounds = [(lo, min(lo + CG_PIECE, n)) for lo in range(0, n, CG_PIECE)]
        self.team = team if team is not None else ThreadTeam(1)

    def total(self, kernel: Callable[..., float], *args: Any) -> float:
        total = 0.0
        for part in self.team.map(lambda bounds: kernel(*args, *bounds), self.bounds):
            total += part
        return total

    def each(self, kernel: Callable[..., None], *args: Any) -> None:
        self.team.map(lambda bounds: kernel(*args, *bounds), self.bounds)


class _ColumnBlocks:
    """The products of a large CSC matrix over `N_BLOCKS` fixed column blocks of equal nonzeros (views of its
    arrays, and their transposes as CSR views: scipy's `.T` would copy them at every product), the blocks on up to
    the threads of a `ThreadTeam` (scipy's products release the GIL). X v sums the blocks' partial products in block
    order and X^T u concatenates them, so the result is the same, bit for bit, for any number of threads. When each
    column holds one value (presence and naive Bayes features, and their squares), the blocks are multiplied by
    `pattern_matvec` and `pattern_rmatvec`, which read that value once per column: the same sums as scipy's.
    With `squared`, the blocks stand for X with its entries squared, multiplied by its transpose only
    (`squared_rmatvec`, or the pattern kernels with the values squared): scipy's sums on that matrix, without it."""

    def __init__(self, X: "sp.spmatrix", threads: Union[int, Threads, ThreadTeam], squared: bool = False) -> None:
        from scipy.sparse import csc_matrix, csr_matrix

        n, d = X.shape
        self.n, self.d, self.squared = n, d, squared
        scale = _column_values(X)
        if scale is not None or squared:
            check_pattern(X.indptr.astype(X.indices.dtype, copy=False), X.indices, n)
        if scale is not None and squared:
            scale = scale * scale
        self.blocks = []
        for a, b in column_pieces(X.indptr, N_BLOCKS):
            lo, hi = int(X.indptr[a]), int(X.indptr[b])
            indptr = (X.indptr[a:b + 1] - lo).astype(X.indices.dtype)
            if scale is not None:
                self.blocks.append((int(a), int(b), (indptr, X.indices[lo:hi], scale[a:b]), None))
                continue
            if squared:
                self.blocks.append((int(a), int(b), (indptr, X.indices[lo:hi], X.data[lo:hi]), "squared"))
                continue
            block, transposed = csc_matrix((n, int(b - a)), dtype=X.dtype), csr_matrix((int(b - a), n), dtype=X.dtype)
            block.data = transposed.data = X.data[lo:hi]
            block.indices = transposed.indices = X.indices[lo:hi]
            block.indptr = transposed.indptr = indptr
            self.blocks.append((int(a), int(b), block, transposed))
        self.team = threads if isinstance(threads, ThreadTeam) else ThreadTeam(threads)

    @property
    def T(self) -> "_Transposed":
        return _Transposed(self)

    def _map(self, product: Any) -> List[numpy.ndarray]:
        return self.team.map(product, self.blocks)

    def __matmul__(self, v: numpy.ndarray) -> numpy.ndarray:
        if self.squared:
            raise NotImplementedError("column blocks of squared entries multiply by their transpose only")
        parts = self._map(lambda block: self._block_matvec(block, v))
        out = parts[0]
        for part in parts[1:]:
            out += part
        return out

    def _block_matvec(self, block: Tuple[Any, ...], v: numpy.ndarray) -> numpy.ndarray:
        a, b, of, transposed = block
        if transposed is not None:
            return of @ v[a:b]
        out = numpy.zeros(self.n)
        pattern_matvec(*of, numpy.ascontiguousarray(v[a:b], dtype=numpy.float64), out)
        return out

    def rmatvec(self, u: numpy.ndarray, plus: Optional[Tuple[numpy.ndarray, float]] = None,
                out: Optional[numpy.ndarray] = None) -> numpy.ndarray:
        """X^T u, into `out` when given; with plus = (v, c), X^T u + v * c, added block by block."""
        u = numpy.ascontiguousarray(u, dtype=numpy.float64)
        result = numpy.empty(self.d) if out is None else out

        def block(block: Tuple[Any, ...]) -> None:
            a, b = block[0], block[1]
            self._block_rmatvec(block, u, result[a:b])
            if plus is not None:
                result[a:b] += plus[0][a:b] * plus[1]

        self._map(block)
        return result

    @staticmethod
    def _block_rmatvec(block: Tuple[Any, ...], u: numpy.ndarray, out: numpy.ndarray) -> None:
        a, b, of, transposed = block
        if transposed is None:
            pattern_rmatvec(*of, u, out)
        elif isinstance(transposed, str):
            squared_rmatvec(*of, u, out)
        else:
            out[:] = transposed @ u


def _column_values(X: "sp.spmatrix") -> Optional[numpy.ndarray]:
    """The value of each column of a float64 CSC X whose columns each hold one value (0 for empty columns), else
    None (`_sparse.column_values`)."""
    if X.format != "csc" or X.dtype != numpy.float64 or X.indices.dtype not in (numpy.int32, numpy.int64):
        return None
    return column_values(X.indptr.astype(X.indices.dtype, copy=False), X.data)


class _Transposed:
    def __init__(self, of: _ColumnBlocks) -> None:
        self.of = of

    def __matmul__(self, u: numpy.ndarray) -> numpy.ndarray:
        return self.of.rmatvec(u)


def _squared(X: "sp.spmatrix") -> "sp.spmatrix":
    """X with its entries squared: X itself when they are all 1, a CSC X sharing its structure."""
    if X.nnz == 0 or bool(numpy.all(X.data == 1.0)):
        return X
    if X.format != "csc":
        return X.power(2)
    from scipy.sparse import csc_matrix

    return csc_matrix((X.data * X.data, X.indices, X.indptr), shape=X.shape)


def _curvature(m: numpy.ndarray, loss: str) -> numpy.ndarray:
    """d^2 loss / d m^2 at margins m (the generalized second derivative for the squared hinge)."""
    if loss == "logistic":
        with numpy.errstate(over="ignore"):
            p = 1.0 / (1.0 + numpy.exp(-m))
        return p * (1.0 - p)
    return 2.0 * (m < 1.0)


class _Newton:
    """The L2 problem as the trust-region Newton method of `_tron` asks for it: value and gradient at a point, the
    preconditioner at a point (the Hessian's diagonal mixed with the identity, weight 0.01; that point's curvature is
    kept for `hessp`), and Hessian-vector products there. X and its entries squared come as `blocks` made by
    `_Newton.blocks` (a large CSC X multiplied by `_ColumnBlocks` on several threads), so that the fits at several
    C share them."""

    def __init__(self, blocks: Tuple[Any, Any], y: numpy.ndarray, loss: str, l2: float) -> None:
        self.X, self.squared = blocks
        self.y, self.loss, self.l2 = y, loss, l2
        self.curvature = numpy.zeros(0)
        self.team = self.X.team if isinstance(self.X, _ColumnBlocks) else None

    @staticmethod
    def blocks(X: "sp.spmatrix", threads: Union[int, Threads]) -> Tuple[Any, Any]:
        """X and its entries squared as `_Newton` multiplies them: as scipy matrices, or as `_ColumnBlocks` of a
        CSC X with at least `BLOCK_NNZ` nonzeros (whatever `threads`), the squares then never stored."""
        if X.nnz < BLOCK_NNZ:
            return X, _squared(X)
        team = ThreadTeam(threads)
        return _ColumnBlocks(X, team), _ColumnBlocks(X, team, squared=True)

    def value_grad(self, x: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
        return _smooth(x, self.X, self.y, self.loss, self.l2)

    def preconditioner(self, x: numpy.ndarray) -> numpy.ndarray:
        self.curvature = _curvature(self.y * (self.X @ x[:-1] + x[-1]), self.loss)
        M = numpy.empty_like(x)
        M[:-1] = self.l2 + 0.01 * (self.squared.T @ self.curvature)
        M[-1] = self.l2 + 0.01 * float(self.curvature.sum())
        return M

    def hessp(self, v: numpy.ndarray) -> numpy.ndarray:
        return _hessian_product(self.X, self.curvature, self.l2, v)


def _tron(problem: Any, x0: numpy.ndarray, max_iter: int, gtol: float) -> numpy.ndarray:
    """The trust-region Newton method of LIBLINEAR (Lin, Weng & Keerthi 2008) with its diagonal preconditioner
    for the conjugate gradients (Hsia, Chiang & Lin 2018), and the trust region in the preconditioner's norm, on a
    `_Newton` problem (or one with its methods). Stops when the gradient's norm is at most `gtol`."""
    x = x0.copy()
    f, g = problem.value_grad(x)
    delta = -1.0
    for it in range(max_iter):
        if float(numpy.linalg.norm(g)) <= gtol:
            break
        M = problem.preconditioner(x)
        if delta < 0:
            delta = math.sqrt(float(g @ (g / M)))
        step, residual = _pcg(problem.hessp, g, M, delta, getattr(problem, "team", None))
        gs = float(g @ step)
        predicted = -0.5 * (gs - float(step @ residual))
        f_new, g_new = problem.value_grad(x + step)
        actual = f - f_new
        snorm = math.sqrt(float(step @ (M * step)))
        if it == 0:
            delta = min(delta, snorm)
        denom = f_new - f - gs
        alpha = 4.0 if denom <= 0 else max(0.25, -0.5 * gs / denom)
        if actual < 1e-4 * predicted:
            delta = min(alpha * snorm, 0.5 * delta)
        elif actual < 0.25 * predicted:
            delta = max(0.25 * delta, min(alpha * snorm, 0.5 * delta))
        elif actual < 0.75 * predicted:
            delta = max(0.25 * delta, min(alpha * snorm, 4.0 * delta))
        else:
            delta = max(delta, min(alpha * snorm, 4.0 * delta))
        if actual > 1e-4 * predicted:
            x, f, g = x + step, f_new, g_new
        if abs(actual) <= 1e-12 * abs(f) and abs(predicted) <= 1e-12 * abs(f):
            break
    return x


def _pcg(hessp: Callable[[numpy.ndarray], numpy.ndarray], g: numpy.ndarray, M: numpy.ndarray,
         delta: float, team: Optional[ThreadTeam] = None) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Preconditioned conjugate gradients for H s = -g within ||s||_M <= delta (Steihaug): the step and the
    residual -(g + H s). Each iteration's vector updates and dot products are compiled kernels over the fixed
    pieces of `_Pieces` (on the team's threads), each entry computed as the textbook form computes it, the dot
    products summed piece by piece, so the step is the same, bit for bit, for any number of threads."""
    pieces = _Pieces(len(g), team)
    s = numpy.zeros_like(g)
    r = -g
    z = r / M
    d = z.copy()
    zr = pieces.total(dot_range, z, r)
    tol = 0.1 * math.sqrt(zr)
    for _ in range(len(g)):
        if math.sqrt(max(zr, 0.0)) <= tol:
            break
        Hd = hessp(d)
        alpha = zr / pieces.total(dot_range, d, Hd)
        if math.sqrt(pieces.total(cg_step_range, s, d, M, alpha)) > delta:
            s -= alpha * d
            sMd, sMs, dMd = float(s @ (M * d)), float(s @ (M * s)), float(d @ (M * d))
            rad = math.sqrt(max(sMd * sMd + dMd * (delta * delta - sMs), 0.0))
            alpha = (delta * delta - sMs) / (sMd + rad) if sMd >= 0 else (rad - sMd) / dMd
            s += alpha * d
            r -= alpha * Hd
            break
        zr_new = pieces.total(cg_residual_range, r, z, Hd, M, alpha)
        pieces.each(cg_direction_range, d, z, zr_new / zr)
        zr = zr_new
    return s, r


def _start(y: numpy.ndarray, d: int, loss: str) -> numpy.ndarray:
    """Zero weights and the intercept of the class prior."""
    x0 = numpy.zeros(d + 1)
    p = min(max((y > 0).mean(), 1e-3), 1 - 1e-3) if len(y) else 0.5
    x0[-1] = math.log(p / (1 - p)) if loss == "logistic" else 2 * p - 1
    return x0


def fit_linear(
    X: "sp.spmatrix",
    y: numpy.ndarray,
    *,
    C: float,
    l1_ratio: float = 0.0,
    loss: str = "logistic",
    max_iter: int = 1000,
    tol: float = 1e-3,
    init: Optional[numpy.ndarray] = None,
    method: str = "trust-ncg",
    threads: int = 1,
) -> Tuple[numpy.ndarray, float]:
    """Minimize the objective of the module docstring.

    X (scipy.sparse matrix or numpy.ndarray): Features, shape (n_samples, n_features).
    y (numpy.ndarray): Labels in {-1, +1}.
    C (float): Inverse regularization strength.
    l1_ratio (float): Share of L1 in the penalty (0 = L2).
    loss (str): "logistic" or "squared_hinge".
    init (Optional[numpy.ndarray]): A starting point (weights then intercept), e.g. the
        solution for a nearby C.
    method (str): For L2 problems, "trust-ncg" (scipy's trust-region Newton-CG from a
        unit radius) or "tron" (LIBLINEAR's trust-region Newton method with
        preconditioned conjugate gradients: far fewer Hessian products on large
        sparse problems).
    threads (Union[int, Threads]): Threads for the products of a large problem with method
        "tron" (the result is the same for any number); a `Threads` may rise during the fit.
    RETURNS (Tuple[numpy.ndarray, float]): The weights and the intercept.
    """
    return LinearProblem(X, y, loss=loss, threads=threads).fit(C=C, l1_ratio=l1_ratio, max_iter=max_iter, tol=tol,
                                                               init=init, method=method)


class LinearProblem:
    """`fit_linear` on one X and y at several C (a path): what the fits compute from X alone (the gradient at the
    start from zero weights, and for "tron" the reduction of the singleton features and the column blocks of the
    reduced matrix and its square) is computed at the first fit that needs it and kept for the next ones. Each fit
    is `fit_linear`'s, bit for bit.

    X (scipy.sparse matrix or numpy.ndarray): Features, shape (n_samples, n_features).
    y (numpy.ndarray): Labels in {-1, +1}.
    loss (str): "logistic" or "squared_hinge".
    threads (Union[int, Threads]): As for `fit_linear`.
    """

    def __init__(self, X: "sp.spmatrix", y: numpy.ndarray, *, loss: str = "logistic",
                 threads: Union[int, Threads] = 1) -> None:
        self.X, self.y, self.loss, self.threads = X, numpy.asarray(y, dtype=numpy.float64), loss, threads
        self._g_zero: Optional[numpy.ndarray] = None
        self._reduced: Optional[_SingletonReduction] = None
        self._blocks: Optional[Tuple[Any, Any]] = None

    def fit(self, *, C: float, l1_ratio: float = 0.0, max_iter: int = 1000, tol: float = 1e-3,
            init: Optional[numpy.ndarray] = None, method: str = "trust-ncg") -> Tuple[numpy.ndarray, float]:
        """The weights and the intercept at C (the other settings as for `fit_linear`)."""
        X, y, loss = self.X, self.y, self.loss
        l2 = (1.0 - l1_ratio) / C
        problem = _Problem(X, y, loss, l2)
        zero = _start(y, X.shape[1], loss)
        x0 = zero if init is None else numpy.array(init, dtype=numpy.float64)
        if self._g_zero is None:
            # the penalty's gradient at zero weights is zero: the gradient there is the same for every C
            self._g_zero = problem.value_grad(zero)[1]
        g_zero = self._g_zero
        gtol = max(tol * float(numpy.linalg.norm(g_zero)), 1e-300)
        if l1_ratio == 0.0 and method == "tron":
            if self._reduced is None:
                self._reduced = _SingletonReduction(X)
                self._blocks = _Newton.blocks(self._reduced.X, self.threads)
            newton = _Newton(self._blocks, y, loss, l2)
            try:
                x = self._reduced.expand(_tron(newton, self._reduced.reduce(x0), max_iter, gtol))
            finally:
                if newton.team is not None:
                    newton.team.close()
        elif l1_ratio == 0.0:
            from scipy.optimize import minimize

            x = minimize(problem.value_grad, x0, jac=True, hessp=problem.hessp, method="trust-ncg",
                         options={"maxiter": max_iter, "gtol": gtol}).x
        else:
            x = _fista(x0, problem.value_grad, l1_ratio / C, max_iter,
                       max(tol * float(numpy.abs(g_zero).max()), 1e-300))
        return x[:-1].copy(), float(x[-1])


def _soft_threshold(v: numpy.ndarray, t: float) -> numpy.ndarray:
    return numpy.sign(v) * numpy.maximum(numpy.abs(v) - t, 0.0)


def _fista(x0: numpy.ndarray, smooth: Callable[[numpy.ndarray], Tuple[float, numpy.ndarray]], l1: float,
           max_iter: int, gtol: float) -> numpy.ndarray:
    """FISTA with backtracking for the smooth part `smooth` (value and gradient) plus l1 times the weights' L1 norm
    (not the intercept's)."""
    x = x0.copy()
    v = x.copy()
    t = 1.0
    L = 1.0
    for _ in range(max_iter):
        fv, gv = smooth(v)
        while True:
            z = v - gv / L
            z[:-1] = _soft_threshold(z[:-1], l1 / L)
            fz, _ = smooth(z)
            diff = z - v
            if fz <= fv + float(gv @ diff) + 0.5 * L * float(diff @ diff) + 1e-12 * max(1.0, abs(fv)):
                break
            L *= 2.0
        step = numpy.abs(z - x).max() * L
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        v = z + ((t - 1.0) / t_next) * (z - x)
        x, t = z, t_next
        if step < gtol:
            break
        L = max(L * 0.9, 1e-12)
    return x


def objective(w: numpy.ndarray, c: float, X: "sp.spmatrix", y: numpy.ndarray, *, C: float, l1_ratio: float = 0.0,
              loss: str = "logistic") -> float:
    """The value of the objective of the module docstring at (w, c)."""
    f = X @ w + c
    value, _ = _loss_terms(numpy.asarray(y, dtype=numpy.float64) * f, loss)
    return value + (1.0 / C) * ((1 - l1_ratio) / 2 * float(w @ w) + l1_ratio * float(numpy.abs(w).sum()))


def stratified_folds(y: numpy.ndarray, k: int) -> numpy.ndarray:
    """A fold id for every sample, classes spread evenly over the folds, deterministic."""
    y = numpy.asarray(y)
    folds = numpy.empty(len(y), dtype=numpy.int64)
    for value in numpy.unique(y):
        idx = numpy.flatnonzero(y == value)
        folds[idx] = numpy.arange(len(idx)) % k
    return folds


class Candidate(NamedTuple):
    """One model the folds score: naive Bayes scaled features or plain ones, C, the interpolation, and whether
    it is fitted on the tf-idf matrix instead of the presence one."""
    nb: bool
    C: float
    beta: float
    tfidf: bool = False


class Path(NamedTuple):
    """Candidates fitted along one regularization path: one feature map (naive Bayes scaled or not), the values
    of C (fitted in increasing order, each fit warm-started from the last) and the interpolations scored on
    every fit (they cost no fit)."""
    nb: bool
    Cs: Tuple[float, ...]
    betas: Tuple[float, ...]
    tfidf: bool = False

    @property
    def candidates(self) -> List[Candidate]:
        return [Candidate(self.nb, C, beta, self.tfidf) for C in self.Cs for beta in self.betas]


def make_path(nb: bool, Cs: Sequence[float], nb_beta: Optional[float], nb_betas: Sequence[float]) -> Path:
    """A path over `Cs` in increasing order and the interpolations: `nb_betas` in decreasing order when
    `nb_beta` is None, else `nb_beta` alone (1 without naive Bayes scaling)."""
    if not nb:
        betas: List[float] = [1.0]
    elif nb_beta is None:
        betas = sorted((float(v) for v in nb_betas), reverse=True)
    else:
        betas = [float(nb_beta)]
    return Path(bool(nb), tuple(sorted(float(c) for c in Cs)), tuple(betas))


def all_candidates(paths: Sequence[Path]) -> List[Candidate]:
    """The candidates of every path, in order: the order in which ties are broken."""
    return [c for path in paths for c in path.candidates]


def choose_C(
    X: "sp.spmatrix",
    y: numpy.ndarray,
    paths: Sequence[Path],
    *,
    cv: int,
    l1_ratio: float = 0.0,
    loss: str = "logistic",
    max_iter: int = 1000,
    tol: float = 1e-3,
    criterion: str = "accuracy",
    method: str = "trust-ncg",
    max_scored: Optional[int] = None,
) -> Tuple[Candidate, List[float], numpy.ndarray, numpy.ndarray]:
    """The candidate chosen by `cv` stratified folds.

    paths (Sequence[Path]): The candidates, path by path; a path with naive Bayes
        scaling scales each fold's features by the ratios of its training rows only.
    criterion (str): "accuracy" (the best mean accuracy; ties: lower log-loss, then
        the earlier candidate) or "calibrated_log_loss" (the lowest log-loss of the
        out-of-fold margins after `platt` scaling; ties: the earlier candidate).
    max_scored (Optional[int]): Fit only the first folds that hold out this many
        samples together (see `cv_folds`).
    RETURNS (Tuple[Candidate, List[float], numpy.ndarray, numpy.ndarray]): The chosen
        candidate, the mean accuracy of every candidate, and the out-of-fold margin of
        every scored sample under the chosen one and their labels.
    """
    y = numpy.asarray(y, dtype=numpy.float64)
    folds = cv_folds(y, cv, max_scored)
    blocks = [fold_margins(X, y, folds, fold, paths, l1_ratio=l1_ratio, loss=loss, max_iter=max_iter, tol=tol,
                           method=method) for fold in range(int(folds.max()) + 1)]
    oof, scored = assemble_margins(blocks, folds), y[folds >= 0]
    k, accuracy = select_candidate(oof, scored, criterion)
    return all_candidates(paths)[k], accuracy, oof[k], scored


def cv_folds(y: numpy.ndarray, cv: int, max_scored: Optional[int] = None) -> numpy.ndarray:
    """The stratified folds of `choose_C`: `cv` of them, fewer when a class has fewer samples (at least 2).

    max_scored (Optional[int]): Keep only the first folds whose samples number at least
        this many together; the samples of the others get fold -1, always trained on
        and never scored. None keeps every fold.
    """
    y = numpy.asarray(y, dtype=numpy.float64)
    folds = stratified_folds(y, max(2, min(cv, int(min((y > 0).sum(), (y < 0).sum())))))
    return _keep_scored(folds, max_scored)


def class_folds(targets: Sequence[numpy.ndarray], cv: int, max_scored: Optional[int] = None) -> numpy.ndarray:
    """The folds of `cv_folds` shared by the one-vs-rest heads of exclusive classes (`targets`: one {-1, +1}
    vector per class, one +1 per sample): stratified by class, as many as the rarest head allows (at least 2)."""
    Y = numpy.asarray(targets) > 0
    k = max(2, min(cv, *(int(min(row.sum(), (~row).sum())) for row in Y)))
    return _keep_scored(stratified_folds(Y.argmax(axis=0), k), max_scored)


def _keep_scored(folds: numpy.ndarray, max_scored: Optional[int]) -> numpy.ndarray:
    """`folds` with the samples of every fold after the first ones that hold `max_scored` samples set to -1."""
    if max_scored is not None:
        sizes = numpy.cumsum(numpy.bincount(folds))
        kept = min(int(numpy.searchsorted(sizes, max_scored)) + 1, len(sizes))
        folds[folds >= kept] = -1
    return folds


def fold_split(X: "sp.spmatrix", folds: numpy.ndarray, fold: int,
               threads: int = 1) -> Tuple["sp.spmatrix", "sp.spmatrix"]:
    """The rows of X outside fold `fold` (its training samples) and in it, in the format of X; a CSC X of
    float64 is split in one pass over its entries (`split_csc_rows`), in runs of columns on up to `threads`
    threads."""
    test = folds == fold
    if X.format != "csc" or X.dtype != numpy.float64:
        return _rows(X, numpy.flatnonzero(~test)), _rows(X, numpy.flatnonzero(test))
    from scipy.sparse import csc_matrix

    n_test = int(test.sum())
    rank = numpy.empty(len(test), dtype=X.indices.dtype)
    rank[~test] = numpy.arange(len(test) - n_test, dtype=rank.dtype)
    rank[test] = numpy.arange(n_test, dtype=rank.dtype)
    with ThreadTeam(threads) as team:
        parts = split_csc_rows(X.indptr.astype(numpy.int64, copy=False), X.indices, X.data, test.view(numpy.uint8),
                               rank, team.map, column_pieces(X.indptr, max(1, min(threads, X.shape[1]))))
    return tuple(csc_matrix((data, indices, indptr), shape=(rows, X.shape[1]))
                 for (indptr, indices, data), rows in zip(parts, (len(test) - n_test, n_test)))


def fold_margins(X: "sp.spmatrix", y: numpy.ndarray, folds: numpy.ndarray, fold: int, paths: Sequence[Path], *,
                 l1_ratio: float, loss: str, max_iter: int, tol: float, method: str = "trust-ncg",
                 threads: int = 1, split: Optional[Tuple["sp.spmatrix", "sp.spmatrix"]] = None) -> numpy.ndarray:
    """The margins of fold `fold`'s samples under the fits on the other folds, for every candidate of
    `all_candidates(paths)`: shape (candidates, samples in the fold). split: `fold_split(X, folds, fold)`, when
    it was made already."""
    y = numpy.asarray(y, dtype=numpy.float64)
    train, test = folds != fold, folds == fold
    Xtr, Xte = fold_split(X, folds, fold) if split is None else split
    out = numpy.zeros((len(all_candidates(paths)), int(test.sum())))
    k = 0
    logger.info("cross-validation fold %d of %d: %d candidate(s) on %d documents", fold + 1, int(folds.max()) + 1,
                len(out), int(train.sum()))
    for path in paths:
        A, B = Xtr, Xte
        if path.nb:
            scale = nb_ratio(Xtr, y[train])
            A, B = _scale_columns(Xtr, scale), _scale_columns(Xte, scale)
        init = None
        problem = LinearProblem(A, y[train], loss=loss, threads=threads)
        for C in path.Cs:
            logger.debug("fold %d: fitting C = %g%s", fold + 1, C, " (naive Bayes features)" if path.nb else "")
            w, c = problem.fit(C=C, l1_ratio=l1_ratio, max_iter=max_iter, tol=tol, init=init, method=method)
            init = numpy.append(w, c)
            for beta in path.betas:
                out[k] = B @ interpolate(w, beta) + c
                k += 1
    return out


def assemble_margins(blocks: Sequence[numpy.ndarray], folds: numpy.ndarray) -> numpy.ndarray:
    """The out-of-fold margins of every scored sample (fold >= 0, in order) from `fold_margins` of each fold in
    order."""
    scored = folds[folds >= 0]
    oof = numpy.zeros((blocks[0].shape[0], len(scored)))
    for fold, block in enumerate(blocks):
        oof[:, scored == fold] = block
    return oof


def select_candidate(oof: numpy.ndarray, y: numpy.ndarray, criterion: str) -> Tuple[int, List[float]]:
    """`choose_C`'s choice from the out-of-fold margins of every candidate (rows of `oof`): its index and the
    accuracy of every candidate."""
    keys, accuracy = candidate_costs(oof, y, criterion)
    return first_lowest(keys), accuracy


COST_TIE_REL = 1e-12


def first_lowest(costs: Sequence[Tuple[float, ...]]) -> int:
    """The index of the first of the lowest costs, compared entry by entry, where two values within
    COST_TIE_REL of the lower one (relative, absolute below 1) are equal: among the candidates whose first
    entries are within that of the lowest first entry, those whose second entries are within it of their lowest
    second entry, and so on; then the earliest (on a path, the smallest C). Costs are sums over the scored
    samples of out-of-fold fits, whose last bits differ between CPUs (numpy's and OpenBLAS's kernels); this
    tolerance, far above that rounding and below any other difference between two candidates (counts, and F1
    fractions of fewer than a million pairs, differ by more), keeps it from deciding."""
    left = range(len(costs))
    for entry in range(len(costs[0]) if len(costs) else 0):
        low = min(costs[k][entry] for k in left)
        left = [k for k in left if costs[k][entry] <= low + COST_TIE_REL * max(1.0, abs(low))]
    return left[0]


def candidate_costs(oof: numpy.ndarray, y: numpy.ndarray,
                    criterion: str) -> Tuple[List[Tuple[float, ...]], List[float]]:
    """What `select_candidate` minimizes for each candidate (rows of `oof`), a tuple that adds up over heads:
    (-correct, log-loss) for "accuracy", (calibrated log-loss,) for "calibrated_log_loss"; and the accuracy of
    every candidate."""
    y = numpy.asarray(y, dtype=numpy.float64)
    correct = ((oof > 0) == (y > 0)).sum(axis=1).astype(float)
    if criterion == "calibrated_log_loss":
        keys: List[Tuple[float, ...]] = [(_calibrated_log_loss(f, y),) for f in oof]
    else:
        logloss = numpy.logaddexp(0.0, -y * oof).sum(axis=1)
        keys = [(-float(correct[k]), float(logloss[k])) for k in range(len(oof))]
    return keys, (correct / len(y)).tolist()


def _calibrated_log_loss(f: numpy.ndarray, y: numpy.ndarray) -> float:
    a, b = platt(f, y)
    return float(numpy.logaddexp(0.0, -y * (a * f + b)).sum())


def platt(f: numpy.ndarray, y: numpy.ndarray, max_iter: int = 100) -> Tuple[float, float]:
    """Platt's sigmoid P(y = +1 | f) = sigmoid(a f + b) fitted to margins f by Newton's method, with the
    smoothed targets (n+ + 1) / (n+ + 2) and 1 / (n- + 2) of Lin, Lin & Weng (2007).

    f (numpy.ndarray): Margins (e.g. out-of-fold decision values).
    y (numpy.ndarray): Labels in {-1, +1}.
    RETURNS (Tuple[float, float]): a and b.
    """
    f = numpy.asarray(f, dtype=numpy.float64)
    pos = numpy.asarray(y) > 0
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    t = numpy.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def value(a: float, b: float) -> float:
        z = a * f + b
        return float((numpy.logaddexp(0.0, z) - t * z).sum())

    a, b = 1.0, 0.0
    current = value(a, b)
    for _ in range(max_iter):
        z = a * f + b
        p = 0.5 * (1.0 + numpy.tanh(0.5 * z))
        g = numpy.array([float(((p - t) * f).sum()), float((p - t).sum())])
        d = p * (1.0 - p)
        H = numpy.array([[float((d * f * f).sum()) + 1e-12, float((d * f).sum())],
                         [float((d * f).sum()), float(d.sum()) + 1e-12]])
        if abs(g[0]) < 1e-10 * len(f) and abs(g[1]) < 1e-10 * len(f):
            break
        step = numpy.linalg.solve(H, g)
        s = 1.0
        while s > 1e-10:
            cand = value(a - s * step[0], b - s * step[1])
            if cand <= current + 1e-4 * s * float(g @ -step):
                break
            s /= 2.0
        else:
            break
        a, b, current = a - s * float(step[0]), b - s * float(step[1]), cand
    return a, b


def nb_ratio(P: "sp.spmatrix", y: numpy.ndarray, alpha: float = NB_ALPHA) -> numpy.ndarray:
    """Naive Bayes log-count ratios r = log((p / |p|_1) / (q / |q|_1)) of binary features P."""
    pos = P.T @ (y > 0).astype(numpy.float64) + alpha
    neg = P.T @ (y < 0).astype(numpy.float64) + alpha
    return numpy.log(pos / pos.sum()) - numpy.log(neg / neg.sum())


class HeadFit(NamedTuple):
    """One head's fitted linear model (see `fit_head`)."""
    weights: numpy.ndarray
    intercept: float
    C: float
    cv_accuracy: Optional[List[float]]
    platt: Optional[Tuple[float, float]]
    nb_beta: float
    nb: bool


def fit_head(
    X: "sp.spmatrix",
    y: numpy.ndarray,
    *,
    C: Optional[float],
    Cs: Sequence[float],
    cv: int,
    nb: bool = False,
    l1_ratio: float = 0.0,
    loss: str = "logistic",
    max_iter: int = 1000,
    tol: float = 1e-3,
    nb_beta: Optional[float] = 1.0,
    nb_betas: Sequence[float] = (1.0,),
    calibrate: bool = False,
    criterion: str = "accuracy",
    paths: Optional[Sequence[Path]] = None,
    method: str = "trust-ncg",
    max_scored: Optional[int] = None,
) -> HeadFit:
    """One head's linear model, C cross-validated when None, on features optionally scaled by `nb_ratio`,
    its weights interpolated by `interpolate` with `nb_beta` (NBSVM) when `nb` is set.

    nb_beta (Optional[float]): The interpolation; None chooses it among `nb_betas` on
        the folds that choose C (with C given, folds run for this).
    calibrate (bool): Map the margin f to a f + b by `platt` fitted on the out-of-fold
        margins of `cv`-fold cross-validation (the folds that chose C, or, with C given,
        folds run for this), so that sigmoid(margin) is a calibrated probability; unless
        the out-of-fold margins do not rise with the labels (a <= 0, as on a handful of
        documents), when the margin is kept as fitted.
    criterion (str): How the folds choose, see `choose_C`.
    paths (Optional[Sequence[Path]]): Candidates to choose among instead of those of
        `nb`, `C`, `Cs`, `nb_beta` and `nb_betas` (e.g. both feature maps).
    method (str): The L2 solver, see `fit_linear`.
    max_scored (Optional[int]): Fit only the first folds that hold out this many
        samples together (see `cv_folds`).
    RETURNS (HeadFit): The weights of the unscaled features, the intercept, the C used,
        the cross-validated accuracy of every C of the chosen path at the chosen
        interpolation (None when nothing was chosen), Platt's (a, b) (None without
        calibration), the interpolation used and whether the features were scaled.
    """
    if paths is None:
        paths = [make_path(nb, Cs if C is None else [C], nb_beta if nb else 1.0, nb_betas)]
    solver = dict(l1_ratio=l1_ratio, loss=loss, max_iter=max_iter, tol=tol, method=method)
    with one_blas_thread():
        oof, scored, scores = None, None, None
        chosen = all_candidates(paths)[0]
        if needs_choice(paths, calibrate):
            chosen, accuracy, oof, scored = choose_C(X, y, paths, cv=cv, criterion=criterion, max_scored=max_scored,
                                                     **solver)
            scores = path_scores(paths, chosen, accuracy)
        logger.info("final fit on %d documents, C = %g", X.shape[0], chosen.C)
        w, c, scale = final_fit(X, y, chosen.C, nb=chosen.nb, **solver)
    return finish_head(w, c, scale, chosen, scores, oof, scored, calibrate)


def needs_choice(paths: Sequence[Path], calibrate: bool) -> bool:
    """Whether `fit_head` cross-validates: to choose among several candidates, or to calibrate."""
    return calibrate or len(all_candidates(paths)) > 1


def path_scores(paths: Sequence[Path], chosen: Candidate, accuracy: Sequence[float]) -> Optional[List[float]]:
    """The accuracy of every C of the chosen candidate's path at its interpolation, None when the paths hold
    only one candidate."""
    cands = all_candidates(paths)
    if len(cands) == 1:
        return None
    return [a for cand, a in zip(cands, accuracy)
            if (cand.nb, cand.beta, cand.tfidf) == (chosen.nb, chosen.beta, chosen.tfidf)]


def final_fit(X: "sp.spmatrix", y: numpy.ndarray, C: float, *, nb: bool, l1_ratio: float, loss: str, max_iter: int,
              tol: float, method: str = "trust-ncg", threads: int = 1) -> Tuple[numpy.ndarray, float, numpy.ndarray]:
    """`fit_head`'s fit on all samples: the weights of the (naive Bayes scaled) features, the intercept and the
    column scale."""
    scale = nb_ratio(X, y) if nb else numpy.ones(X.shape[1])
    Xs = _scale_columns(X, scale) if nb else X
    w, c = fit_linear(Xs, y, C=C, l1_ratio=l1_ratio, loss=loss, max_iter=max_iter, tol=tol, method=method,
                      threads=threads)
    return w, c, scale


def finish_head(w: numpy.ndarray, c: float, scale: numpy.ndarray, chosen: Candidate, scores: Optional[List[float]],
                oof: Optional[numpy.ndarray], y: Optional[numpy.ndarray], calibrate: bool) -> HeadFit:
    """The head of `fit_head` from its final fit and its folds (`oof`: the chosen candidate's out-of-fold margins
    of the scored samples, labelled `y`): interpolated, unscaled and calibrated."""
    w = interpolate(w, chosen.beta) * scale
    ab = platt(oof, y) if calibrate else None
    if ab is not None and ab[0] > 0:
        w, c = w * ab[0], c * ab[0] + ab[1]
    else:
        ab = None
    return HeadFit(w, c, chosen.C, scores, ab, chosen.beta, chosen.nb)


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit BLAS to one thread while the solvers run.

    Their dense work is vector products (dot, norm) over one entry per feature; a
    multi-threaded OpenBLAS splits each product and its idle threads spin between
    calls, which costs CPU time without a wall-clock gain. One thread also makes every sum's order, and so the weights,
    independent of the machine's core count.
    """
    from scipy.optimize import minimize  # noqa: F401  (loads scipy's BLAS before the limit is set)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


def interpolate(w: numpy.ndarray, beta: float) -> numpy.ndarray:
    """NBSVM's interpolation (Wang & Manning 2012) w' = (1 - beta) mean|w| + beta w; w itself when beta = 1."""
    if beta == 1.0 or not len(w):
        return w
    return (1.0 - beta) * numpy.abs(w).mean() + beta * w


def _scale_columns(X: "sp.spmatrix", scale: numpy.ndarray) -> "sp.spmatrix":
    """X with column j times scale[j], its structure kept (a zero factor leaves an explicit zero); CSC stays CSC,
    anything else becomes CSR."""
    from scipy.sparse import csc_matrix, csr_matrix

    if X.format == "csc":
        return csc_matrix((X.data * numpy.repeat(scale, numpy.diff(X.indptr)), X.indices, X.indptr), shape=X.shape)
    X = X.tocsr()
    return csr_matrix((X.data * scale[X.indices], X.indices, X.indptr), shape=X.shape)


def _rows(X: "sp.spmatrix", rows: numpy.ndarray) -> "sp.spmatrix":
    """The rows `rows` (increasing) of X, in the format of X; a CSC matrix is filtered entry by entry, without
    a conversion."""
    from scipy.sparse import csc_matrix

    if X.format != "csc":
        return X[rows]
    rank = numpy.full(X.shape[0], -1, dtype=X.indices.dtype)
    rank[rows] = numpy.arange(len(rows), dtype=X.indices.dtype)
    new = rank[X.indices]
    kept = new >= 0
    ends = numpy.zeros(len(kept) + 1, dtype=numpy.int64)
    numpy.cumsum(kept, out=ends[1:])
    return csc_matrix((X.data[kept], new[kept], ends[X.indptr]), shape=(len(rows), X.shape[1]))
