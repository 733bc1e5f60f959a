"""The linear learners' deterministic solvers (docs/algorithms.md §7.1): LIBLINEAR's trust-region Newton method
(`tron`) for L2 problems and FISTA for elastic-net ones, on a problem with value_grad, preconditioner and hessp."""
import math
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, Tuple

import numpy

from ._vectors import cg_direction_range, cg_residual_range, cg_step_range, dot_range
from .products import Pieces
from ..threads import ThreadTeam

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


def curvature(m: numpy.ndarray, loss: str) -> numpy.ndarray:
    """d^2 loss / d m^2 at margins m (the generalized second derivative for the squared hinge)."""
    if loss == "logistic":
        with numpy.errstate(over="ignore"):
            p = 1.0 / (1.0 + numpy.exp(-m))
        return p * (1.0 - p)
    return 2.0 * (m < 1.0)


def tron(problem: Any, x0: numpy.ndarray, max_iter: int, gtol: float) -> numpy.ndarray:
    """LIBLINEAR's trust-region Newton method (Lin, Weng & Keerthi 2008) with the diagonal preconditioner of Hsia,
    Chiang & Lin (2018); stops when the gradient's norm is at most `gtol`."""
    x = x0  # never changed in place: each step makes a new point
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
        del residual
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
    """Preconditioned conjugate gradients for H s = -g within ||s||_M <= delta (Steihaug) over `Pieces`: the step
    and the residual -(g + H s)."""
    pieces = Pieces(len(g), team)
    s = numpy.zeros_like(g)
    r = -g
    d = r / M  # the preconditioned residual z = r / M is not stored: each kernel divides again, the same bits
    zr = pieces.total(dot_range, d, r)
    tol = 0.1 * math.sqrt(zr)
    for _ in range(len(g)):
        if math.sqrt(max(zr, 0.0)) <= tol:
            break
        Hd = None  # the last product freed before the next is made: one vector fewer at the peak
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
        zr_new = pieces.total(cg_residual_range, r, Hd, M, alpha)
        pieces.each(cg_direction_range, d, r, M, zr_new / zr)
        zr = zr_new
    return s, r


def start_point(y: numpy.ndarray, d: int, loss: str) -> numpy.ndarray:
    """Zero weights and the intercept of the class prior."""
    x0 = numpy.zeros(d + 1)
    p = min(max((y > 0).mean(), 1e-3), 1 - 1e-3) if len(y) else 0.5
    x0[-1] = math.log(p / (1 - p)) if loss == "logistic" else 2 * p - 1
    return x0


def gradient_scale(g_zero: numpy.ndarray, l1_ratio: float) -> float:
    """The norm of the gradient at zero weights (with an L1 share: its largest entry), which the tolerance scales."""
    return float(numpy.abs(g_zero).max() if l1_ratio > 0.0 else numpy.linalg.norm(g_zero))


def fista(x0: numpy.ndarray, smooth: Callable[[numpy.ndarray], Tuple[float, numpy.ndarray]], l1: float,
          max_iter: int, gtol: float) -> numpy.ndarray:
    """FISTA with backtracking for `smooth` (value and gradient) plus l1 times the weights' L1 norm."""
    x, v, t, L = x0.copy(), x0.copy(), 1.0, 1.0
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
    """Limit BLAS to one thread while the solvers run: their vector products gain nothing from more, and one
    thread makes every sum's order, and so the weights, independent of the core count."""
    from scipy.optimize import minimize  # noqa: F401  (loads scipy's BLAS before the limit is set)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
