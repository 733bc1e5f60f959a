"""A linear model over every subtree: the feature space of boosting, with an L2 margin.

Kudo & Matsumoto (2004, §4) note that boosted subtree stumps and a tree-kernel SVM
share one feature space, all subtrees, and differ in L1 versus L2 margin.
`SubtreeLinearClassifier` mines every subtree up to `max_pattern_size` nodes that
occurs in at least `min_support` training documents (the miner of the boosting
learners) and fits a regularized linear model over them, one head per class:

- "presence": x_t = [count(t) >= 1];
- "log1p": x_t = log(1 + count(t));
- "nb": x_t = r_t [count(t) >= 1], with r the naive Bayes log-count ratio of the
  head's training documents (NBSVM, Wang & Manning 2012); with `nb_beta` < 1 the
  fitted weights are interpolated towards their mean magnitude,
  w = (1 - beta) mean|w| + beta w, as NBSVM does;
- "tfidf": x_t = (1 + log count(t)) idf_t / n, idf_t = log((1 + N) / (1 + df_t)) + 1
  over the N training documents, n the Euclidean norm of the document's row over
  the model's subtrees (scikit-learn's `TfidfVectorizer(sublinear_tf=True)`);
- "auto" (the default): a feature family chosen on the cross-validation folds for
  all heads together, by the task's decisions on the out-of-fold margins (two
  classes: accuracy; exclusive classes: the largest margin, the heads sharing
  class-stratified folds; several labels per document: micro-F1): presence, where
  each head takes "nb" or "presence", whichever its folds prefer (each with its own
  C), or "tfidf" fitted with the squared hinge (LinearSVC's L2-SVM), each head at the
  C its folds prefer. The family is one decision because a tf-idf model's rules
  carry idf and norm their document, which presence rules do not.

The fits use LIBLINEAR's trust-region Newton method (`solver.fit_linear`,
method "tron") on the columns renumbered by decreasing document frequency, with the
subtrees of one training document folded into one feature per document, which
leaves the optimum unchanged.

With `separate_views`, the subtrees of a "chain+dependency" forest are split by view
(labels with the prefix "dep:" or without) and each view gets its own model (its own
naive Bayes ratios and cross-validated C); the rule list holds both, every weight and
intercept halved, so its margin is the mean of the two views' margins.

The model is a `RuleSet` (presence, log1p or tfidf rules) with an intercept per
head, matched and explained like boosted rules. Weights are stored halved so
that sigmoid(2F) is the logistic model's probability. A tfidf model keeps every
mined subtree as a rule (a zero weight included), since the document norm runs
over all of them; its idf is stored in each rule.
"""
import logging
import os
import time
from contextlib import contextmanager
from dataclasses import replace
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Type, Union

import numpy

from ._order import order_by_magnitude
from .classifier import RuleClassifier, encode_targets
from .features import PatternCodes, frequency_order, interpolate, nb_ratio, presence, scale_columns, tfidf_matrix
from .heads import SOLVER, TFIDF_LOSS, fit_heads
from .learner import MAX_PATTERN_SIZE_LIMIT, _Head
from .mining import mine_subtrees
from .selection import (DEFAULT_CS, SOLVER_CONSTRAINTS, HeadFit, Path, assemble_margins, class_folds, cv_folds,
                        fit_head, fold_split, make_path, platt)
from .solver import fit_linear, one_blas_thread
from ..models.rules import RuleSet
from ..threads import ThreadTeam
from ..exceptions import InvalidSettingError
from ..params import Boolean, Interval, Options, Text, rule
from ..trees.forest import DEPENDENCY_VIEW_PREFIX, Forest

logger = logging.getLogger(__name__)

