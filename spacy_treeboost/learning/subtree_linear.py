"""`SubtreeLinearClassifier`: a regularized linear model over every mined subtree, one head per class (the
feature maps, the "auto" family choice and the solver: docs/algorithms.md §7)."""
import logging
import os
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy

from .classifier import NO_SUBTREE, RuleClassifier, encode_targets
from .features import PatternCodes, PatternTree, feature_matrices, presence, tfidf_matrix
from .heads import TFIDF_LOSS, HeadSettings, fit_heads
from .learner import MAX_PATTERN_SIZE_LIMIT, _Head
from .mining import mine_subtrees, pattern_size
from .pruning import prune
from .selection import DEFAULT_CS, SOLVER_CONSTRAINTS, HeadFit, Path, class_folds, cv_folds, make_path
from .sharded import Shards, held_shards
from ..models.rules import RuleSet
from ..exceptions import InvalidSettingError
from ..params import Boolean, Interval, Options, Text, rule
from ..trees.forest import Forest

if TYPE_CHECKING:
    from .shard_files import TreeShards

logger = logging.getLogger(__name__)

FEATURES = ("auto", "nb", "presence", "tfidf")
PRESENCE_C_RATIO = 0.1
TFIDF_C_RATIOS = (3.0, 10.0)
NB_BETAS = (0.25, 0.5, 1.0)
SELECTIONS = ("accuracy", "log_loss")
LINEAR_BACKENDS = (None, "local", "processes", "ray")
class SubtreeLinearClassifier(RuleClassifier):
    """A regularized linear model over all frequent subtrees (NBSVM-style by default).

    The defaults (docs/results_default.md): presence of every subtree of up to 3 nodes (2 in corpora of single
    sentences) in >= 2 training documents and of every 1-2-node subtree, logistic loss, and one feature family chosen
    on 3 folds: presence (per class naive Bayes scaled at C with `nb_beta` 0.25, 0.5 or 1, or plain at 0.1 C) or
    sublinear tf-idf with the squared hinge at 3 C or 10 C. The margin is Platt-scaled on the same folds.

    max_pattern_size (Optional[int]): Largest subtree, in nodes; None: 2 in trees of at most 32 nodes on average,
        else 3.
    min_support (int): Fewest training documents a subtree of more than `keep_rare_up_to` nodes occurs in.
    features (str): "auto" (the family whose out-of-fold decisions are best), "nb" (naive Bayes scaled presence),
        "presence" or "tfidf" (sublinear tf-idf, rows L2-normalized).
    loss (str): "logistic" or "squared_hinge" (L2-SVM).
    C (Optional[float]): Inverse regularization strength; None chooses it among `Cs` by cross-validation, per class.
    Cs (Sequence[float]): Candidates for C.
    l1_ratio (float): Share of L1 in the penalty (0 = L2).
    cv (int): Folds for choosing C and nb_beta and for calibrating.
    include_root_patterns (bool): Allow subtrees that contain the virtual root.
    positive_class (Optional[Any]): For two classes, the one whose margin is positive.
    max_cache_mb (int): Memory cap for mining.
    max_iter (int): Solver iterations.
    tol (float): Solver tolerance, relative to the gradient at zero weights.
    max_rules (Union[str, int, None]): "auto" keeps, per class, the subtrees of largest total contribution (|w_t|
        times the sum of feature t) that make up the share chosen on the folds (`pruning`); a whole number k keeps
        the k of largest contribution and refits them; None keeps every subtree.
    nb_beta (Optional[float]): For "nb", the NBSVM interpolation w = (1 - beta) mean|w| + beta w; None chooses it
        among 0.25, 0.5 and 1 on the folds.
    calibrate (bool): Platt-scale each head's margin on out-of-fold margins.
    selection (str): What the folds maximize: "accuracy" (ties: lower log-loss) or "log_loss" (after Platt scaling).
    keep_rare_up_to (int): Subtrees of at most this many nodes are kept below `min_support` (0: none).
    cv_documents (Optional[int]): Fit only the first folds that hold out this many documents together; None: all.
    n_workers (int): Workers that share the mining (by root label) and the fits (the same model for any number).
    backend (Optional[str]): None or "processes" (local processes), "ray" (Ray actors) or "local" (in-process).
    ray_address (Optional[str]): For backend "ray", the cluster; None starts a local Ray (or uses RAY_ADDRESS).
    """

    positive_class: Optional[Any] = None
    peak_rss_: Dict[str, Any]  # fitted from shard files: the peak RSS of the training process and of each worker
    _parameter_constraints = {
        "max_rules": rule(Options("auto"), Interval("int", 1, None), None, hint=(
            "use 'auto' (prune on the cross-validation folds), a whole number of rules >= 1, or None to keep every "
            "subtree")),
        "nb_beta": rule(Interval("real", 0.0, 1.0), None, hint=(
            f"use a number from 0 to 1 (1 keeps the fitted weights; NBSVM uses 0.25), or None to choose it among "
            f"{list(NB_BETAS)} by cross-validation")),
        "features": rule(Options(*FEATURES)),
        "calibrate": rule(Boolean()),
        "keep_rare_up_to": rule(Interval("int", 0, MAX_PATTERN_SIZE_LIMIT), hint=(
            f"use a whole number of nodes from 0 to {MAX_PATTERN_SIZE_LIMIT} (0 applies min_support to every "
            "subtree)")),
        "n_workers": rule(Interval("int", 1, 1024), hint="use a whole number of worker processes from 1 to 1024"),
        "backend": rule(Options(*LINEAR_BACKENDS), hint=(
            f"use {' or '.join(map(repr, LINEAR_BACKENDS))} for the subtree-linear learner")),
        "ray_address": rule(Text(), None, hint="use a Ray cluster address such as 'ray://host:10001', or None"),
        "selection": rule(Options(*SELECTIONS)),
        "cv_documents": rule(Interval("int", 1, None), None, hint=(
            "use a whole number of held-out documents >= 1, or None to fit every cross-validation fold")),
        "max_pattern_size": rule(Interval("int", 1, MAX_PATTERN_SIZE_LIMIT), None, hint=(
            f"use a whole number from 1 to {MAX_PATTERN_SIZE_LIMIT} (subtrees of 2-4 nodes are usual), or None to "
            "choose it from the training documents' length")),
        "min_support": rule(Interval("int", 1, None), hint="use a whole number of documents >= 1"),
        "max_cache_mb": rule(Interval("real", 0, None, "neither"), hint="use a positive number of megabytes"),
        "include_root_patterns": rule(Boolean()),
        **SOLVER_CONSTRAINTS,
        "cv": rule(Interval("int", 2, 20), hint=(
            "use a whole number of folds from 2 to 20 (they choose C when C is None, and fit the calibration's "
            "sigmoid on out-of-fold margins when calibrate=True)")),
    }

    def __init__(self, *, max_pattern_size: Optional[int] = None, min_support: int = 2, features: str = "auto",
                 loss: str = "logistic", C: Optional[float] = 1.0, Cs: Sequence[float] = DEFAULT_CS,
                 l1_ratio: float = 0.0, cv: int = 3, include_root_patterns: bool = False,
                 positive_class: Optional[Any] = None, max_cache_mb: int = 4096, max_iter: int = 1000,
                 tol: float = 1e-3, max_rules: Union[str, int, None] = "auto", nb_beta: Optional[float] = None,
                 calibrate: bool = True, selection: str = "accuracy", keep_rare_up_to: int = 2,
                 cv_documents: Optional[int] = 10000, n_workers: int = 1, backend: Optional[str] = None,
                 ray_address: Optional[str] = None) -> None:
        self.max_pattern_size = max_pattern_size
        self.min_support = min_support
        self.features = features
        self.loss = loss
        self.C = C
        self.Cs = Cs
        self.l1_ratio = l1_ratio
        self.cv = cv
        self.include_root_patterns = include_root_patterns
        self.positive_class = positive_class
        self.max_cache_mb = max_cache_mb
        self.max_iter = max_iter
        self.tol = tol
        self.max_rules = max_rules
        self.nb_beta = nb_beta
        self.calibrate = calibrate
        self.selection = selection
        self.keep_rare_up_to = keep_rare_up_to
        self.cv_documents = cv_documents
        self.n_workers = n_workers
        self.backend = backend
        self.ray_address = ray_address

    def _validate_combination(self) -> None:
        if self.ray_address is not None and self.backend != "ray":
            raise InvalidSettingError(f"ray_address={self.ray_address!r} is only used with backend='ray', but "
                                      f"backend={self.backend!r}: set backend='ray' or drop ray_address",
                                      setting="ray_address", value=self.ray_address)
        if self.backend == "local" and self.n_workers > 1:
            raise InvalidSettingError(f"backend='local' runs one worker, but n_workers={self.n_workers}: use backend "
                                      "'processes' (or None) for several", setting="backend", value=self.backend)

    def fit(self, X: Union[Forest, "TreeShards"], y: Optional[Sequence[Any]] = None) -> "SubtreeLinearClassifier":
        """Mine the subtrees of X and fit one linear model per head.

        X (Union[Forest, TreeShards]): The training trees, or shard files that the workers read
            (`learning.shard_files`; their classes are y).
        y (Optional[Sequence]): One class per tree, or a collection of classes per tree (None for shard files).
        RETURNS (SubtreeLinearClassifier): self.
        """
        from .shard_files import TreeShards, fit_files

        if isinstance(X, TreeShards):
            return fit_files(self, X, y)
        self.validate_params()
        if not isinstance(X, Forest):
            raise TypeError(f"X must be a Forest or TreeShards, got {type(X).__name__}; build one with "
                            "Forest.from_trees or read_bact, or name BACT files with TreeShards(paths)")
        if y is None:
            raise ValueError("y is None: give one class per tree of the Forest (only TreeShards carry their classes)")
        if len(X) == 0:
            raise ValueError("Cannot train on an empty set of trees.")
        if len(y) != len(X):
            raise ValueError(f"Got {len(y)} labels for {len(X)} trees.")
        targets = self._start(y, X.n_nodes, len(X))
        self.shard_holders_: List[str] = []
        clock = time.process_time()
        logger.info("mining the subtrees of up to %d nodes in %d trees", self.max_pattern_size_, len(X))
        counts, codes, order = mine_subtrees(
            X, max_pattern_size=self.max_pattern_size_, min_support=self.min_support,
            include_root_patterns=self.include_root_patterns, max_cache_mb=self.max_cache_mb,
            keep_rare_up_to=self.keep_rare_up_to, n_workers=self.n_workers, backend=self.backend,
            ray_address=self.ray_address, by_frequency=True)
        if not codes:
            raise ValueError(NO_SUBTREE)
        self.timings_ = {"mine": time.process_time() - clock}
        logger.info("mined %d subtrees in %.1f CPU s; fitting %d head(s)", len(codes), self.timings_["mine"],
                    len(self.heads_))
        clock = time.process_time()
        # the columns are in frequency order (`order`: each mined column's place), so most weight reads hit the cache
        matrices, idf = feature_matrices(counts, self.features, self._threads, stored=False)
        self.timings_["features"] = time.process_time() - clock
        clock = time.process_time()
        with held_shards(matrices) as shards:
            del matrices  # the shards hold them
            fits, kept, pruning, tfidf = self._fit_shards(shards, targets, order)
        fitted = self._finish_heads(targets, fits, kept, pruning, counts, tfidf, order)
        del counts
        self.timings_["fit"] = time.process_time() - clock
        return self._set_rules(codes, fitted, idf[order] if tfidf and idf is not None else None)

    def _start(self, y: Sequence[Any], n_nodes: int, n_docs: int) -> List[numpy.ndarray]:
        """Set the classes, the heads and `max_pattern_size_` (None: chosen from the training documents' nodes);
        RETURNS (List[numpy.ndarray]): The heads' {-1, +1} targets."""
        self.classes_, self.multilabel_, heads, targets = encode_targets(y, self._positive)
        self.heads_ = [_Head(str(h), numpy.zeros(0)) for h in heads]
        self.max_pattern_size_ = self.max_pattern_size or pattern_size(n_nodes, n_docs)
        return targets

    def _fit_shards(self, shards: Shards, targets: Sequence[numpy.ndarray],
                    order: numpy.ndarray) -> Tuple[List[HeadFit], List[Any], List[Any], bool]:
        """Every head on shards whose columns are in frequency order, pruned with "auto", mapped back to the mined
        order (`order`: each mined column's place); also the kept columns, what each pruning chose, and whether the
        heads use tf-idf."""
        fits, on_T = fit_heads(self._head_settings(), shards, targets, self._paths("T" in shards.names))
        tfidf = self.features == "tfidf" or on_T
        kept: List[Any] = [None] * len(targets)
        pruning: List[Any] = [None] * len(targets)
        if self.max_rules == "auto":
            fits, masks, pruning = self._prune(shards, targets, fits, on_T, tfidf)
            kept = [None if k is None else numpy.flatnonzero(k[order]) for k in masks]
        return [replace(fit, weights=fit.weights[order]) for fit in fits], kept, list(pruning), tfidf

    def _finish_heads(self, targets: Sequence[numpy.ndarray], fits: List[HeadFit], kept: List[Any],
                      pruning: List[Any], counts: Any, tfidf: bool,
                      order: numpy.ndarray) -> List[Tuple[numpy.ndarray, float, Optional[numpy.ndarray]]]:
        """Each head's weights, intercept and kept columns (a whole `max_rules`: refitted on the top columns of the
        counts, whose column j is mined column order[j]'s); writes `fit_info_`."""
        self.fit_info_: List[Dict[str, Any]] = []
        fitted = []
        F = None
        for head, t, fit, keep, pruned in zip(self.heads_, targets, fits, kept, pruning):
            w, c, chosen, nb = fit.weights, fit.intercept, fit.C, fit.nb
            if isinstance(self.max_rules, int) and numpy.count_nonzero(w) > self.max_rules:
                if F is None:
                    F = counts[:, order].astype(numpy.float64)
                    F = F if tfidf else presence(F.tocsc(), self._threads)
                w, c, keep = self._refit_top(F, t, w, chosen, nb, tfidf)
            fitted.append((w, c, keep))
            self.fit_info_.append({"head": head.name, "features": self._chosen_features(nb, tfidf), "C": chosen,
                                   "cv_accuracy": fit.cv_accuracy, "nonzero": int(numpy.count_nonzero(w)),
                                   "platt": fit.platt, "nb_beta": fit.nb_beta})
            if pruned is not None:
                self.fit_info_[-1]["pruned"] = pruned
        return fitted

    def _set_rules(self, codes: Union[PatternCodes, PatternTree],
                   fitted: List[Tuple[numpy.ndarray, float, Optional[numpy.ndarray]]],
                   idf: Optional[numpy.ndarray]) -> "SubtreeLinearClassifier":
        """Set the rule table: weights halved (sigmoid(2F) is the probability), by decreasing magnitude (ties: mined
        order); for tf-idf every kept subtree in mined order, its idf as the rule's b. RETURNS: self."""
        clock = time.process_time()
        self.n_features_ = len(codes)
        ids, columns = [], []
        for w, c, keep in fitted:
            if idf is None:
                nonzero = numpy.flatnonzero(w)
                order = nonzero[numpy.argsort(-numpy.abs(w[nonzero]), kind="stable")]
                b = numpy.zeros(len(order))
            else:
                order = numpy.arange(len(codes)) if keep is None else numpy.asarray(keep)
                b = idf[order]
            ids.append(order)
            columns.append((numpy.ones(len(order), dtype=numpy.int32), w[order] / 2.0, b))
        used = numpy.unique(numpy.concatenate(ids))
        codes, at = codes.codes_of(used)
        rules = [(at[numpy.searchsorted(used, i)].astype(numpy.int64), *rest) for i, rest in zip(ids, columns)]
        self.rules_ = RuleSet.from_arrays([h.name for h in self.heads_], algorithm=f"linear-{self.features}",
                                          include_root_patterns=self.include_root_patterns,
                                          value="stump" if idf is None else "tfidf",
                                          strings=codes.strings, depth=codes.depth, label=codes.label,
                                          code_start=codes.start, rules=rules,
                                          intercepts=[c / 2.0 for _, c, _ in fitted], distinct=True,
                                          threads=self._threads)
        self.timings_["rules"] = time.process_time() - clock
        return self

    @property
    def _threads(self) -> int:
        """Threads for this process's own large steps (the idle workers' cores)."""
        return min(self.n_workers, os.cpu_count() or 1)

    def _chosen_features(self, nb: bool, tfidf: bool) -> str:
        """The feature map a head was fitted on, for `fit_info_`."""
        if self.features != "auto":
            return self.features
        return "tfidf" if tfidf else ("nb" if nb else "presence")

    def _paths(self, tfidf: bool = False) -> List[Path]:
        """The candidates the folds choose among (for "auto": nb, then presence, then with `tfidf` tf-idf)."""
        Cs = self.Cs if self.C is None else [self.C]
        if self.features != "auto":
            nb = self.features == "nb"
            return [make_path(nb, Cs, self.nb_beta if nb else 1.0, NB_BETAS)]
        paths = [make_path(True, Cs, self.nb_beta, NB_BETAS),
                 make_path(False, [PRESENCE_C_RATIO * c for c in Cs], 1.0, NB_BETAS)]
        if tfidf:
            tfidf_Cs = sorted({r * c for c in Cs for r in TFIDF_C_RATIOS})
            paths.append(make_path(False, tfidf_Cs, 1.0, NB_BETAS)._replace(tfidf=True))
        return paths

    def _head_settings(self, loss: Optional[str] = None) -> HeadSettings:
        """`heads.fit_heads`'s settings: this model's (with another `loss`, if given)."""
        criterion = "calibrated_log_loss" if self.selection == "log_loss" else "accuracy"
        return HeadSettings(self.cv, self.l1_ratio, loss or self.loss, self.max_iter, self.tol, self.calibrate,
                            criterion, self.cv_documents, self.multilabel_, self.n_workers, self.backend,
                            self.ray_address)

    def _refit_top(self, F: Any, y: numpy.ndarray, w: numpy.ndarray, C: float, nb: bool,
                   tfidf: bool) -> Tuple[numpy.ndarray, float, numpy.ndarray]:
        """The weights refitted on the `max_rules` columns of largest total contribution (ties: first column), and
        those columns; for "tfidf" F holds counts and the kept columns' tf-idf is recomputed."""
        contribution = numpy.abs(w) * numpy.diff(F.tocsc().indptr)
        keep = numpy.sort(numpy.argsort(-contribution, kind="stable")[: self.max_rules])
        X = tfidf_matrix(F[:, keep].tocsc())[0] if tfidf else F[:, keep]
        loss = TFIDF_LOSS if tfidf and self.features == "auto" else self.loss
        with held_shards({"F": X}) as shards:
            path = make_path(nb, [C], self.nb_beta if nb else 1.0, NB_BETAS)
            fit = fit_heads(self._head_settings(loss), shards, [y], [path])[0][0]
        out = numpy.zeros_like(w)
        out[keep] = fit.weights
        return out, fit.intercept, keep

    def _prune(self, shards: Shards, targets: Sequence[numpy.ndarray], fits: List[HeadFit], on_T: bool,
               tfidf: bool) -> Tuple[List[HeadFit], List[Optional[numpy.ndarray]], List[Dict[str, Any]]]:
        """`max_rules="auto"` (`pruning.prune`) on this model's shards, folds and settings."""
        exclusive = not self.multilabel_ and len(targets) > 1
        shared = self.features == "auto" and exclusive
        folds = ([class_folds(targets, self.cv, self.cv_documents)] * len(targets) if shared
                 else [cv_folds(t, self.cv, self.cv_documents) for t in targets])
        settings = dict(l1_ratio=self.l1_ratio, loss=TFIDF_LOSS if on_T else self.loss, max_iter=self.max_iter,
                        tol=self.tol, threads=self._threads)
        return prune(shards, "T" if on_T else "F", targets, folds, fits, tfidf, self.calibrate, settings)
