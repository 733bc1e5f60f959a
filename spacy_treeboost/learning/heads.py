"""The linear learner's heads fitted on the folds: each head's candidate fits on each fold and its final fit, as
tasks on the model's workers (`tasks.run_tasks`), and the choice of each head's candidate from its out-of-fold
margins."""
import logging
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

import numpy

from .selection import (HeadFit, all_candidates, assemble_margins, candidate_costs, choose_family, class_folds,
                        cv_folds, final_fit, finish_head, fold_margins, fold_split, needs_choice, path_scores)
from .solver import one_blas_thread
from .tasks import run_tasks

if TYPE_CHECKING:
    from .subtree_linear import SubtreeLinearClassifier

logger = logging.getLogger(__name__)

SOLVER = "tron"
TFIDF_LOSS = "squared_hinge"


def fit_heads(model: "SubtreeLinearClassifier", F: Any, targets: Sequence[numpy.ndarray], T: Any = None,
              shards: Any = None) -> Tuple[List[HeadFit], bool]:
    """Every target's head of `model`, and whether they are fitted on the tf-idf matrix T (CSC, the columns of F)
    rather than on F: the fits of each fold's candidate paths and the final fits as tasks of `run_fits`. With T,
    the folds choose the feature family for all heads together (`choose_family`; for exclusive classes the heads
    share `class_folds`), then each head's candidate within it."""
    paths = model._paths(tfidf=T is not None)
    cands = all_candidates(paths)
    exclusive = not model.multilabel_ and len(targets) > 1
    folds: List[Optional[numpy.ndarray]] = [None] * len(targets)
    fold_sets = list(range(len(targets)))  # which heads share their folds (and so their fold splits)
    if needs_choice(paths, model.calibrate):
        if T is not None and exclusive:
            folds, fold_sets = [class_folds(targets, model.cv, model.cv_documents)] * len(targets), [0] * len(targets)
        else:
            folds = [cv_folds(t, model.cv, model.cv_documents) for t in targets]
    fit = dict(l1_ratio=model.l1_ratio, loss=model.loss, max_iter=model.max_iter, tol=model.tol, method=SOLVER)
    tasks: List[Tuple[Any, ...]] = [("fold", h, (k, p)) for h, f in enumerate(folds) if f is not None
                                    for k in range(int(f.max()) + 1) for p in range(len(paths))]
    if model.n_workers > 1:
        # the paths of most fits first, so that the workers' last tasks are short ones
        tasks.sort(key=lambda t: -len(paths[t[2][1]].Cs))
    if len(cands) == 1:
        tasks += [("final", h, cands[0]) for h in range(len(targets))]
    logger.info("%d head(s), %d candidate(s), %d fit task(s) on %d worker(s)", len(targets), len(cands),
                len(tasks), model.n_workers)
    job = dict(F=F, T=T, targets=targets, folds=folds, fold_sets=fold_sets, paths=paths, fit=fit, shards=shards)
    done = run_fits(model, tasks, job)
    if folds[0] is None:
        return [finish_head(done[("final", h, cands[0])], cands[0], None, None, None, model.calibrate)
                for h in range(len(targets))], cands[0].tfidf
    scored = []
    for h, t in enumerate(targets):
        f = folds[h]
        assert f is not None
        blocks = [numpy.concatenate([done[("fold", h, (k, p))] for p in range(len(paths))])
                  for k in range(int(f.max()) + 1)]
        oof = assemble_margins(blocks, f)
        scored.append((oof, t[f >= 0], *candidate_costs(oof, t[f >= 0], model._criterion)))

    family, best = choose_family(scored, cands, model._criterion, exclusive, model.multilabel_, model.calibrate)
    chosen = [(cands[k], path_scores(paths, cands[k], accuracy), oof[k], y)
              for (oof, y, _, accuracy), k in zip(scored, best)]
    if len(cands) > 1:
        done.update(run_fits(model, [("final", h, c[0]) for h, c in enumerate(chosen)], job))
    return [finish_head(done[("final", h, c[0])], *c, model.calibrate) for h, c in enumerate(chosen)], family


