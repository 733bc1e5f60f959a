"""Model selection for the linear learners: stratified folds, the candidate paths of C (and of the NBSVM
interpolation and the feature family), the choice among them, and Platt's calibration of a margin."""
import logging
import math
from dataclasses import dataclass
from typing import Any, Dict, List, NamedTuple, Optional, Sequence, Tuple

import numpy

from ..params import Interval, Items, Options, Rule, rule
from .features import interpolate
from .solver import LOSSES

logger = logging.getLogger(__name__)


DEFAULT_CS = (0.01, 0.03, 0.1, 0.25, 1.0, 3.0, 10.0)  # 0.25, not 0.3: srsly's JSON writes 0.3 as 0.30000000000000004
MAX_C = 1e6
MIN_C = 1e-6


SOLVER_CONSTRAINTS: Dict[str, Rule] = {
    "C": rule(Interval("real", MIN_C, MAX_C), None, hint=(
        f"use a regularization strength from {MIN_C:g} to {MAX_C:g} (larger means weaker regularization), or None "
        "to choose it by cross-validation")),
    "Cs": rule(Items(Interval("real", MIN_C, MAX_C)), hint=f"list one or more values of C from {MIN_C:g} to {MAX_C:g}"),
    "l1_ratio": rule(Interval("real", 0.0, 1.0), hint="use a number from 0 (L2) to 1 (L1)"),
    "loss": rule(Options(*LOSSES)),
    "cv": rule(Interval("int", 2, 20), hint="use a whole number of folds from 2 to 20"),
    "max_iter": rule(Interval("int", 1, 1_000_000)),
    "tol": rule(Interval("real", 0, 1, "neither"), hint="use a small positive number such as 1e-3"),
}


def stratified_folds(y: numpy.ndarray, k: int) -> numpy.ndarray:
    """A fold id for every sample, classes spread evenly over the folds, deterministic."""
    y = numpy.asarray(y)
    folds = numpy.empty(len(y), dtype=numpy.int64)
    for value in numpy.unique(y):
        idx = numpy.flatnonzero(y == value)
        folds[idx] = numpy.arange(len(idx)) % k
    return folds


class Candidate(NamedTuple):
    """One model the folds score: naive Bayes scaling or not, C, the interpolation, tf-idf or presence matrix."""
    nb: bool
    C: float
    beta: float
    tfidf: bool = False


class Path(NamedTuple):
    """Candidates of one regularization path: one feature map, the values of C (fitted in increasing order, each
    warm-started from the last) and the interpolations scored on every fit."""
    nb: bool
    Cs: Tuple[float, ...]
    betas: Tuple[float, ...]
    tfidf: bool = False


def make_path(nb: bool, Cs: Sequence[float], nb_beta: Optional[float], nb_betas: Sequence[float]) -> Path:
    """A path over `Cs` and the interpolations: `nb_betas` (decreasing) when `nb_beta` is None, else `nb_beta`."""
    if not nb:
        betas: List[float] = [1.0]
    elif nb_beta is None:
        betas = sorted((float(v) for v in nb_betas), reverse=True)
    else:
        betas = [float(nb_beta)]
    return Path(bool(nb), tuple(sorted(float(c) for c in Cs)), tuple(betas))


def all_candidates(paths: Sequence[Path]) -> List[Candidate]:
    """The candidates of every path, in order: the order in which ties are broken."""
    return [Candidate(path.nb, C, beta, path.tfidf) for path in paths for C in path.Cs for beta in path.betas]


COST_TIE_REL = 1e-12


def first_lowest(costs: Sequence[Tuple[float, ...]]) -> int:
    """The index of the first of the lowest costs, compared entry by entry with a relative tolerance COST_TIE_REL
    (far above the rounding that differs between CPUs); ties: the earliest."""
    left: Sequence[int] = range(len(costs))
    for entry in range(len(costs[0]) if len(costs) else 0):
        low = min(costs[k][entry] for k in left)
        left = [k for k in left if costs[k][entry] <= low + COST_TIE_REL * max(1.0, abs(low))]
    return left[0]


