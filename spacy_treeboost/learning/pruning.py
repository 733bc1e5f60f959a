"""`max_rules="auto"`: each head restricted to the subtrees that make up the share of its total contribution chosen
on the cross-validation folds."""
import logging
from dataclasses import replace
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy

from .features import interpolate
from .heads import FOLD_TOL_RATIO
from .selection import HeadFit, assemble_margins, calibrate_weights, calibrated
from .sharded import final_fit
from .solver import one_blas_thread

logger = logging.getLogger(__name__)

# the shares of the total contribution (sum of |w_t| x_t) the folds try and the accuracy they may lose
PRUNE_SHARES = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.96, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999, 1.0)
PRUNE_TOLERANCE = 0.002
# pruned only where the folds score this many documents
PRUNE_MIN_SCORED = 1000
BLOCK = 1 << 20


def share_levels(contribution: numpy.ndarray, shares: Sequence[float]) -> Tuple[numpy.ndarray, numpy.ndarray]:
    """Each column's level (the first of the increasing `shares` that keeps it) and how many columns each share keeps:
    at share s the fewest of largest `contribution` (>= 0; ties: the first) that add up to s of the total. Besides
    its output it holds a sorted copy of `contribution` and a byte a column (it runs on every subtree)."""
    n = len(contribution)
    if not numpy.isfinite(contribution).all():
        raise ValueError("a subtree's contribution is not finite: the fit diverged")
    if (contribution < 0).any():
        raise ValueError("a subtree's contribution (|weight| x the sum of its feature) cannot be negative")
    ranked = numpy.sort(contribution)[::-1]
    kept = _kept_counts(ranked, shares)
    level = numpy.zeros(n, dtype=numpy.min_scalar_type(len(shares)))  # a byte a column, also when sent to workers
    for k in kept.tolist():
        if k < n:
            v = ranked[k - 1]
            level += contribution < v
            ties = contribution == v
            ties[:_after_first(ties, k - int(numpy.count_nonzero(contribution > v)))] = False
            level += ties
    return level, kept


def _contribution(w: numpy.ndarray, sums: numpy.ndarray, out: Optional[numpy.ndarray] = None) -> numpy.ndarray:
    """|w| times the column sums (>= 0), as |w x sums| in one array (`out`: the sums' own)."""
    out = numpy.multiply(w, sums, out=out)
    return numpy.abs(out, out=out)


def _running_sums(ranked: numpy.ndarray) -> Iterator[Tuple[int, numpy.ndarray]]:
    """The running sums of `ranked` a block at a time (each block's start and its sums): the same bits as
    `numpy.cumsum`."""
    running = 0.0
    for a in range(0, len(ranked), BLOCK):
        block = numpy.cumsum(numpy.concatenate([[running + ranked[a]], ranked[a + 1:a + BLOCK]]))
        running = float(block[-1])
        yield a, block


def _kept_counts(ranked: numpy.ndarray, shares: Sequence[float]) -> numpy.ndarray:
    """For each share s, 1 + where the running sum of `ranked` (decreasing) first reaches s of the total (n for
    s >= 1)."""
    n = len(ranked)
    kept = numpy.full(len(shares), n, dtype=numpy.int64)
    total = 0.0
    for _, block in _running_sums(ranked):
        total = float(block[-1])
    targets = [(j, s * total) for j, s in enumerate(shares) if s < 1.0 and n]
    for a, block in _running_sums(ranked):
        while targets and block[-1] >= targets[0][1]:
            j, target = targets.pop(0)
            kept[j] = min(a + int(numpy.searchsorted(block, target)) + 1, n)
    return kept


def _after_first(mask: numpy.ndarray, m: int) -> int:
    """The index after the m-th true entry of `mask` (0 for m = 0), a block at a time."""
    if not m:
        return 0
    seen = 0
    for a in range(0, len(mask), BLOCK):
        found = numpy.flatnonzero(mask[a:a + BLOCK])
        if seen + len(found) >= m:
            return a + int(found[m - seen - 1]) + 1
        seen += len(found)
    return len(mask)


