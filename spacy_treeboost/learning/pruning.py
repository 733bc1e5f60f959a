"""`max_rules="auto"`, the linear learner's default: each head restricted to the subtrees that make up the share of
its total contribution chosen on the cross-validation folds, so that a model ships at a fraction of its training
data's size."""
import logging
from dataclasses import replace
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from ._order import order_by_magnitude
from .features import interpolate, nb_ratio, scale_columns
from .heads import SOLVER
from .selection import HeadFit, assemble_margins, fold_split, platt
from .solver import fit_linear, one_blas_thread

logger = logging.getLogger(__name__)

# max_rules="auto": the shares of the total contribution (the sum of |w_t| x_t over the training documents) that the
# folds try, from the whole model down until the held-out accuracy falls more than PRUNE_TOLERANCE below the whole
# model's; the folds' fits stop at PRUNE_FIT_TOL_RATIO times the solver's tolerance (a ranking needs less)
PRUNE_SHARES = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.96, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999, 1.0)
PRUNE_TOLERANCE = 0.002
PRUNE_FIT_TOL_RATIO = 10.0
# ... and only where the folds score this many documents: on fewer, one document outweighs the tolerance
PRUNE_MIN_SCORED = 1000


def column_sums(X: Any) -> numpy.ndarray:
    """The sum of each column of a sparse matrix of nonnegative entries (CSC or CSR), without a copy of its entries."""
    if X.format != "csc":
        return numpy.bincount(X.indices, weights=X.data, minlength=X.shape[1])
    out = numpy.zeros(X.shape[1])
    full = numpy.diff(X.indptr) > 0
    if X.nnz:
        out[full] = numpy.add.reduceat(X.data, X.indptr[:-1][full])
    return out


