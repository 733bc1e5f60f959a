"""The solvers of the linear learners: regularized linear models on sparse features.

For labels y in {-1, +1} and margins f = Xw + c (the intercept c is not penalized) the
objective is

    sum_i loss(y_i f_i) + (1 / C) * ((1 - l1_ratio) / 2 * ||w||^2 + l1_ratio * ||w||_1)

with loss "logistic" (log(1 + exp(-m))) or "squared_hinge" (max(0, 1 - m)^2). For
l1_ratio = 0 this is scikit-learn's `LogisticRegression(C=C)` / `LinearSVC(C=C,
loss="squared_hinge")` with an unpenalized intercept. L2 problems are solved by LIBLINEAR's
trust-region Newton method (`tron`, conjugate gradients on Hessian-vector products, the
generalized Hessian for the squared hinge) or scipy's trust-ncg on the same `Newton` problem,
elastic-net problems by FISTA with backtracking; all are deterministic. `tol` is relative: a
solve stops when the gradient (FISTA: the gradient mapping) is `tol` times that at the start
from zero weights, whatever the scale of the features. `tron` and `fista` take any problem with
`Newton`'s methods, so the fits on document shards (`sharded`) use them too.
"""
import math
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional, Tuple, Union

import numpy

from ._vectors import cg_direction_range, cg_residual_range, cg_step_range, dot_range
from .features import SingletonReduction
from .products import ColumnBlocks, Pieces, newton_blocks
from ..threads import Threads, ThreadTeam

if TYPE_CHECKING:
    import scipy.sparse as sp

LOSSES = ("logistic", "squared_hinge")


def loss_terms(m: numpy.ndarray, loss: str) -> Tuple[float, numpy.ndarray]:
    """Sum of losses at margins m = y f, and d loss / d m."""
    if loss == "logistic":
        value = float(numpy.logaddexp(0.0, -m).sum())
        with numpy.errstate(over="ignore"):
            d = -1.0 / (1.0 + numpy.exp(m))
        return value, d
    h = numpy.maximum(0.0, 1.0 - m)
    return float(h @ h), -2.0 * h


def smooth(x: numpy.ndarray, X: "sp.spmatrix", y: numpy.ndarray, loss: str, l2: float) -> Tuple[float, numpy.ndarray]:
    w, c = x[:-1], x[-1]
    f = X @ w + c
    value, d = loss_terms(y * f, loss)
    g_f = y * d
    grad = numpy.empty_like(x)
    if isinstance(X, ColumnBlocks):
        X.rmatvec(g_f, plus=(w, l2), out=grad[:-1])
    else:
        grad[:-1] = X.T @ g_f + l2 * w
    grad[-1] = g_f.sum()
    return value + 0.5 * l2 * float(w @ w), grad


def hessian_product(X: "sp.spmatrix", curvature: numpy.ndarray, l2: float, v: numpy.ndarray) -> numpy.ndarray:
    """H v for the Hessian (weights, then the unpenalized intercept) at the point of the loss's `curvature`."""
    u = X @ v[:-1]
    u += v[-1]
    u *= curvature
    out = numpy.empty_like(v)
    if isinstance(X, ColumnBlocks):
        X.rmatvec(u, plus=(v[:-1], l2), out=out[:-1])
    else:
        numpy.multiply(v[:-1], l2, out=out[:-1])
        out[:-1] += X.T @ u
    out[-1] = u.sum()
    return out




def curvature(m: numpy.ndarray, loss: str) -> numpy.ndarray:
    """d^2 loss / d m^2 at margins m (the generalized second derivative for the squared hinge)."""
    if loss == "logistic":
        with numpy.errstate(over="ignore"):
            p = 1.0 / (1.0 + numpy.exp(-m))
        return p * (1.0 - p)
    return 2.0 * (m < 1.0)


class Newton:
    """The L2 problem as the trust-region Newton methods ask for it: value and gradient at a point, the
    preconditioner at a point (the Hessian's diagonal mixed with the identity, weight 0.01; that point's curvature is
    kept for `hessp`), and Hessian-vector products there (`hessp_at` for scipy's methods, which name the point). X
    and its entries squared come as `blocks` made by `products.newton_blocks` (a large CSC X multiplied by
    `ColumnBlocks` on several threads; the squares None where no preconditioner is asked for), so that the fits at
    several C share them."""

    def __init__(self, blocks: Tuple[Any, Any], y: numpy.ndarray, loss: str, l2: float) -> None:
        self.X, self.squared = blocks
        self.y, self.loss, self.l2 = y, loss, l2
        self.curvature = numpy.zeros(0)
        self._at: Optional[numpy.ndarray] = None
        self.team = self.X.team if isinstance(self.X, ColumnBlocks) else None

    def value_grad(self, x: numpy.ndarray) -> Tuple[float, numpy.ndarray]:
        return smooth(x, self.X, self.y, self.loss, self.l2)

    def preconditioner(self, x: numpy.ndarray) -> numpy.ndarray:
        self.curvature = curvature(self.y * (self.X @ x[:-1] + x[-1]), self.loss)
        self._at = None
        M = numpy.empty_like(x)
        M[:-1] = self.l2 + 0.01 * (self.squared.T @ self.curvature)
        M[-1] = self.l2 + 0.01 * float(self.curvature.sum())
        return M

    def hessp(self, v: numpy.ndarray) -> numpy.ndarray:
        return hessian_product(self.X, self.curvature, self.l2, v)

    def hessp_at(self, x: numpy.ndarray, v: numpy.ndarray) -> numpy.ndarray:
        if self._at is None or not numpy.array_equal(x, self._at):
            self.curvature = curvature(self.y * (self.X @ x[:-1] + x[-1]), self.loss)
            self._at = x.copy()
        return self.hessp(v)