def prune(shards: Any, name: str, targets: Sequence[numpy.ndarray], folds: Sequence[numpy.ndarray],
          fits: List[HeadFit], tfidf: bool, calibrate: bool,
          settings: Dict[str, Any]) -> Tuple[List[HeadFit], List[Optional[numpy.ndarray]], List[Dict[str, Any]]]:
    """Each head restricted to the smallest share of `PRUNE_SHARES` of its total contribution whose held-out accuracy
    on the folds (refitted from the final weights) is within `PRUNE_TOLERANCE` of the whole model's (all subtrees
    where they score fewer than `PRUNE_MIN_SCORED` documents). `settings`: the solver's l1_ratio, loss, max_iter, tol
    and threads. RETURNS: the restricted fits, each one's kept columns (None: all), and what each pruning chose."""
    out: List[HeadFit] = []
    kept: List[Optional[numpy.ndarray]] = []
    info: List[Dict[str, Any]] = []
    for y, f, fit in zip(targets, folds, fits):
        keep: Optional[numpy.ndarray] = None
        if numpy.count_nonzero(f >= 0) < PRUNE_MIN_SCORED:
            info.append({"share": 1.0, "rules": int(numpy.count_nonzero(fit.weights)), "cv_accuracy": None})
        else:
            oof = _fold_level_margins(shards, name, y, f, fit, tfidf, settings)
            scored = y[f >= 0]
            accuracy = [float(numpy.mean((calibrated(m, scored, calibrate) > 0) == (scored > 0))) for m in oof]
            chosen = len(accuracy) - 1
            while chosen > 0 and accuracy[chosen - 1] >= accuracy[-1] - PRUNE_TOLERANCE:
                chosen -= 1
            shards.map("select", name, y, None, None)
            level, counts = share_levels(_contribution(fit.weights, shards.add("column_sums")[0]), PRUNE_SHARES)
            logger.info("pruning on the folds: shares %s keep %s subtrees, held-out accuracy %s: share %g",
                        list(PRUNE_SHARES), counts.tolist(), [round(v, 4) for v in accuracy], PRUNE_SHARES[chosen])
            within = level <= chosen
            rules = int(numpy.count_nonzero(within & (fit.weights != 0)))
            info.append({"share": PRUNE_SHARES[chosen], "rules": rules, "cv_accuracy": accuracy[chosen]})
            if PRUNE_SHARES[chosen] < 1.0:
                keep = within
                fit = _restricted(fit, keep, oof[chosen], scored, calibrate)
        out.append(fit)
        kept.append(keep)
    return out, kept, info


def _fold_level_margins(shards: Any, name: str, y: numpy.ndarray, f: numpy.ndarray, fit: HeadFit, tfidf: bool,
                        settings: Dict[str, Any]) -> numpy.ndarray:
    """The out-of-fold margins of the scored documents at every share, shape (len(PRUNE_SHARES), scored)."""
    a, b = fit.platt if fit.platt is not None else (1.0, 0.0)
    blocks = []
    for k in range(int(f.max()) + 1):
        # the start made again for each fold: not held while the fold's margins are made
        with one_blas_thread():
            refit = final_fit(shards, name, y, fit.C, nb=fit.nb, l1_ratio=settings["l1_ratio"], loss=settings["loss"],
                              max_iter=settings["max_iter"], tol=FOLD_TOL_RATIO * settings["tol"],
                              threads=settings["threads"], init=numpy.append(fit.weights / a, (fit.intercept - b) / a),
                              folds=f, fold=k)
        w, c = refit.weights, refit.intercept
        if refit.scale is not None:
            w = interpolate(w, fit.nb_beta)
            w *= refit.scale
        del refit
        sums = shards.add("column_sums")[0]
        level, _ = share_levels(_contribution(w, sums, out=sums), PRUNE_SHARES)
        del sums
        margins = shards.map("level_margins", w, c, level, len(PRUNE_SHARES), tfidf)
        blocks.append(numpy.concatenate(margins, axis=1))
    return assemble_margins(blocks, f)


def _restricted(fit: HeadFit, keep: numpy.ndarray, oof: numpy.ndarray, scored: numpy.ndarray,
                calibrate: bool) -> HeadFit:
    """The fit's weights cut to the columns `keep`, its calibration refitted on the restricted out-of-fold margins."""
    a, b = fit.platt if fit.platt is not None else (1.0, 0.0)
    w, c, ab = calibrate_weights(numpy.where(keep, fit.weights / a, 0.0), (fit.intercept - b) / a,
                                 oof if calibrate else None, scored)
    return replace(fit, weights=w, intercept=c, platt=ab)