def share_levels(contribution: numpy.ndarray, shares: Sequence[float]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """For each column, the first of the increasing `shares` whose kept columns hold it, and how many each keeps.

    At share s < 1 the kept columns are the fewest of largest `contribution` (ties: the first column) whose
    contributions add up to at least s times their total; at share 1 every column is kept.

    contribution (numpy.ndarray): Each column's nonnegative contribution.
    shares (Sequence[float]): Increasing shares in (0, 1], the last 1.
    RETURNS (Tuple[numpy.ndarray, numpy.ndarray]): The level of every column (an index into `shares`) and the
        number of columns kept at each share.
    """
    n = len(contribution)
    order = order_by_magnitude(numpy.ascontiguousarray(contribution, dtype=numpy.float64))
    if order is None:
        raise ValueError("a subtree's contribution is not finite: the fit diverged")
    total = numpy.cumsum(contribution[order])
    kept = numpy.array([n if s >= 1.0 or not n else min(int(numpy.searchsorted(total, s * total[-1])) + 1, n)
                        for s in shares], dtype=numpy.int64)
    level = numpy.empty(n, dtype=numpy.int64)
    level[order] = numpy.searchsorted(kept, numpy.arange(n), side="right")
    return level, kept


def level_margins(X: Any, w: numpy.ndarray, c: float, level: numpy.ndarray, n_levels: int,
                  tfidf: bool = False) -> numpy.ndarray:
    """The margins c + X w of the rows of X restricted to the columns of level <= L, for every level L.

    With `tfidf` the rows of X are L2-normalized tf-idf, and each restricted row is normalized again over its
    kept columns (as a tf-idf rule list normalizes a document over its own rules; a row with none scores c).

    X (scipy.sparse matrix): The rows, nonnegative (CSC or CSR).
    w (numpy.ndarray): The weight of each column.
    c (float): The intercept.
    level (numpy.ndarray): Each column's level (`share_levels`).
    n_levels (int): The number of levels.
    tfidf (bool): Normalize each restricted row.
    RETURNS (numpy.ndarray): Shape (n_levels, rows).
    """
    X = X.tocsc()
    n = X.shape[0]
    bucket = numpy.repeat(level, numpy.diff(X.indptr)) * n + X.indices
    score = numpy.bincount(bucket, weights=X.data * w.repeat(numpy.diff(X.indptr)), minlength=n_levels * n)
    score = numpy.cumsum(score.reshape(n_levels, n), axis=0)
    if tfidf:
        norm = numpy.sqrt(numpy.cumsum(numpy.bincount(bucket, weights=X.data ** 2, minlength=n_levels * n)
                                       .reshape(n_levels, n), axis=0))
        score = numpy.divide(score, norm, out=numpy.zeros_like(score), where=norm > 0)
    return score + c


def prune(X: Any, targets: Sequence[numpy.ndarray], folds: Sequence[numpy.ndarray], fits: List[HeadFit], tfidf: bool,
          calibrate: bool, settings: Dict[str, Any]) -> Tuple[List[HeadFit], List[Optional[numpy.ndarray]],
                                                             List[Dict[str, Any]]]:
    """Each head restricted to the subtrees that make up the share of its total contribution chosen on the folds,
    with its calibration refitted on the restricted folds' margins.

    On each scored fold the head's candidate is fitted again on the other folds (started from the final weights),
    its columns ranked by contribution (|w_t| times the sum of column t over those documents), and the held-out
    margins computed at every share of `PRUNE_SHARES` (`level_margins`). Going down from the whole model, the last
    share before the held-out accuracy (of the calibrated margins) falls more than `PRUNE_TOLERANCE` below the
    whole model's is kept for the final weights, ranked the same way over all training documents. A head whose
    folds score fewer than `PRUNE_MIN_SCORED` documents keeps every subtree.

    X (scipy.sparse matrix): The matrix the heads were fitted on (columns in the fits' order).
    targets (Sequence[numpy.ndarray]): Each head's {-1, +1} labels.
    folds (Sequence[numpy.ndarray]): Each head's fold of every document (-1: never scored).
    fits (List[HeadFit]): The heads' fits.
    tfidf (bool): Whether the rules are tf-idf rules (each document normalized over the kept subtrees).
    calibrate (bool): Whether the heads are Platt-scaled.
    settings (Dict[str, Any]): The solver's l1_ratio, loss, max_iter, tol and threads.
    RETURNS (Tuple[List[HeadFit], List[Optional[numpy.ndarray]], List[Dict[str, Any]]]): The restricted fits,
        each one's kept columns (None: all), and what each pruning chose.
    """
    sums = column_sums(X)
    out: List[HeadFit] = []
    kept: List[Optional[numpy.ndarray]] = []
    info: List[Dict[str, Any]] = []
    for y, f, fit in zip(targets, folds, fits):
        if numpy.count_nonzero(f >= 0) < PRUNE_MIN_SCORED:
            out.append(fit)
            kept.append(None)
            info.append({"share": 1.0, "rules": int(numpy.count_nonzero(fit.weights)), "cv_accuracy": None})
            continue
        oof = _fold_level_margins(X, y, f, fit, tfidf, settings)
        scored = y[f >= 0]
        accuracy = [float(numpy.mean((_decided(m, scored, calibrate) > 0) == (scored > 0))) for m in oof]
        chosen = len(accuracy) - 1
        while chosen > 0 and accuracy[chosen - 1] >= accuracy[-1] - PRUNE_TOLERANCE:
            chosen -= 1
        level, counts = share_levels(numpy.abs(fit.weights) * sums, PRUNE_SHARES)
        keep = level <= chosen
        logger.info("pruning on the folds: shares %s keep %s subtrees, held-out accuracy %s: share %g",
                    list(PRUNE_SHARES), counts.tolist(), [round(v, 4) for v in accuracy], PRUNE_SHARES[chosen])
        info.append({"share": PRUNE_SHARES[chosen], "rules": int(numpy.count_nonzero(keep & (fit.weights != 0))),
                     "cv_accuracy": accuracy[chosen]})
        if PRUNE_SHARES[chosen] >= 1.0:
            out.append(fit)
            kept.append(None)
            continue
        out.append(_restricted(fit, keep, oof[chosen], scored, calibrate))
        kept.append(keep)
    return out, kept, info


def _fold_level_margins(X: Any, y: numpy.ndarray, f: numpy.ndarray, fit: HeadFit, tfidf: bool,
                        settings: Dict[str, Any]) -> numpy.ndarray:
    """The out-of-fold margins of the scored documents at every share (shape (len(PRUNE_SHARES), scored)): the
    head's candidate refitted on each fold's training documents from the final weights, at PRUNE_FIT_TOL_RATIO
    times the solver's tolerance."""
    a, b = fit.platt if fit.platt is not None else (1.0, 0.0)
    threads = settings["threads"]
    blocks = []
    for k in range(int(f.max()) + 1):
        Xtr, Xte = fold_split(X, f, k, threads)
        ytr = y[f != k]
        scale = nb_ratio(Xtr, ytr) if fit.nb else numpy.ones(X.shape[1])
        start = numpy.divide(fit.weights / a, scale, out=numpy.zeros(X.shape[1]), where=scale != 0)
        with one_blas_thread():
            w, c = fit_linear(scale_columns(Xtr, scale) if fit.nb else Xtr, ytr, C=fit.C,
                              l1_ratio=settings["l1_ratio"], loss=settings["loss"], max_iter=settings["max_iter"],
                              tol=PRUNE_FIT_TOL_RATIO * settings["tol"], init=numpy.append(start, (fit.intercept - b) / a),
                              method=SOLVER, threads=threads)
        if fit.nb:
            w = interpolate(w, fit.nb_beta) * scale
        level, _ = share_levels(numpy.abs(w) * column_sums(Xtr), PRUNE_SHARES)
        del Xtr
        blocks.append(level_margins(Xte, w, c, level, len(PRUNE_SHARES), tfidf))
    return assemble_margins(blocks, f)


def _restricted(fit: HeadFit, keep: numpy.ndarray, oof: numpy.ndarray, scored: numpy.ndarray,
                calibrate: bool) -> HeadFit:
    """The fit's weights cut to the columns `keep`, its calibration refitted on the restricted out-of-fold margins."""
    a, b = fit.platt if fit.platt is not None else (1.0, 0.0)
    w, c = numpy.where(keep, fit.weights / a, 0.0), (fit.intercept - b) / a
    ab = platt(oof, scored) if calibrate else None
    if ab is not None and ab[0] > 0:
        w, c = w * ab[0], c * ab[0] + ab[1]
    else:
        ab = None
    return replace(fit, weights=w, intercept=c, platt=ab)


def _decided(f: numpy.ndarray, y: numpy.ndarray, calibrate: bool) -> numpy.ndarray:
    """Margins f as a head decides by them: Platt-scaled on (f, y) when calibrating and the fit rises with y."""
    if not calibrate:
        return f
    a, b = platt(f, y)
    return a * f + b if a > 0 else f