def tron(problem: Any, x0: numpy.ndarray, max_iter: int, gtol: float) -> numpy.ndarray:
    """The trust-region Newton method of LIBLINEAR (Lin, Weng & Keerthi 2008) with its diagonal preconditioner
    for the conjugate gradients (Hsia, Chiang & Lin 2018), and the trust region in the preconditioner's norm, on a
    `Newton` problem (or one with its methods). Stops when the gradient's norm is at most `gtol`."""
    x = x0.copy()
    f, g = problem.value_grad(x)
    delta = -1.0
    for it in range(max_iter):
        if float(numpy.linalg.norm(g)) <= gtol:
            break
        M = problem.preconditioner(x)
        if delta < 0:
            delta = math.sqrt(float(g @ (g / M)))
        step, residual = pcg(problem.hessp, g, M, delta, getattr(problem, "team", None))
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


def pcg(hessp: Callable[[numpy.ndarray], numpy.ndarray], g: numpy.ndarray, M: numpy.ndarray,
         delta: float, team: Optional[ThreadTeam] = None) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Preconditioned conjugate gradients for H s = -g within ||s||_M <= delta (Steihaug): the step and the
    residual -(g + H s). Each iteration's vector updates and dot products are compiled kernels over the fixed
    pieces of `Pieces` (on the team's threads), each entry computed as the textbook form computes it, the dot
    products summed piece by piece, so the step is the same, bit for bit, for any number of threads."""
    pieces = Pieces(len(g), team)
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


def start_point(y: numpy.ndarray, d: int, loss: str) -> numpy.ndarray:
    """Zero weights and the intercept of the class prior."""
    x0 = numpy.zeros(d + 1)
    p = min(max((y > 0).mean(), 1e-3), 1 - 1e-3) if len(y) else 0.5
    x0[-1] = math.log(p / (1 - p)) if loss == "logistic" else 2 * p - 1
    return x0


def gradient_tolerance(g_zero: numpy.ndarray, tol: float, l1_ratio: float) -> float:
    """Where a fit stops: `tol` times the norm of the gradient `g_zero` at the start from zero weights (with an L1
    share, FISTA's: its largest entry)."""
    scale = numpy.abs(g_zero).max() if l1_ratio > 0.0 else numpy.linalg.norm(g_zero)
    return max(tol * float(scale), 1e-300)



def fit_linear(X: "sp.spmatrix", y: numpy.ndarray, *, C: float, l1_ratio: float = 0.0, loss: str = "logistic",
               max_iter: int = 1000, tol: float = 1e-3, init: Optional[numpy.ndarray] = None, method: str = "trust-ncg",
               threads: Union[int, Threads] = 1) -> Tuple[numpy.ndarray, float]:
    """Minimize the objective of the module docstring: the weights and the intercept.

    X (scipy.sparse matrix or numpy.ndarray): Features, shape (n_samples, n_features).
    y (numpy.ndarray): Labels in {-1, +1}.
    C (float): Inverse regularization strength.
    l1_ratio (float): Share of L1 in the penalty (0 = L2).
    loss (str): "logistic" or "squared_hinge".
    init (Optional[numpy.ndarray]): A start (weights then intercept), e.g. the solution at a nearby C.
    method (str): For L2 problems, "trust-ncg" (scipy's trust-region Newton-CG from a unit radius) or "tron"
        (`tron`: far fewer Hessian products on large sparse problems).
    threads (Union[int, Threads]): Threads for the products of a large problem with method "tron" (the result is
        the same for any number); a `Threads` may rise during the fit.
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
        self._reduced: Optional[SingletonReduction] = None
        self._blocks: Tuple[Any, Any] = (None, None)

    def fit(self, *, C: float, l1_ratio: float = 0.0, max_iter: int = 1000, tol: float = 1e-3,
            init: Optional[numpy.ndarray] = None, method: str = "trust-ncg") -> Tuple[numpy.ndarray, float]:
        """The weights and the intercept at C (the other settings as for `fit_linear`)."""
        X, y, loss = self.X, self.y, self.loss
        l2 = (1.0 - l1_ratio) / C
        problem = Newton((X, None), y, loss, l2)
        zero = start_point(y, X.shape[1], loss)
        x0 = zero if init is None else numpy.array(init, dtype=numpy.float64)
        if self._g_zero is None:
            # the penalty's gradient at zero weights is zero: the gradient there is the same for every C
            self._g_zero = problem.value_grad(zero)[1]
        gtol = gradient_tolerance(self._g_zero, tol, l1_ratio)
        if l1_ratio == 0.0 and method == "tron":
            if self._reduced is None:
                self._reduced = SingletonReduction(X)
                self._blocks = newton_blocks(self._reduced.X, self.threads)
            newton = Newton(self._blocks, y, loss, l2)
            try:
                x = self._reduced.expand(tron(newton, self._reduced.reduce(x0), max_iter, gtol))
            finally:
                if newton.team is not None:
                    newton.team.close()
        elif l1_ratio == 0.0:
            from scipy.optimize import minimize

            x = minimize(problem.value_grad, x0, jac=True, hessp=problem.hessp_at, method="trust-ncg",
                         options={"maxiter": max_iter, "gtol": gtol}).x
        else:
            x = fista(x0, problem.value_grad, l1_ratio / C, max_iter, gtol)
        return x[:-1].copy(), float(x[-1])


def fista(x0: numpy.ndarray, smooth: Callable[[numpy.ndarray], Tuple[float, numpy.ndarray]], l1: float,
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
            z[:-1] = numpy.sign(z[:-1]) * numpy.maximum(numpy.abs(z[:-1]) - l1 / L, 0.0)
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
