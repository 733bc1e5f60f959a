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
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple, Type

import numpy

from ._sparse import copy_columns, fill_merged_shard, merge_levels, order_by_magnitude
from .classifier import RuleClassifier, _label_rank, encode_targets
from .features import PatternCodes, frequency_order, order_by_frequency, presence, tfidf_matrix
from .learner import MAX_PATTERN_SIZE_LIMIT, _Head
from .selection import (DEFAULT_CS, SOLVER_CONSTRAINTS, HeadFit, Path, all_candidates, assemble_margins,
                        candidate_costs, class_folds, cv_folds, final_fit, finish_head, first_lowest, fit_head,
                        fold_margins, fold_split, make_path, needs_choice, path_scores, platt)
from .solver import one_blas_thread
from ..models.rules import RuleSet
from .tasks import run_tasks
from ..threads import ThreadTeam
from ..exceptions import InvalidSettingError
from ..params import Boolean, Interval, Options, Text, rule
from ..trees.forest import DEPENDENCY_VIEW_PREFIX, Forest

logger = logging.getLogger(__name__)

FEATURES = ("auto", "nb", "presence", "log1p", "tfidf")
PRESENCE_C_RATIO = 0.1
TFIDF_C_RATIOS = (3.0, 10.0)
TFIDF_LOSS = "squared_hinge"
SOLVER = "tron"
NB_BETAS = (0.25, 0.5, 1.0)
SELECTIONS = ("accuracy", "log_loss")
LINEAR_BACKENDS = (None, "local", "processes", "ray")
# the merged pattern table (parent, depth, label, size), and where each pattern's documents lie (shard, start, length)
PatternTable = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray, numpy.ndarray]
Places = Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]
# max_pattern_size=None: subtrees of PATTERN_SIZE nodes, or of SHORT_PATTERN_SIZE in training trees of at most
# SHORT_DOCUMENT_NODES nodes on average (a sentence as a word chain), whose three-node subtrees recur too rarely to
# help (docs/results_default.md)
PATTERN_SIZE = 3
SHORT_PATTERN_SIZE = 2
SHORT_DOCUMENT_NODES = 32.0


def pattern_size(X: Forest) -> int:
    """The largest subtree that `max_pattern_size=None` mines in the training trees X: `SHORT_PATTERN_SIZE` where
    they average at most `SHORT_DOCUMENT_NODES` nodes (their virtual roots included), else `PATTERN_SIZE`."""
    return SHORT_PATTERN_SIZE if X.n_nodes <= SHORT_DOCUMENT_NODES * len(X) else PATTERN_SIZE