def run_fits(model: "SubtreeLinearClassifier", tasks: List[Tuple[Any, ...]],
             job: Dict[str, Any]) -> Dict[Any, Any]:
    """The fit tasks' results on the model's workers (`tasks.run_tasks`). With shards held by Ray actors every task
    runs here on them. On processes this process takes the first (longest) task, and its fold is split first, on
    the cores that are idle until the workers start."""
    split = FoldSplit()
    n_workers = model.n_workers
    if job["shards"] is not None and not job["shards"].in_process:
        n_workers = 1
    elif n_workers > 1 and len(tasks) > 1 and model.backend != "ray" and tasks[0][0] == "fold" \
            and job["shards"] is None:
        FitWorker(job, split).fold_split(tasks[0], model._threads)
    return run_tasks(FitWorker, (job, split), tasks, n_workers, model.backend, model.ray_address, "Fit worker",
                     _describe)


def _describe(task: Any) -> str:
    return f"during the {task[0]} fit of class {task[1]}"


class FoldSplit:
    """The last fold split of a fit worker, kept for its next tasks (the paths of one fold and matrix share it): a
    cache, so a copy sent to another process arrives empty."""

    key: Optional[Tuple[Any, ...]] = None
    split: Any = None

    def __reduce__(self) -> Tuple[Any, ...]:
        return FoldSplit, ()


class FitWorker:
    """A worker of the fit tasks: ("fold", h, (k, p)) the margins of head h's fold k under path p's fits on the
    other folds, ("final", h, candidate) the final fit. `job`: F, T (None without tf-idf), targets, folds (per head;
    `fold_sets[h]` numbers the distinct ones), paths, fit (the solver's settings) and shards (None: whole matrices).
    `threads` (an int, or a `Threads` that may rise): for the large products of its fits."""

    def __init__(self, job: Dict[str, Any], split: FoldSplit, threads: Any = 1) -> None:
        self.job, self.last, self.threads = job, split, threads

    def fold_split(self, task: Tuple[Any, ...], threads: int = 1) -> Tuple[Any, Any]:
        """The training and held-out rows of a fold task's matrix, on `threads` threads (or as last split)."""
        _, h, (fold, p) = task
        tfidf, job = self.job["paths"][p].tfidf, self.job
        key = (tfidf, fold, job["fold_sets"][h])
        if self.last.key != key:
            self.last.split = None  # freed before the next is made
            self.last.key, self.last.split = key, fold_split(job["T"] if tfidf else job["F"], job["folds"][h], fold,
                                                             threads)
        return self.last.split

    def run(self, task: Tuple[Any, ...]) -> Any:
        kind, h, arg = task
        job = self.job
        y, fit = job["targets"][h], dict(job["fit"], threads=self.threads)
        tfidf = job["paths"][arg[1]].tfidf if kind == "fold" else arg.tfidf
        if tfidf:
            fit["loss"] = TFIDF_LOSS
        with one_blas_thread():
            if job["shards"] is not None:
                from . import sharded

                name = "T" if tfidf else "F"
                if kind == "fold":
                    return sharded.fold_margins(job["shards"], name, y, job["folds"][h], arg[0],
                                                job["paths"][arg[1]:arg[1] + 1], **fit)
                return sharded.final_fit(job["shards"], name, y, arg.C, nb=arg.nb, **fit)
            X = job["T"] if tfidf else job["F"]
            if kind == "fold":
                fold, p = arg
                return fold_margins(X, y, job["folds"][h], fold, job["paths"][p:p + 1], split=self.fold_split(task),
                                    **fit)
            logger.info("final fit of head %d on %d documents, C = %g (%s)", h + 1, len(y), arg.C,
                        "tf-idf" if tfidf else ("naive Bayes features" if arg.nb else "presence"))
            return final_fit(X, y, arg.C, nb=arg.nb, **fit)