FEATURES = ("auto", "nb", "presence", "log1p", "tfidf")
PRESENCE_C_RATIO = 0.1
TFIDF_C_RATIOS = (3.0, 10.0)
NB_BETAS = (0.25, 0.5, 1.0)
SELECTIONS = ("accuracy", "log_loss")
LINEAR_BACKENDS = (None, "local", "processes", "ray")
# max_pattern_size=None: subtrees of PATTERN_SIZE nodes, or of SHORT_PATTERN_SIZE in training trees of at most
# SHORT_DOCUMENT_NODES nodes on average (a sentence as a word chain), whose three-node subtrees recur too rarely to
# help (docs/results_default.md)
PATTERN_SIZE = 3
SHORT_PATTERN_SIZE = 2
SHORT_DOCUMENT_NODES = 32.0
# max_rules="auto": the shares of the total contribution (the sum of |w_t| x_t over the training documents) that the
# folds try, from the whole model down until the held-out accuracy falls more than PRUNE_TOLERANCE below the whole
# model's; the folds' fits stop at PRUNE_FIT_TOL_RATIO times the solver's tolerance (a ranking needs less)
PRUNE_SHARES = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.96, 0.97, 0.98, 0.99, 0.995, 0.998, 0.999, 1.0)
PRUNE_TOLERANCE = 0.002
PRUNE_FIT_TOL_RATIO = 10.0
# ... and only where the folds score this many documents: on fewer, one document outweighs the tolerance
PRUNE_MIN_SCORED = 1000


def pattern_size(X: Forest) -> int:
    """The largest subtree that `max_pattern_size=None` mines in the training trees X: `SHORT_PATTERN_SIZE` where
    they average at most `SHORT_DOCUMENT_NODES` nodes (their virtual roots included), else `PATTERN_SIZE`."""
    return SHORT_PATTERN_SIZE if X.n_nodes <= SHORT_DOCUMENT_NODES * len(X) else PATTERN_SIZE


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