def mine_subtrees(X: Forest, *, max_pattern_size: int, min_support: int, include_root_patterns: bool,
                  max_cache_mb: int, keep_rare_up_to: int = 0, n_workers: int = 1, backend: Optional[str] = None,
                  ray_address: Optional[str] = None, min_shard_documents: int = 2000,
                  by_frequency: bool = False) -> Tuple[Any, ...]:
    """Every subtree of X up to `max_pattern_size` nodes in >= `min_support` documents, and every subtree of
    at most `keep_rare_up_to` nodes that occurs at all.

    n_workers (int): Workers that mine the subtrees of separate root labels (balanced by
        occurrences, as boosting splits its search); their patterns are put back in the
        one miner's order, so the result is the same for any number of workers. The
        split is by root label, not by document: a document shard cannot tell which of
        its rare subtrees reach `min_support` overall, so it would have to keep them all.
    backend (Optional[str]): Where the workers run (see `SubtreeLinearClassifier`).
    ray_address (Optional[str]): For backend "ray", the cluster.
    min_shard_documents (int): Use at most one worker per this many documents (a small
        forest is mined here, faster than workers start).
    by_frequency (bool): Give the count matrix's columns in `frequency_order` (copied from the
        miners in that order, once), its counts as the miners' integers (uint8 when every count
        fits, else int32), and the `inverse` of that order as well.
    RETURNS (Tuple): The (n_docs, n_subtrees) count matrix (CSC, float64) and each subtree's pattern
        code, in the miner's order; with `by_frequency` the matrix's columns in frequency order, and
        `inverse` (the column of each mined subtree).
    """
    from scipy.sparse import csc_matrix

    from .backends import assign_root_labels

    rare = min(keep_rare_up_to, max_pattern_size) if min_support > 1 else 0
    vocab = X.vocab.to_list()
    settings = dict(max_pattern_size=max_pattern_size, min_support=min_support, rare_up_to=rare,
                    include_root=include_root_patterns, max_cache_bytes=int(max_cache_mb) << 20)
    forest = (X.labels, X.parents, X.offsets, _label_rank(vocab))
    n_workers = min(n_workers, max(1, len(X) // max(1, min_shard_documents)))
    if n_workers == 1:
        shards = [_mine_shard(forest, settings, None)]
    else:
        owners = assign_root_labels(X.labels, X.parents, len(vocab), n_workers, include_root_patterns)
        # the last shard sends the roots' documents: first, so that on processes this process mines it
        done = run_tasks(_Miner, (forest, settings, owners, n_workers), [("mine", s, None) for s in
                         reversed(range(n_workers))], n_workers, backend, ray_address, "Mining worker", _describe)
        shards = [done[("mine", s, None)] for s in range(n_workers)]
    places, table = merged_columns(shards)
    codes = PatternCodes.from_tree(*table, vocab)
    order, inverse = order_by_frequency(places[2]) if by_frequency else (numpy.arange(len(codes)), None)
    dtype: Type[numpy.generic] = numpy.float64
    if by_frequency:
        dtype = numpy.uint8 if all(s["matrix"][2].dtype == numpy.uint8 for s in shards) else numpy.int32
    matrix = csc_matrix(gather_columns(shards, places, order, min(n_workers, os.cpu_count() or 1), dtype)[::-1],
                        shape=(len(X), len(codes)))
    return (matrix, codes) if inverse is None else (matrix, codes, inverse)


def _mine_shard(forest: Tuple[numpy.ndarray, ...], settings: Dict[str, Any], owned: Optional[numpy.ndarray],
                with_roots: bool = True) -> Dict[str, Any]:
    """Every pattern of the root labels `owned` (None: of all), as `merged_columns` takes it; the roots' documents
    only `with_roots` (every shard holds them; one sends them), counts narrowed to bytes when they fit."""
    from ._mine import SearchSpace

    space = SearchSpace(*forest, **settings)
    if owned is not None:
        space.own_root_labels(owned)
    space.expand_all()
    (indptr, docs, counts), table = space.pattern_matrix(), space.pattern_table()
    del space
    n_roots = int(numpy.count_nonzero(table[0] < 0))
    if owned is not None and not with_roots:
        end = int(indptr[n_roots])
        indptr = numpy.concatenate([numpy.zeros(n_roots + 1, dtype=indptr.dtype), indptr[n_roots + 1:] - end])
        docs, counts = docs[end:], counts[end:]
    if len(counts) and int(counts.max()) < 256:
        counts = counts.astype(numpy.uint8)
    return {"matrix": (indptr, docs, counts), "table": table, "n_roots": n_roots, "with_roots": with_roots}


def merged_columns(shards: Sequence[Dict[str, Any]]) -> Tuple[Places, PatternTable]:
    """Where each pattern of the one-miner order lies among the shards, and the merged pattern table.

    Every miner holds every root (single-node pattern) first, in the same order, and extends
    patterns level by level: the patterns of n + 1 nodes follow those of n nodes, ordered by
    their parent's place, siblings in the order of their miner. Each parent lives in one
    miner, so the same rule orders the union (`merge_levels`, a k-way merge per level).

    shards (Sequence[Dict[str, Any]]): `_mine_shard`'s results, one of them with the roots' documents.
    RETURNS (Tuple[Places, PatternTable]): Per merged pattern, the shard that holds
        its documents, where they start in that shard's arrays and how many there are (for `gather_columns`); and
        the table (parent, depth, label, size).
    """
    if len(shards) == 1:
        indptr = shards[0]["matrix"][0]
        return (numpy.zeros(len(indptr) - 1, dtype=numpy.int64), indptr[:-1].astype(numpy.int64),
                numpy.diff(indptr).astype(numpy.int64)), shards[0]["table"]
    R = shards[0]["n_roots"]
    with_roots = next(k for k, s in enumerate(shards) if s["with_roots"])
    tables = [s["table"] for s in shards]
    indptrs = [numpy.ascontiguousarray(s["matrix"][0], dtype=numpy.int64) for s in shards]
    base = numpy.zeros(len(shards) + 1, dtype=numpy.int64)
    numpy.cumsum([len(t[0]) - R for t in tables], out=base[1:])
    # the parents and sizes of the patterns beyond the roots of every shard, one after the other: shard k's from base[k]
    parents, sizes = (numpy.concatenate([t[c][R:] for t in tables]).astype(numpy.int32, copy=False) for c in (0, 3))
    position, owner, merged_parent = merge_levels(parents, sizes, base, R)
    del parents, sizes
    total = R + int(base[-1])
    parent, depth, label, size = (numpy.empty(total, dtype=numpy.int32) for _ in range(4))
    table = (parent, depth, label, size)
    shard, start, length = (numpy.empty(total, dtype=numpy.int64) for _ in range(3))
    places = (shard, start, length)
    for c in range(4):
        table[c][:R] = tables[0][c][:R]
    table[0][R:] = merged_parent
    del merged_parent
    roots = indptrs[with_roots][: R + 1]
    places[0][:R] = with_roots
    places[0][R:] = owner
    places[1][:R] = roots[:-1]
    places[2][:R] = numpy.diff(roots)
    for k, t in enumerate(tables):
        depth_k, label_k, size_k = (numpy.ascontiguousarray(t[c], dtype=numpy.int32) for c in (1, 2, 3))
        fill_merged_shard(owner, position, int(base[k]), k, R, depth_k, label_k, size_k, indptrs[k], depth, label,
                          size, start, length)
    return places, table


def gather_columns(shards: Sequence[Dict[str, Any]], places: Tuple[numpy.ndarray, ...], order: numpy.ndarray,
                   threads: int = 1, dtype: Any = numpy.float64) -> Tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
    """The CSC arrays (indptr, docs, counts of `dtype`: float64, int32, or uint8 from uint8 shards) of the merged
    patterns `order` (`merged_columns`' places), copied from the shards by `copy_columns`, a shard at a time on
    `threads` threads."""
    owner, starts, lengths = places
    order = numpy.ascontiguousarray(order, dtype=numpy.int64)
    indptr = numpy.zeros(len(order) + 1, dtype=numpy.int64)
    numpy.cumsum(lengths[order], out=indptr[1:])
    docs = numpy.empty(int(indptr[-1]), dtype=numpy.int32)
    counts = numpy.empty(int(indptr[-1]), dtype=dtype)

    def copy(k: int) -> None:
        copy_columns(order, owner, k, starts, lengths, indptr, shards[k]["matrix"][1], shards[k]["matrix"][2], docs,
                     counts)

    with ThreadTeam(threads) as team:
        team.map(copy, range(len(shards)))
    return indptr, docs, counts


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
    max_rules (Optional[int]): Keep at most this many rules per class: after the fit
        over all subtrees, the subtrees with the largest total contribution on the
        training trees (|w_t| times the number of documents containing t) are kept
        and their weights refitted jointly with the same C. None keeps every subtree.
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
        `max_rules`.
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
        "max_rules": rule(Interval("int", 1, None), None, hint=(
            "use a whole number of rules >= 1, or None to keep every subtree")),
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
        max_rules: Optional[int] = None,
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
        if self.separate_views and (self.features == "tfidf" or self.max_rules is not None):
            setting = "features='tfidf'" if self.features == "tfidf" else f"max_rules={self.max_rules!r}"
            raise InvalidSettingError(f"separate_views=True cannot be combined with {setting}: a tf-idf row is "
                                      "normalized over all subtrees, and max_rules ranks them jointly; use one of the "
                                      "two settings", setting="separate_views", value=True)
        if self.shard_documents is not None and (self.separate_views or self.max_rules is not None):
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
            heads = [replace(fit, weights=fit.weights[order]) for fit in fits]
            del by_frequency, T
            tfidf = tfidf or on_T
            if on_T:
                idf = idf_by_frequency[order]
        for head, t, fit in zip(self.heads_, targets, heads):
            w, c, chosen, nb, keep = fit.weights, fit.intercept, fit.C, fit.nb, None
            if self.max_rules is not None and numpy.count_nonzero(w) > self.max_rules:
                if counts_by_frequency:
                    counts, counts_by_frequency = counts[:, order].astype(numpy.float64), False
                if F is None and not tfidf:
                    F = self._transform(counts)[0]
                w, c, keep = self._refit_top(counts if tfidf else F, t, w, chosen, nb, tfidf)
            fitted.append((w, c, keep))
            self.fit_info_.append({"head": head.name, "features": self._chosen_features(nb, tfidf), "C": chosen,
                                   "cv_accuracy": fit.cv_accuracy, "nonzero": int(numpy.count_nonzero(w)),
                                   "platt": fit.platt, "nb_beta": fit.nb_beta})
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
        """Every target's head, and whether they are fitted on the tf-idf matrix T (CSC, the columns of F)
        rather than on F: the fits of each fold's candidate paths and the final fits as tasks of `_run_fits`.
        With T, the folds choose the feature family for all heads together, then each head's candidate within
        it. With `selection` "accuracy", the family whose heads' best candidates (by `candidate_costs`) make the
        task's decisions best on the out-of-fold margins (Platt-scaled when calibrating): for exclusive classes
        the most documents right by the largest margin (the heads share `class_folds`), for several labels per
        document the highest micro-F1 over (document, class) pairs, for two classes the most right; then, and
        for "log_loss", the lowest total of the heads' costs; ties: presence."""
        paths = self._paths(tfidf=T is not None)
        cands = all_candidates(paths)
        exclusive = not self.multilabel_ and len(targets) > 1
        folds: List[Optional[numpy.ndarray]] = [None] * len(targets)
        fold_sets = list(range(len(targets)))  # which heads share their folds (and so their fold splits)
        if needs_choice(paths, self.calibrate):
            if T is not None and exclusive:
                folds, fold_sets = [class_folds(targets, self.cv, self.cv_documents)] * len(targets), [0] * len(targets)
            else:
                folds = [cv_folds(t, self.cv, self.cv_documents) for t in targets]
        fit = dict(l1_ratio=self.l1_ratio, loss=self.loss, max_iter=self.max_iter, tol=self.tol, method=SOLVER)
        tasks: List[Tuple[Any, ...]] = [("fold", h, (k, p)) for h, f in enumerate(folds) if f is not None
                                        for k in range(int(f.max()) + 1) for p in range(len(paths))]
        if self.n_workers > 1:
            # the paths of most fits first, so that the workers' last tasks are short ones
            tasks.sort(key=lambda t: -len(paths[t[2][1]].Cs))
        if len(cands) == 1:
            tasks += [("final", h, cands[0]) for h in range(len(targets))]
        logger.info("%d head(s), %d candidate(s), %d fit task(s) on %d worker(s)", len(targets), len(cands),
                    len(tasks), self.n_workers)
        job = dict(F=F, T=T, targets=targets, folds=folds, fold_sets=fold_sets, paths=paths, fit=fit, shards=shards)
        done = self._run_fits(tasks, job)
        if folds[0] is None:
            return [finish_head(done[("final", h, cands[0])], cands[0], None, None, None, self.calibrate)
                    for h in range(len(targets))], cands[0].tfidf
        scored = []
        for h, t in enumerate(targets):
            f = folds[h]
            assert f is not None
            blocks = [numpy.concatenate([done[("fold", h, (k, p))] for p in range(len(paths))])
                      for k in range(int(f.max()) + 1)]
            oof = assemble_margins(blocks, f)
            scored.append((oof, t[f >= 0], *candidate_costs(oof, t[f >= 0], self._criterion)))

        families = sorted({c.tfidf for c in cands})
        members = {family: [k for k, cand in enumerate(cands) if cand.tfidf == family] for family in families}
        best = {family: [members[family][first_lowest([costs[k] for k in members[family]])]
                         for _, _, costs, _ in scored] for family in families}

        def total(family: bool) -> Tuple[float, ...]:
            summed = tuple(map(sum, zip(*(costs[k] for (_, _, costs, _), k in zip(scored, best[family])))))
            if self._criterion != "accuracy" or not (exclusive or self.multilabel_):
                return summed
            margins = [_calibrated(oof[k], y, self.calibrate) for (oof, y, _, _), k in zip(scored, best[family])]
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
        chosen = [(cands[k], path_scores(paths, cands[k], accuracy), oof[k], y)
                  for (oof, y, _, accuracy), k in zip(scored, best[family])]
        if len(cands) > 1:
            done.update(self._run_fits([("final", h, c[0]) for h, c in enumerate(chosen)], job))
        return [finish_head(done[("final", h, c[0])], *c, self.calibrate) for h, c in enumerate(chosen)], family

    def _run_fits(self, tasks: List[Tuple[Any, ...]], job: Dict[str, Any]) -> Dict[Tuple[Any, ...], Any]:
        """The fit tasks' results on this model's workers (`tasks.run_tasks`). With shards held by Ray actors every
        task runs here on them. On processes this process takes the first (longest) task, and its fold is split
        first, on the cores that are idle until the workers start."""
        split = FoldSplit()
        n_workers = self.n_workers
        if job["shards"] is not None and not job["shards"].in_process:
            n_workers = 1
        elif n_workers > 1 and len(tasks) > 1 and self.backend != "ray" and tasks[0][0] == "fold" \
                and job["shards"] is None:
            _Fitter(job, split).fold_split(tasks[0], self._threads)
        return run_tasks(_Fitter, (job, split), tasks, n_workers, self.backend, self.ray_address, "Fit worker",
                         _describe)

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


def _calibrated(f: numpy.ndarray, y: numpy.ndarray, calibrate: bool) -> numpy.ndarray:
    """Margins f as the head will output them: Platt-scaled when calibrating (and the fit rises with y)."""
    if not calibrate:
        return f
    a, b = platt(f, y)
    return a * f + b if a > 0 else f


def _describe(task: Tuple[Any, ...]) -> str:
    return f"while mining shard {task[1]}" if task[0] == "mine" else f"during the {task[0]} fit of class {task[1]}"


class _Miner:
    """A worker of the mining tasks ("mine", s, None): the patterns of the root labels that shard s `owners`; the
    last shard sends the roots' documents."""

    def __init__(self, forest: Tuple[numpy.ndarray, ...], settings: Dict[str, Any], owners: numpy.ndarray,
                 n_shards: int, threads: Any = 1) -> None:
        self.forest, self.settings, self.owners, self.n_shards = forest, settings, owners, n_shards

    def run(self, task: Tuple[Any, ...]) -> Dict[str, Any]:
        return _mine_shard(self.forest, self.settings, self.owners == task[1], task[1] == self.n_shards - 1)


class FoldSplit:
    """The last fold split of a fit worker, kept for its next tasks (the paths of one fold and matrix share it): a
    cache, so a copy sent to another process arrives empty."""

    key: Optional[Tuple[Any, ...]] = None
    split: Any = None

    def __reduce__(self) -> Tuple[Any, ...]:
        return FoldSplit, ()


class _Fitter:
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