def cv_folds(y: numpy.ndarray, cv: int, max_scored: Optional[int] = None) -> numpy.ndarray:
    """`cv` stratified folds, fewer when a class has fewer samples (at least 2); the folds after the first ones that
    hold `max_scored` samples get -1 (trained on, never scored)."""
    y = numpy.asarray(y, dtype=numpy.float64)
    folds = stratified_folds(y, max(2, min(cv, int(min((y > 0).sum(), (y < 0).sum())))))
    return _keep_scored(folds, max_scored)


def class_folds(targets: Sequence[numpy.ndarray], cv: int, max_scored: Optional[int] = None) -> numpy.ndarray:
    """The folds of `cv_folds` shared by the one-vs-rest heads of exclusive classes, stratified by class."""
    Y = numpy.asarray(targets) > 0
    k = max(2, min(cv, *(int(min(row.sum(), (~row).sum())) for row in Y)))
    return _keep_scored(stratified_folds(Y.argmax(axis=0), k), max_scored)


def _keep_scored(folds: numpy.ndarray, max_scored: Optional[int]) -> numpy.ndarray:
    """`folds` with -1 for the folds after the first ones that hold `max_scored` samples."""
    if max_scored is not None:
        sizes = numpy.cumsum(numpy.bincount(folds))
        kept = min(int(numpy.searchsorted(sizes, max_scored)) + 1, len(sizes))
        folds[folds >= kept] = -1
    return folds


def assemble_margins(blocks: Sequence[numpy.ndarray], folds: numpy.ndarray) -> numpy.ndarray:
    """The out-of-fold margins of the scored samples (fold >= 0) from each fold's block, in order."""
    scored = folds[folds >= 0]
    oof = numpy.zeros((blocks[0].shape[0], len(scored)))
    for fold, block in enumerate(blocks):
        oof[:, scored == fold] = block
    return oof


def candidate_costs(oof: numpy.ndarray, y: numpy.ndarray,
                    criterion: str) -> Tuple[List[Tuple[float, ...]], List[float]]:
    """Per candidate (row of `oof`), the cost to minimize ((-correct, log-loss) for "accuracy", (calibrated
    log-loss,) otherwise), and the accuracy."""
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
    """Platt's (a, b) of P(y = +1 | f) = sigmoid(a f + b), fitted by Newton's method with the smoothed targets of
    Lin, Lin & Weng (2007), from a = 1, b = 0 and, where that stops short, from a = 0 and the prior's b.

    f (numpy.ndarray): Margins (e.g. out-of-fold decision values).
    y (numpy.ndarray): Labels in {-1, +1} (or whether each sample is positive).
    """
    f = numpy.asarray(f, dtype=numpy.float64)
    pos = numpy.asarray(y) > 0
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    t = numpy.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))

    def value(a: float, b: float) -> float:
        z = a * f + b
        return float((numpy.logaddexp(0.0, z) - t * z).sum())

    best = (1.0, 0.0, math.inf)
    for a, b in ((1.0, 0.0), (0.0, math.log((n_pos + 1.0) / (n_neg + 1.0)))):
        current = value(a, b)
        for _ in range(max_iter):
            z = a * f + b
            p = 0.5 * (1.0 + numpy.tanh(0.5 * z))
            g = numpy.array([float(((p - t) * f).sum()), float((p - t).sum())])
            d = p * (1.0 - p)
            H = numpy.array([[float((d * f * f).sum()) + 1e-12, float((d * f).sum())],
                             [float((d * f).sum()), float(d.sum()) + 1e-12]])
            if abs(g[0]) < 1e-10 * len(f) and abs(g[1]) < 1e-10 * len(f):
                return a, b
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
        if current < best[2]:
            best = (a, b, current)
    return best[0], best[1]


@dataclass(frozen=True)
class LinearFit:
    """A final fit on all samples: weights, intercept, and the column scale (None without naive Bayes scaling)."""
    weights: numpy.ndarray
    intercept: float
    scale: Optional[numpy.ndarray]


@dataclass(frozen=True)
class HeadFit:
    """One head's fitted linear model, its C, the folds' accuracies, calibration, interpolation and feature map."""
    weights: numpy.ndarray
    intercept: float
    C: Any
    cv_accuracy: Any
    platt: Any
    nb_beta: Any
    nb: Any