class SubtreeLinearClassifier(RuleClassifier):
    """A regularized linear model over all frequent subtrees (NBSVM-style by default).

    The defaults are NBSVM's (Wang & Manning 2012) over subtrees, made to choose for
    themselves: presence of every subtree of up to three nodes (two in corpora of
    single sentences) in two or more training documents and of every one- or two-node
    subtree, logistic loss, and, on 3 cross-validation folds, one of two feature
    families for all classes: presence (per class, naive Bayes scaled at C = 1 with the
    interpolation `nb_beta` 0.25, 0.5 or 1, or plain at C = 0.1) or sublinear tf-idf
    with LinearSVC's squared hinge at C = 3 or 10. Naive Bayes scaling wins on small
    sentiment corpora, plain presence with stronger regularization on large ones, tf-idf
    on topic corpora (Reuters). The margin is Platt-scaled on the same folds'
    out-of-fold margins. Beyond 10,000 training documents one fold is enough
    (`cv_documents`). Settled on the dev splits of four corpora, 1,600 training
    documents each, and the shared generator's synthetic corpora
    (docs/results_default.md, docs/bench_default_learner.md).

    max_pattern_size (Optional[int]): Largest subtree, in nodes; None chooses it from the
        training trees: `SHORT_PATTERN_SIZE` (2) where they average at most
        `SHORT_DOCUMENT_NODES` (32) nodes, as single sentences do, else `PATTERN_SIZE` (3).
    min_support (int): Smallest number of training documents a subtree of more than
        `keep_rare_up_to` nodes occurs in.
    features (str): "auto" (on the cross-validation folds, the presence family, per
        class the better of "nb" at C and "presence" at `PRESENCE_C_RATIO` times C, or
        "tfidf" with the loss `TFIDF_LOSS` at each of `TFIDF_C_RATIOS` times C; the
        family that makes the task's decisions best on the out-of-fold margins), "nb"
        (naive Bayes scaled presence), "presence", "log1p" or "tfidf" (sublinear tf-idf,
        rows L2-normalized).
    loss (str): "logistic" or "squared_hinge" (L2-SVM).
    C (Optional[float]): Inverse regularization strength; None chooses it among
        `Cs` by `cv`-fold cross-validation on the training trees, per class.
    Cs (Sequence[float]): Candidates for C.
    l1_ratio (float): Share of L1 in the penalty (0 = L2).
    cv (int): Folds for choosing C and nb_beta and for calibrating.
    include_root_patterns (bool): Allow subtrees that contain the virtual root.
    positive_class (Optional[Any]): For two classes, the one whose margin is positive.
    max_cache_mb (int): Memory cap for mining.
    max_iter (int): Solver iterations.
    tol (float): Solver tolerance, relative to the gradient at zero weights.
    max_rules (Union[str, int, None]): "auto" (the default) keeps, per class, the
        subtrees of largest total contribution on the training trees (|w_t| times the
        sum of feature t over them: the number of documents containing t for presence)
        that make up the share of the total chosen on the cross-validation folds (the
        smallest of `PRUNE_SHARES` down to which the held-out accuracy stays within
        `PRUNE_TOLERANCE` of the whole model's, each fold's candidate fitted again from
        the final weights): the weights restricted to them, the calibration refitted on
        the restricted folds' margins (not with `separate_views` or `shard_documents`,
        nor where the folds score fewer than `PRUNE_MIN_SCORED` documents: these keep
        every subtree). A whole number k keeps the k subtrees of largest total
        contribution and refits their weights jointly with the same C. None keeps every
        subtree.
    nb_beta (Optional[float]): For "nb", the NBSVM interpolation w = (1 - beta) mean|w|
        + beta w of the fitted weights (1 keeps them as fitted); None chooses it among
        0.25, 0.5 and 1 on the folds that choose C (it costs no fit).
    separate_views (bool): Fit the word-chain and dependency subtrees of a
        "chain+dependency" forest as two models and average their margins (a forest
        with one view gets one model, as without this setting).
    calibrate (bool): Map each head's margin f to a f + b by Platt scaling fitted on
        out-of-fold margins of `cv`-fold cross-validation (the folds that choose C, or
        folds run for it when C is given), so that the probabilities are calibrated
        whatever the loss and the interpolation.
    selection (str): What the folds that choose C and nb_beta maximize: "accuracy"
        (ties: lower log-loss) or "log_loss" (the lowest out-of-fold log-loss after
        Platt scaling).
    keep_rare_up_to (int): Subtrees of at most this many nodes are features even when
        they occur in fewer than `min_support` training documents (NBSVM keeps every
        1-2-gram); 0 applies `min_support` to every subtree.
    cv_documents (Optional[int]): Fit only the first cross-validation folds that hold out
        at least this many training documents together (all `cv` folds on small corpora,
        one of them on large ones, where one held-out fold already measures the
        candidates and fits the calibration); None fits every fold.
    shard_documents (Optional[int]): Fit on the training documents in shards of this many
        consecutive documents, each fit adding the shards' loss, gradient and Hessian products in
        shard order (`learning.sharded`); with backend "ray" and several workers the shards are
        held by Ray actors (a run of consecutive shards each) and every fit runs in this process
        on their sums, so the fits use the cluster's memory and cores. The model is the same, bit
        for bit, for any number of workers and backend, and differs from that of None (whole
        matrices, sums grouped otherwise) in the last bits. Not with `separate_views` or
        a whole number of `max_rules`.
    n_workers (int): Workers that share the mining (by root label, from 2,000 training
        documents per worker) and the fits (each class's cross-validation folds and
        final fit; a fit that runs alone multiplies its large matrices on `n_workers`
        threads); the model is the same, bit for bit, for any number and backend. One
        worker, and models with `separate_views`, fit in this process.
    backend (Optional[str]): Where the workers run: None or "processes" (worker
        processes on this machine), "ray" (Ray actors, each holding the feature
        matrix once) or "local" (one worker, in-process).
    ray_address (Optional[str]): For backend "ray": the cluster to connect to; None
        starts a local Ray (or uses RAY_ADDRESS / a running connection).
    """

    positive_class: Optional[Any] = None
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
            f"use a whole number of nodes from 0 to {MAX_PATTERN_SIZE_LIMIT} (0 applies min_support to every subtree)")),
        "n_workers": rule(Interval("int", 1, 1024), hint="use a whole number of worker processes from 1 to 1024"),
        "backend": rule(Options(*LINEAR_BACKENDS), hint=(
            f"use {' or '.join(map(repr, LINEAR_BACKENDS))} for the subtree-linear learner")),
        "ray_address": rule(Text(), None, hint="use a Ray cluster address such as 'ray://host:10001', or None"),
        "selection": rule(Options(*SELECTIONS)),
        "cv_documents": rule(Interval("int", 1, None), None, hint=(
            "use a whole number of held-out documents >= 1, or None to fit every cross-validation fold")),
        "separate_views": rule(Boolean()),
        "shard_documents": rule(Interval("int", 1, None), None, hint=(
            "use a whole number of documents per shard >= 1, or None to fit on whole matrices")),
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

    def __init__(
        self,
        *,
        max_pattern_size: Optional[int] = None,
        min_support: int = 2,
        features: str = "auto",
        loss: str = "logistic",
        C: Optional[float] = 1.0,
        Cs: Sequence[float] = DEFAULT_CS,
        l1_ratio: float = 0.0,
        cv: int = 3,
        include_root_patterns: bool = False,
        positive_class: Optional[Any] = None,
        max_cache_mb: int = 4096,
        max_iter: int = 1000,
        tol: float = 1e-3,
        max_rules: Union[str, int, None] = "auto",
        nb_beta: Optional[float] = None,
        separate_views: bool = False,
        calibrate: bool = True,
        selection: str = "accuracy",
        keep_rare_up_to: int = 2,
        cv_documents: Optional[int] = 10000,
        shard_documents: Optional[int] = None,
        n_workers: int = 1,
        backend: Optional[str] = None,
        ray_address: Optional[str] = None,
    ) -> None:
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
        self.separate_views = separate_views
        self.calibrate = calibrate
        self.selection = selection
        self.keep_rare_up_to = keep_rare_up_to
        self.cv_documents = cv_documents
        self.shard_documents = shard_documents
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
        if self.separate_views and (self.features == "tfidf" or isinstance(self.max_rules, int)):
            setting = "features='tfidf'" if self.features == "tfidf" else f"max_rules={self.max_rules!r}"
            raise InvalidSettingError(f"separate_views=True cannot be combined with {setting}: a tf-idf row is "
                                      "normalized over all subtrees, and max_rules ranks them jointly; use one of the "
                                      "two settings", setting="separate_views", value=True)
        if self.shard_documents is not None and (self.separate_views or isinstance(self.max_rules, int)):
            setting = "separate_views=True" if self.separate_views else f"max_rules={self.max_rules!r}"
            raise InvalidSettingError(f"shard_documents={self.shard_documents!r} cannot be combined with {setting}, "
                                      "whose fits use whole matrices; drop shard_documents or that setting",
                                      setting="shard_documents", value=self.shard_documents)

    def _transform(self, counts: Any) -> Tuple[Any, Optional[numpy.ndarray]]:
        """The feature matrix of a count matrix (CSC, its structure shared; CSR for "tfidf"), and the idf of each
        column for "tfidf"."""
        from scipy.sparse import csc_matrix

        counts = counts.tocsc()
        if self.features == "tfidf":
            T, idf = tfidf_matrix(counts)
            return T.tocsr(), idf
        if self.features != "log1p":
            return presence(counts, self._threads), None
        data = numpy.log1p(counts.data, dtype=numpy.float64)
        return csc_matrix((data, counts.indices, counts.indptr), shape=counts.shape), None

    def fit(self, X: Forest, y: Sequence[Any]) -> "SubtreeLinearClassifier":
        """Mine the subtrees of X and fit one linear model per head.

        X (Forest): The training trees.
        y (Sequence): One class per tree, or a collection of classes per tree.
        RETURNS (SubtreeLinearClassifier): self.
        """
        self.validate_params()
        if not isinstance(X, Forest):
            raise TypeError(f"X must be a Forest, got {type(X).__name__}; build one with Forest.from_trees or read_bact")
        if len(X) == 0:
            raise ValueError("Cannot train on an empty set of trees.")
        if len(y) != len(X):
            raise ValueError(f"Got {len(y)} labels for {len(X)} trees.")
        self.classes_, self.multilabel_, heads, targets = encode_targets(y, self._positive)
        self.heads_ = [_Head(str(h), numpy.zeros(0)) for h in heads]
        self.shard_holders_: List[str] = []
        clock = time.process_time()
        self.max_pattern_size_ = pattern_size(X) if self.max_pattern_size is None else self.max_pattern_size
        logger.info("mining the subtrees of up to %d nodes in %d trees", self.max_pattern_size_, len(X))
        # "auto" on one view makes its matrices from the columns in frequency order (`frequency_order`): mined so
        auto = self.features == "auto" and not self.separate_views
        mined = mine_subtrees(X, max_pattern_size=self.max_pattern_size_, min_support=self.min_support,
                              include_root_patterns=self.include_root_patterns, max_cache_mb=self.max_cache_mb,
                              keep_rare_up_to=self.keep_rare_up_to, n_workers=self.n_workers, backend=self.backend,
                              ray_address=self.ray_address, by_frequency=auto)
        counts, codes = mined[:2]
        counts_by_frequency = auto
        if not codes:
            raise ValueError("The training trees contain no subtree to learn from (are the documents empty, or is "
                             "min_support larger than the number of documents?).")
        self.timings_ = {"mine": time.process_time() - clock}
        logger.info("mined %d subtrees in %.1f CPU s; fitting %d head(s)", len(codes), self.timings_["mine"],
                    len(self.heads_))
        clock = time.process_time()
        views = self._views(codes)
        F, idf = (None, None) if self.features == "auto" and len(views) == 1 else self._transform(counts)
        self.timings_["features"] = time.process_time() - clock
        clock = time.process_time()
        self.fit_info_: List[Dict[str, Any]] = []
        fitted, tfidf = [], self.features == "tfidf"
        kept: List[Optional[numpy.ndarray]] = [None] * len(targets)
        pruning: List[Optional[Dict[str, Any]]] = [None] * len(targets)
        if len(views) > 1:
            heads = [self._fit_views(F, t, views) for t in targets]
        else:
            T = None
            if self.features == "auto":
                order, ordered = (mined[2], counts) if auto else frequency_order(counts.tocsc())
                by_frequency = self._transform(ordered)[0]
                T, idf_by_frequency = tfidf_matrix(ordered, self._threads)
                del ordered
            else:
                order, by_frequency = frequency_order(F)
            with self._shards(by_frequency, T) as shards:
                fits, on_T = self._fit_heads(by_frequency, targets, T, shards)
            if self.max_rules == "auto" and self.shard_documents is None:
                fits, masks, chosen_shares = self._prune(T if on_T else by_frequency, targets, fits, on_T,
                                                         tfidf or on_T)
                kept = [None if k is None else numpy.flatnonzero(k[order]) for k in masks]
                pruning = list(chosen_shares)
            heads = [replace(fit, weights=fit.weights[order]) for fit in fits]
            del by_frequency, T
            tfidf = tfidf or on_T
            if on_T:
                idf = idf_by_frequency[order]
        for head, t, fit, keep, pruned in zip(self.heads_, targets, heads, kept, pruning):
            w, c, chosen, nb = fit.weights, fit.intercept, fit.C, fit.nb
            if isinstance(self.max_rules, int) and numpy.count_nonzero(w) > self.max_rules:
                if counts_by_frequency:
                    counts, counts_by_frequency = counts[:, order].astype(numpy.float64), False
                if F is None and not tfidf:
                    F = self._transform(counts)[0]
                w, c, keep = self._refit_top(counts if tfidf else F, t, w, chosen, nb, tfidf)
            fitted.append((w, c, keep))
            self.fit_info_.append({"head": head.name, "features": self._chosen_features(nb, tfidf), "C": chosen,
                                   "cv_accuracy": fit.cv_accuracy, "nonzero": int(numpy.count_nonzero(w)),
                                   "platt": fit.platt, "nb_beta": fit.nb_beta})
            if pruned is not None:
                self.fit_info_[-1]["pruned"] = pruned
        del F, counts
        self.timings_["fit"] = time.process_time() - clock
        clock = time.process_time()
        self.rules_ = self._rules(codes, fitted, idf if tfidf else None)
        self.timings_["rules"] = time.process_time() - clock
        self.n_features_ = len(codes)
        return self

    def _rules(self, codes: "PatternCodes", fitted: List[Tuple[numpy.ndarray, float, Optional[numpy.ndarray]]],
               idf: Optional[numpy.ndarray]) -> RuleSet:
        """The rule table of the fitted heads: weights halved (sigmoid(2F) is the model's probability), each
        head's nonzero weights by decreasing magnitude (ties: mined order); for tf-idf every kept subtree, in
        mined order, its idf as the rule's b."""
        value = "tfidf" if idf is not None else ("log1p" if self.features == "log1p" else "stump")
        columns = []
        with ThreadTeam(self._threads) as team:
            for w, c, keep in fitted:
                if idf is None:
                    nonzero = numpy.flatnonzero(w)
                    values = numpy.ascontiguousarray(w[nonzero], dtype=numpy.float64)
                    by_magnitude = order_by_magnitude(values, team.map, self._threads)
                    if by_magnitude is None:  # a weight that is not finite: RuleSet.from_arrays names it
                        by_magnitude = numpy.argsort(-numpy.abs(values), kind="stable")
                    order = nonzero[by_magnitude]
                    b = numpy.zeros(len(order))
                else:
                    order = numpy.arange(len(codes)) if keep is None else numpy.asarray(keep)
                    b = idf[order]
                columns.append((order.astype(numpy.int64), numpy.ones(len(order), dtype=numpy.int32), w[order] / 2.0,
                                b))
        return RuleSet.from_arrays([h.name for h in self.heads_], algorithm=f"linear-{self.features}",
                                   include_root_patterns=self.include_root_patterns, value=value,
                                   strings=codes.strings, depth=codes.depth, label=codes.label,
                                   code_start=codes.start, rules=columns, intercepts=[c / 2.0 for _, c, _ in fitted],
                                   distinct=True, threads=self._threads)

    def _views(self, codes: PatternCodes) -> List[numpy.ndarray]:
        """The columns of each view (word chains, then dependency trees) when views are fitted apart, else all."""
        if not self.separate_views:
            return [numpy.arange(len(codes))]
        dep = codes.has_label_prefix(DEPENDENCY_VIEW_PREFIX)
        views = [numpy.flatnonzero(~dep), numpy.flatnonzero(dep)]
        return [v for v in views if len(v)]

    @property
    def _threads(self) -> int:
        """Threads for this process's own large steps (the idle workers' cores)."""
        return min(self.n_workers, os.cpu_count() or 1)

    @property
    def _criterion(self) -> str:
        """`choose_C`'s criterion for this model's `selection`."""
        return "calibrated_log_loss" if self.selection == "log_loss" else "accuracy"

    def _chosen_features(self, nb: Any, tfidf: bool = False) -> Any:
        """The feature map a head (or each of its views) was fitted on, for `fit_info_`."""
        if isinstance(nb, list):
            return [self._chosen_features(v) for v in nb]
        if self.features != "auto":
            return self.features
        return "tfidf" if tfidf else ("nb" if nb else "presence")

    def _paths(self, tfidf: bool = False) -> List[Path]:
        """The candidates the folds choose among: for "auto", naive Bayes scaled presence at C (or each of Cs)
        with every interpolation of `nb_beta`, then plain presence at `PRESENCE_C_RATIO` times C, then (with
        `tfidf`) tf-idf at each of `TFIDF_C_RATIOS` times C."""
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

    def _fit_heads(self, F: Any, targets: Sequence[numpy.ndarray], T: Any = None,
                   shards: Any = None) -> Tuple[List[HeadFit], bool]:
        """Every target's head (`heads.fit_heads`)."""
        return fit_heads(self, F, targets, T, shards)

    @contextmanager
    def _shards(self, F: Any, T: Any) -> Iterator[Any]:
        """With `shard_documents`, the shards of F and T for every fit (`learning.sharded`): held by Ray actors with
        backend "ray" and several workers (their nodes in `shard_holders_`), else here; None without it."""
        if self.shard_documents is None:
            yield None
            return
        from .sharded import Shards, make_shards

        shards = make_shards({"F": F, "T": T}, self.shard_documents)
        on_ray = self.backend == "ray" and self.n_workers > 1
        group = Shards(shards, self.n_workers if on_ray else 1, "ray" if on_ray else "local", self.ray_address)
        del shards
        self.shard_holders_ = group.node_ids
        try:
            yield group
        finally:
            group.close()

    def _fit_head(self, F: Any, y: numpy.ndarray, paths: Optional[List[Path]] = None,
                  loss: Optional[str] = None) -> HeadFit:
        """`fit_head` with this model's settings (paths: candidates instead of the model's; loss: instead of the
        model's)."""
        return fit_head(F, y, C=None, Cs=(), cv=self.cv, l1_ratio=self.l1_ratio, loss=loss or self.loss,
                        max_iter=self.max_iter, tol=self.tol, calibrate=self.calibrate, criterion=self._criterion,
                        paths=self._paths() if paths is None else paths, method=SOLVER, max_scored=self.cv_documents)

    def _fit_views(self, F: Any, y: numpy.ndarray, views: List[numpy.ndarray]) -> HeadFit:
        """One model per view's columns; weights and intercept averaged over the views, the rest listed by view."""
        w, c, fits = numpy.zeros(F.shape[1]), 0.0, []
        for cols in views:
            fit = self._fit_head(F[:, cols].tocsr(), y)
            w[cols] = fit.weights / len(views)
            c += fit.intercept / len(views)
            fits.append(fit)
        return HeadFit(w, c, *([getattr(fit, name) for fit in fits] for name in ("C", "cv_accuracy", "platt", "nb_beta",
                                                                                   "nb")))

    def _refit_top(self, F: Any, y: numpy.ndarray, w: numpy.ndarray, C: float, nb: bool,
                   tfidf: bool) -> Tuple[numpy.ndarray, float, numpy.ndarray]:
        """The weights refitted on the `max_rules` columns of largest total contribution (ties: first column),
        and those columns. For "tfidf" F holds the counts, and the kept columns' tf-idf is recomputed (each
        row normalized over the kept subtrees), fitted with the tf-idf family's loss when "auto" chose it."""
        df = numpy.diff(F.tocsc().indptr)
        contribution = numpy.abs(w) * df
        keep = numpy.sort(numpy.argsort(-contribution, kind="stable")[: self.max_rules])
        X = F[:, keep].tocsr()
        if tfidf:
            X = tfidf_matrix(X.tocsc())[0].tocsr()
        loss = TFIDF_LOSS if tfidf and self.features == "auto" else self.loss
        fit = self._fit_head(X, y, [make_path(nb, [C], self.nb_beta if nb else 1.0, NB_BETAS)], loss)
        out = numpy.zeros_like(w)
        out[keep] = fit.weights
        return out, fit.intercept, keep

    def _prune(self, X: Any, targets: Sequence[numpy.ndarray], fits: List[HeadFit], on_T: bool,
               tfidf: bool) -> Tuple[List[HeadFit], List[Optional[numpy.ndarray]], List[Dict[str, Any]]]:
        """`max_rules="auto"`: each head restricted to the subtrees that make up the share of its total contribution
        chosen on the cross-validation folds, with its calibration refitted on the restricted folds' margins.

        On each scored fold the head's candidate is fitted again on the other folds (started from the final
        weights), its columns ranked by contribution (|w_t| times the sum of column t over those documents), and the
        held-out margins computed at every share of `PRUNE_SHARES` (`level_margins`). Going down from the whole
        model, the last share before the held-out accuracy (of the calibrated margins) falls more than
        `PRUNE_TOLERANCE` below the whole model's is kept for the final weights, ranked the same way over all
        training documents. A head whose folds score fewer than `PRUNE_MIN_SCORED` documents keeps every
        subtree.

        X (scipy.sparse matrix): The matrix the heads were fitted on (columns in the fits' order).
        targets (Sequence[numpy.ndarray]): Each head's {-1, +1} labels.
        fits (List[HeadFit]): The heads' fits.
        on_T (bool): Whether the fits are the tf-idf family's of "auto".
        tfidf (bool): Whether the rules are tf-idf rules (each document normalized over the kept subtrees).
        RETURNS (Tuple[List[HeadFit], List[Optional[numpy.ndarray]], List[Dict[str, Any]]]): The restricted fits,
            each one's kept columns (None: all), and what each pruning chose.
        """
        exclusive = not self.multilabel_ and len(targets) > 1
        if self.features == "auto" and exclusive:
            folds = [class_folds(targets, self.cv, self.cv_documents)] * len(targets)
        else:
            folds = [cv_folds(t, self.cv, self.cv_documents) for t in targets]
        loss = TFIDF_LOSS if on_T else self.loss
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
            a, b = fit.platt if fit.platt is not None else (1.0, 0.0)
            blocks = []
            for k in range(int(f.max()) + 1):
                Xtr, Xte = fold_split(X, f, k, self._threads)
                ytr = y[f != k]
                scale = nb_ratio(Xtr, ytr) if fit.nb else numpy.ones(X.shape[1])
                start = numpy.divide(fit.weights / a, scale, out=numpy.zeros(X.shape[1]), where=scale != 0)
                with one_blas_thread():
                    w, c = fit_linear(scale_columns(Xtr, scale) if fit.nb else Xtr, ytr, C=fit.C,
                                      l1_ratio=self.l1_ratio, loss=loss, max_iter=self.max_iter, tol=PRUNE_FIT_TOL_RATIO * self.tol,
                                      init=numpy.append(start, (fit.intercept - b) / a), method=SOLVER,
                                      threads=self._threads)
                if fit.nb:
                    w = interpolate(w, fit.nb_beta) * scale
                level, _ = share_levels(numpy.abs(w) * column_sums(Xtr), PRUNE_SHARES)
                del Xtr
                blocks.append(level_margins(Xte, w, c, level, len(PRUNE_SHARES), tfidf))
            oof, scored = assemble_margins(blocks, f), y[f >= 0]
            accuracy = [float(numpy.mean((_decided(m, scored, self.calibrate) > 0) == (scored > 0))) for m in oof]
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
            w, c = numpy.where(keep, fit.weights / a, 0.0), (fit.intercept - b) / a
            ab = platt(oof[chosen], scored) if self.calibrate else None
            if ab is not None and ab[0] > 0:
                w, c = w * ab[0], c * ab[0] + ab[1]
            else:
                ab = None
            out.append(replace(fit, weights=w, intercept=c, platt=ab))
            kept.append(keep)
        return out, kept, info


def _decided(f: numpy.ndarray, y: numpy.ndarray, calibrate: bool) -> numpy.ndarray:
    """Margins f as a head decides by them: Platt-scaled on (f, y) when calibrating and the fit rises with y."""
    if not calibrate:
        return f
    a, b = platt(f, y)
    return a * f + b if a > 0 else f
