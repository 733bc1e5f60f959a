"""The linear learners' heads: the candidates' fold and final fits as tasks on the workers (`tasks.run_tasks`), and
the choice of each head's candidate from its out-of-fold margins."""
import logging
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy

from . import sharded
from .selection import (HeadFit, Path, all_candidates, assemble_margins, candidate_costs, choose_family, class_folds,
                        cv_folds, finish_head, path_scores)
from .solver import one_blas_thread
from .tasks import run_tasks

logger = logging.getLogger(__name__)

TFIDF_LOSS = "squared_hinge"
# the folds' fits (cross-validation and pruning) only rank candidates: they stop at this many times the tolerance
FOLD_TOL_RATIO = 10.0


@dataclass(frozen=True)
class HeadSettings:
    """How `fit_heads` fits: the solver (`sharded.final_fit`), the folds (`selection.cv_folds`), the choice
    (`criterion`: "accuracy" or "calibrated_log_loss"), Platt scaling, multi-label targets and the workers."""

    cv: int
    l1_ratio: float
    loss: str
    max_iter: int
    tol: float
    calibrate: bool = False
    criterion: str = "accuracy"
    cv_documents: Optional[int] = None
    multilabel: bool = False
    n_workers: int = 1
    backend: Optional[str] = None
    ray_address: Optional[str] = None


def fit_heads(settings: HeadSettings, shards: Any, targets: Sequence[numpy.ndarray],
              paths: Sequence[Path]) -> Tuple[List[HeadFit], bool]:
    """Every target's head: the candidate of `paths` the folds choose, fitted on every document (`finish_head`) of
    the matrix "F" of `shards` or, for tf-idf paths, "T" (the folds choose the family for all heads); and whether
    the heads are fitted on T."""
    tfidf = any(path.tfidf for path in paths)
    cands = all_candidates(paths)
    exclusive = not settings.multilabel and len(targets) > 1
    folds: List[Optional[numpy.ndarray]] = [None] * len(targets)
    if settings.calibrate or len(cands) > 1:
        if tfidf and exclusive:
            folds = [class_folds(targets, settings.cv, settings.cv_documents)] * len(targets)
        else:
            folds = [cv_folds(t, settings.cv, settings.cv_documents) for t in targets]
    fit = dict(l1_ratio=settings.l1_ratio, loss=settings.loss, max_iter=settings.max_iter, tol=settings.tol)
    tasks: List[Tuple[Any, ...]] = [("fold", h, (k, p)) for h, f in enumerate(folds) if f is not None
                                    for k in range(int(f.max()) + 1) for p in range(len(paths))]
    if settings.n_workers > 1:
        # the paths of most fits first, so that the workers' last tasks are short ones
        tasks.sort(key=lambda t: -len(paths[t[2][1]].Cs))
    if len(cands) == 1:
        tasks += [("final", h, cands[0]) for h in range(len(targets))]
    logger.info("%d head(s), %d candidate(s), %d fit task(s) on %d worker(s)", len(targets), len(cands),
                len(tasks), settings.n_workers)
    job = dict(targets=targets, folds=folds, paths=paths, fit=fit, shards=shards)
    # with shards held by Ray actors every task runs here
    n_workers = settings.n_workers if shards.in_process else 1
    if n_workers > 1 and len(tasks) > 1 and settings.backend != "ray" and tasks[0][0] == "fold":
        # on processes, the first task's fold is split first, while the workers start
        _, h, (fold, p) = tasks[0]
        shards.map("select", "T" if paths[p].tfidf else "F", targets[h], folds[h], fold,
                   min(n_workers, os.cpu_count() or 1))

    def run(tasks: List[Tuple[Any, ...]]) -> Dict[Any, Any]:
        return run_tasks(FitWorker, (job,), tasks, n_workers, settings.backend, settings.ray_address, "Fit worker",
                         lambda task: f"during the {task[0]} fit of class {task[1]}")

    done = run(tasks)
    if folds[0] is None:
        return [finish_head(done[("final", h, cands[0])], cands[0], None, None, None, settings.calibrate)
                for h in range(len(targets))], cands[0].tfidf
    scored = []
    for h, t in enumerate(targets):
        f = folds[h]
        assert f is not None
        blocks = [numpy.concatenate([done[("fold", h, (k, p))] for p in range(len(paths))])
                  for k in range(int(f.max()) + 1)]
        oof = assemble_margins(blocks, f)
        scored.append((oof, t[f >= 0], *candidate_costs(oof, t[f >= 0], settings.criterion)))

    family, best = choose_family(scored, cands, settings.criterion, exclusive, settings.multilabel, settings.calibrate)
    chosen = [(cands[k], path_scores(cands, cands[k], accuracy), oof[k], y)
              for (oof, y, _, accuracy), k in zip(scored, best)]
    if len(cands) > 1:
        done.update(run([("final", h, c[0]) for h, c in enumerate(chosen)]))
    return [finish_head(done[("final", h, c[0])], *c, settings.calibrate) for h, c in enumerate(chosen)], family


class FitWorker:
    """Runs ("fold", h, (k, p)): head h's margins on fold k under path p, or ("final", h, candidate): the final fit.
    `job`: targets, folds, paths, fit (the solver's settings) and shards. `threads`: an int or a rising `Threads`."""

    def __init__(self, job: Dict[str, Any], threads: Any = 1) -> None:
        self.job, self.threads = job, threads

    def run(self, task: Tuple[Any, ...]) -> Any:
        kind, h, arg = task
        job = self.job
        y, fit = job["targets"][h], dict(job["fit"], threads=self.threads)
        tfidf = job["paths"][arg[1]].tfidf if kind == "fold" else arg.tfidf
        matrix = "T" if tfidf else "F"
        if tfidf:
            fit["loss"] = TFIDF_LOSS
        with one_blas_thread():
            if kind == "fold":
                fit["tol"] *= FOLD_TOL_RATIO
                return sharded.fold_margins(job["shards"], matrix, y, job["folds"][h], arg[0],
                                            job["paths"][arg[1]:arg[1] + 1], **fit)
            logger.info("final fit of head %d on %d documents, C = %g (%s)", h + 1, len(y), arg.C,
                        "tf-idf" if tfidf else ("naive Bayes features" if arg.nb else "presence"))
            return sharded.final_fit(job["shards"], matrix, y, arg.C, nb=arg.nb, **fit)