def path_scores(cands: Sequence[Candidate], chosen: Candidate, accuracy: Sequence[float]) -> Optional[List[float]]:
    """The accuracy of every C of the chosen candidate's path at its interpolation (None for one candidate)."""
    if len(cands) == 1:
        return None
    return [a for cand, a in zip(cands, accuracy) if cand._replace(C=chosen.C) == chosen]


def choose_family(scored: Sequence[Tuple[Any, ...]], cands: Sequence[Candidate], criterion: str, exclusive: bool,
                  multilabel: bool, calibrate: bool) -> Tuple[bool, List[int]]:
    """The feature family for all heads (True: tf-idf) and each head's best candidate in it: with "accuracy", the
    family whose out-of-fold decisions are best (exclusive: by the largest margin; multi-label: micro-F1), then the
    lowest total cost; ties: presence. `scored`: per head, its out-of-fold margins, labels and `candidate_costs`."""
    families = sorted({c.tfidf for c in cands})
    members = {family: [k for k, cand in enumerate(cands) if cand.tfidf == family] for family in families}
    best = {family: [members[family][first_lowest([costs[k] for k in members[family]])]
                     for _, _, costs, _ in scored] for family in families}

    def total(family: bool) -> Tuple[float, ...]:
        summed = tuple(map(sum, zip(*(costs[k] for (_, _, costs, _), k in zip(scored, best[family])))))
        if criterion != "accuracy" or not (exclusive or multilabel):
            return summed
        margins = [calibrated(oof[k], y, calibrate) for (oof, y, _, _), k in zip(scored, best[family])]
        truth = [y > 0 for _, y, _, _ in scored]
        if exclusive:
            top = numpy.array(margins).argmax(axis=0)
            return (-float(numpy.array(truth)[top, numpy.arange(len(top))].sum()), *summed)
        decided = [m > 0 for m in margins]
        tp = sum(int((d & t).sum()) for d, t in zip(decided, truth))
        fp = sum(int((d & ~t).sum()) for d, t in zip(decided, truth))
        fn = sum(int((~d & t).sum()) for d, t in zip(decided, truth))
        return (-2.0 * tp / max(2 * tp + fp + fn, 1), *summed)

    totals = {family: total(family) for family in families}
    family = families[first_lowest([totals[family] for family in families])]
    if len(families) > 1:
        logger.info("feature families on the folds: presence %s, tf-idf %s: %s", totals[False], totals[True],
                    "tf-idf" if family else "presence")
    return family, best[family]


def calibrated(f: numpy.ndarray, y: numpy.ndarray, calibrate: bool) -> numpy.ndarray:
    """Margins f as the head will output them: Platt-scaled when calibrating (and the fit rises with y)."""
    if not calibrate:
        return f
    a, b = platt(f, y)
    return a * f + b if a > 0 else f


def calibrate_weights(w: numpy.ndarray, c: float, oof: Optional[numpy.ndarray],
                      y: Optional[numpy.ndarray]) -> Tuple[numpy.ndarray, float, Optional[Tuple[float, float]]]:
    """The weights and intercept mapped by `platt` on `oof` and `y`, and (a, b); unchanged and None without margins
    or where a <= 0."""
    ab = platt(oof, y) if oof is not None and y is not None else None
    if ab is None or ab[0] <= 0:
        return w, c, None
    return w * ab[0], c * ab[0] + ab[1], ab


def finish_head(final: LinearFit, chosen: Candidate, scores: Optional[List[float]], oof: Optional[numpy.ndarray],
                y: Optional[numpy.ndarray], calibrate: bool) -> HeadFit:
    """The head from its final fit: interpolated, unscaled, calibrated on the out-of-fold margins."""
    w = interpolate(final.weights, chosen.beta)
    w, c, ab = calibrate_weights(w if final.scale is None else w * final.scale, final.intercept,
                                 oof if calibrate else None, y)
    return HeadFit(w, c, chosen.C, scores, ab, chosen.beta, chosen.nb)
