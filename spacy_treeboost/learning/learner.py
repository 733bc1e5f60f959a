"""Boosting subtree stumps: BACT (AdaBoost / Arc-GV) and Iwakura's frequency-aware real AdaBoost, several classes
one-vs-rest ("heads") over one cached search space."""
import math
import os
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy

from ..exceptions import NotFittedError
from ..models.rules import RuleSet
from ..params import Boolean, Instance, Interval, Options, Text, invalid_setting, rule
from ..trees.forest import Forest
from .backends import SearchBackend, assign_root_labels, boosting_weights, make_backend, rule_outputs
from .classifier import NO_SUBTREE, RuleClassifier, _label_rank, encode_targets

ALGORITHMS = ("bact", "frequency", "presence")
CRITERIA = ("iwakura", "z")
BOOSTINGS = ("adaboost", "arcgv")
MAX_PATTERN_SIZE_LIMIT = 64
MAX_ROUNDS_LIMIT = 1_000_000
BYTES_PER_RULE = 1024
GAMMA_CAP = 1 - 1e-9
NO_GAIN = 1e-12
EXECUTION_PARAMS = ("n_workers", "backend", "ray_address")


def default_max_cache_mb() -> int:
    """Half of the machine's physical memory in MiB (4096 when the system does not tell)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 4096
    return max(256, total // 2 >> 20)


class _Head:
    """The boosting state of one binary (one-vs-rest) problem."""

    def __init__(self, name: str, y: numpy.ndarray) -> None:
        self.name = name
        self.y = y.astype(numpy.int8)
        self.scores = numpy.zeros(len(y), dtype=numpy.float64)
        self.alpha_sum = 0.0
        self.stopped = ""


def default_booster() -> "TreeBoostClassifier":
    """The booster of a corrective learner without an `estimator`: -FQ ("presence") boosting for 1000 rounds."""
    return TreeBoostClassifier("presence", n_rounds=1000)


def check_rounds(n_rounds: int, max_cache_mb: Optional[float], *, n_heads: int = 1) -> None:
    """Refuse more rounds than `MAX_ROUNDS_LIMIT`, or more rules (`BYTES_PER_RULE` each, one per round and head)
    than `max_cache_mb` (None: `default_max_cache_mb()`) holds."""
    if n_rounds > MAX_ROUNDS_LIMIT:
        raise invalid_setting("n_rounds", n_rounds, f"boosting adds one rule per round and class, so use at most "
                              f"{MAX_ROUNDS_LIMIT:,} rounds (a few hundred to a few thousand are usual).")
    if max_cache_mb is None:
        max_cache_mb = default_max_cache_mb()
    fits = int(max_cache_mb * (1 << 20)) // (BYTES_PER_RULE * max(1, n_heads))
    if n_rounds > fits:
        per = f" for {n_heads} classes" if n_heads > 1 else ""
        raise invalid_setting("n_rounds", n_rounds, f"the rules of {n_rounds} rounds{per} need more than the memory "
                              f"cap max_cache_mb={max_cache_mb} ({BYTES_PER_RULE} bytes per rule); use at most {fits} "
                              "rounds or raise max_cache_mb.")


def resolve_min_support(algorithm: str, min_support: Optional[int]) -> int:
    """The support threshold a setting of None stands for: 2 for the subtree-linear model, 1 for boosting."""
    if min_support is not None:
        return min_support
    return 2 if algorithm == "linear" else 1


class TreeBoostClassifier(RuleClassifier):
    """Classify labeled ordered trees with boosted subtree stumps.

    algorithm (str): "bact" (stump <t, y>, Kudo & Matsumoto 2004), "frequency" (stump <t, z, a, b> with a learned
        frequency threshold z, Iwakura 2013, "+FQ") or "presence" (z fixed at 1, "-FQ").
    criterion (str): For "frequency"/"presence": "iwakura" (the published gain) or "z" (real AdaBoost's Z).
    n_rounds (int): Boosting rounds (rules per class) that `fit` runs.
    max_pattern_size (int): Largest subtree, in nodes (1 = bag of words).
    min_support (int): Smallest number of training documents a subtree occurs in.
    smoothing (Optional[float]): epsilon in the confidences; None means 1/m.
    boosting (str): For "bact": "adaboost" or "arcgv".
    include_root_patterns (bool): Allow subtrees that contain the virtual root.
    positive_class (Optional[str]): For two classes, the one whose margin is positive. Default: "+1"/"1" when
        present, else the second sorted class.
    max_cache_mb (Optional[int]): Memory cap of the cached search space in MiB per worker; None: half the memory.
    n_workers (int): Workers that share the search (the same rules for any number).
    backend (Optional[str]): "local", "processes" or "ray"; None: "local" for one worker, else "processes".
    ray_address (Optional[str]): The Ray cluster; None starts a local Ray (or uses RAY_ADDRESS).
    """

    _parameter_constraints = {
        "algorithm": rule(Options(*ALGORITHMS)),
        "criterion": rule(Options(*CRITERIA)),
        "boosting": rule(Options(*BOOSTINGS)),
        "max_pattern_size": rule(Interval("int", 1, MAX_PATTERN_SIZE_LIMIT), hint=(
            f"use a whole number from 1 to {MAX_PATTERN_SIZE_LIMIT} (subtrees of 2-5 nodes are usual)")),
        "min_support": rule(Interval("int", 1, None), hint="use a whole number of documents >= 1"),
        "n_rounds": rule(Interval("int", 0, None), hint="use a whole number >= 0"),
        "smoothing": rule(Interval("real", 0, None, "neither"), None, hint="use a positive number, or None for 1/m"),
        "max_cache_mb": rule(Interval("real", 0, None, "neither"), None, hint=(
            "use a positive number of megabytes, or None for half of the machine's memory")),
        "include_root_patterns": rule(Boolean()),
        "n_workers": rule(Interval("int", 1, None), hint="use a whole number of workers >= 1"),
        "backend": rule(Options("local", "processes", "ray"), None, hint=(
            "choose one of local, processes, ray (or None: local for one worker, else processes)")),
        "ray_address": rule(Text(), None, hint="use a Ray cluster address such as 'ray://host:10001', or None"),
    }
    positive_class: Optional[Any] = None
    space_: SearchBackend

    def __init__(self, algorithm: str = "frequency", *, criterion: str = "iwakura", n_rounds: int = 100,
                 max_pattern_size: int = 3, min_support: int = 1, smoothing: Optional[float] = None,
                 boosting: str = "adaboost", include_root_patterns: bool = False, positive_class: Optional[Any] = None,
                 max_cache_mb: Optional[int] = None, n_workers: int = 1, backend: Optional[str] = None,
                 ray_address: Optional[str] = None) -> None:
        self.algorithm = algorithm
        self.criterion = criterion
        self.n_rounds = n_rounds
        self.max_pattern_size = max_pattern_size
        self.min_support = min_support
        self.smoothing = smoothing
        self.boosting = boosting
        self.include_root_patterns = include_root_patterns
        self.positive_class = positive_class
        self.max_cache_mb = max_cache_mb
        self.n_workers = n_workers
        self.backend = backend
        self.ray_address = ray_address

    def __getstate__(self) -> Dict[str, Any]:
        """Pickle without the search space: a pickled classifier predicts but cannot `boost` further."""
        state = dict(self.__dict__)
        state.pop("space_", None)
        return state

    def _validate_combination(self) -> None:
        check_rounds(self.n_rounds, self.max_cache_mb)

    def fit(self, X: Forest, y: Sequence[Any],
            callback: Optional[Callable[[Dict[str, Any]], None]] = None) -> "TreeBoostClassifier":
        """Learn `n_rounds` rules per class.

        X (Forest): The training trees.
        y (Sequence): One class per tree, or one collection of classes per tree (multi-label).
        callback (Optional[Callable]): Called with each round's trace entry.
        RETURNS (TreeBoostClassifier): self.
        """
        self.start(X, y)
        return self.boost(self.n_rounds, callback=callback)

    def start(self, X: Forest, y: Sequence[Any]) -> "TreeBoostClassifier":
        """Index the training trees, start the search workers and reset to zero rounds."""
        self.validate_params()
        if not isinstance(X, Forest):
            raise TypeError(f"X must be a Forest, got {type(X).__name__}; build one with Forest.from_trees or "
                            "read_bact")
        m = len(X)
        if m == 0:
            raise ValueError("Cannot train on an empty set of trees.")
        if len(y) != m:
            raise ValueError(f"Got {len(y)} labels for {m} trees.")
        self.classes_, self.multilabel_, heads, targets = encode_targets(y, self._positive)
        check_rounds(self.n_rounds, self.max_cache_mb, n_heads=len(heads))
        self.heads_ = [_Head(str(h), t) for h, t in zip(heads, targets)]
        self.rules_ = RuleSet([h.name for h in self.heads_], algorithm=self.algorithm,
                              include_root_patterns=self.include_root_patterns)
        self._vocab = X.vocab.to_list()
        cache_mb = self.max_cache_mb if self.max_cache_mb is not None else default_max_cache_mb()
        init = {"forest": (X.labels, X.parents, X.offsets, _label_rank(self._vocab)),
                "targets": [h.y for h in self.heads_],
                "space_settings": dict(max_pattern_size=self.max_pattern_size, min_support=self.min_support,
                                       include_root=self.include_root_patterns,
                                       max_cache_bytes=int(cache_mb) << 20, single_document_dominance=True),
                "search_settings": dict(criterion="bact" if self.algorithm == "bact" else self.criterion,
                                        presence=self.algorithm == "presence", bact=self.algorithm == "bact")}
        owners = None if self.n_workers == 1 else assign_root_labels(
            X.labels, X.parents, len(self._vocab), self.n_workers, self.include_root_patterns)
        if hasattr(self, "space_"):
            self.space_.close()
        self.space_ = make_backend(self.backend or ("local" if self.n_workers == 1 else "processes"),
                                   self.n_workers, init, owners, self.ray_address)
        if self.space_.n_patterns == 0:
            raise ValueError(NO_SUBTREE)
        self.epsilon_ = self.smoothing if self.smoothing is not None else 1.0 / m
        self.space_.mark_synced([h.scores for h in self.heads_])
        self.n_rounds_ = 0
        self.trace_: List[Dict[str, Any]] = []
        return self

    def can_boost(self) -> bool:
        """RETURNS (bool): Whether `boost` can run more rounds (not on a loaded or unpickled classifier)."""
        return hasattr(self, "space_")

    def boost(self, n_rounds: int,
              callback: Optional[Callable[[Dict[str, Any]], None]] = None) -> "TreeBoostClassifier":
        """Run `n_rounds` more rounds (one rule per class each), resuming where boosting stopped."""
        if not self.can_boost():
            message = ("Call fit (or start) before boost: the learner has no training trees (a loaded or unpickled "
                       "classifier predicts but cannot resume boosting).")
            raise RuntimeError(message) if hasattr(self, "rules_") else NotFittedError(message)
        self.space_.sync_scores([h.scores for h in self.heads_])
        for _ in range(n_rounds):
            added = False
            active = [k for k, head in enumerate(self.heads_) if not head.stopped]
            found = self.space_.search(active, self.n_rounds_ + 1) if active else {}
            for k in active:
                entry = self._round(k, self.heads_[k], found[k])
                if entry is not None:
                    added = True
                    self.trace_.append(entry)
                    if callback is not None:
                        callback(entry)
            if not added:
                break
            self.n_rounds_ += 1
        self.space_.mark_synced([h.scores for h in self.heads_])
        return self

    def _round(self, k: int, head: _Head, best: Dict[str, Any]) -> Optional[Dict[str, Any]]:
        t0 = time.process_time()
        w = boosting_weights(head.scores, head.y)
        bact = self.algorithm == "bact"
        if best["value"] <= NO_GAIN:
            head.stopped = "no subtree separates the classes any further (the best gain is 0)"
            return None
        docs, counts = best["docs"], best["counts"]
        if bact:
            step = self._bact_step(head, best)
            if step is None:
                return None
            a, b, z = step
        else:
            z = best["z"]
            eps = self.epsilon_
            Wp = max(best["T_pos"] - best["A_pos"], 0.0)
            Wn = max(best["T_neg"] - best["A_neg"], 0.0)
            a = 0.5 * math.log((best["P"] + eps) / (best["N"] + eps))
            b = 0.5 * math.log((Wp + eps) / (Wn + eps))
        h = rule_outputs(len(w), docs, counts, z, a, b, bact)
        self.space_.update(k, docs, counts, z, a, b)
        Z = float(numpy.sum(w * numpy.exp(-head.y * h)))
        head.scores += h
        code = tuple((d, self._vocab[l]) for d, l in best["code"])
        self.rules_.add(k, code, z, a, b)
        margins = head.y * head.scores
        return {
            "round": self.n_rounds_ + 1, "head": head.name,
            "pattern": self.rules_.describe(k, self.rules_.n_rules(k) - 1),
            "z": int(z), "a": a, "b": b, "value": best["value"], "Z": Z,
            "loss": float(numpy.mean(numpy.exp(numpy.clip(-margins, None, 700)))),
            "error": float(numpy.mean(margins <= 0)), "nodes_visited": best["nodes_visited"],
            "patterns_cached": best["patterns_cached"],
            "cpu_seconds": best["cpu_seconds"] + time.process_time() - t0,
        }

    def _bact_step(self, head: _Head, best: Dict[str, Any]) -> Optional[Tuple[float, float, int]]:
        """Confidences (a, b, z=1) of the BACT rule, or None when Arc-GV stops."""
        gamma = best["value"] if best["value"] < 1 - 1e-12 else GAMMA_CAP
        alpha = 0.5 * math.log((1 + gamma) / (1 - gamma))
        if self.boosting == "arcgv" and head.alpha_sum > 0:
            rho = max(0.0, float((head.y * head.scores).min()) / head.alpha_sum)
            rho = min(rho, GAMMA_CAP)
            alpha -= 0.5 * math.log((1 + rho) / (1 - rho))
            if alpha <= 0:
                head.stopped = (f"Arc-GV converged: the best gain {gamma:.6f} does not exceed the minimum margin "
                                f"{rho:.6f}")
                return None
        head.alpha_sum += alpha
        sign = best["sign"]
        return alpha * sign, -alpha * sign, 1


BOOSTER_RULE = rule(Instance(TreeBoostClassifier, 'a "spacy_treeboost.SubtreeBoost.v1" block'), None, hint=(
    'use a booster, a "spacy_treeboost.SubtreeBoost.v1" block, or leave the block out for the default booster'))
