"""The systems and how each one chooses its settings on the dev split.

Subtree boosting (spacy_treeboost.TreeBoostClassifier):
    representation BOW (word chains, pattern size 1), N-gram (word chains, sizes from the
    profile, e.g. 2-5) or Tree (dependency trees, same sizes), and algorithm
    +FQ "iwakura" (frequency thresholds, the published gain), +FQ "z" (real AdaBoost's Z),
    -FQ (presence stumps, the published gain) or BACT (AdaBoost).
    Rounds: boosting runs in steps of `step` rounds; after every step the dev and test
    margins are updated incrementally (only the new rules are matched). The dev score
    (accuracy, or micro F1 for multi-label), averaged over the last `smooth` evaluations
    (default 1: no averaging), chooses the pattern size and the number of rounds; the test
    score is read at the chosen point and never used to choose.
    Budget: every size first runs `probe` rounds; the size with the best dev score then
    continues to `max_rounds`. Any run stops early after `patience` rounds without a better
    dev score, or when boosting stops by itself.

Peers:
    spaCy textcat with TextCatBOW.v3 (ngram_size 1 or 2), trained through spaCy's API
    (nlp.update, batches of 4 to 32 documents), epochs chosen on dev (up to `epochs`);
    scikit-learn LinearSVC and LogisticRegression on tf-idf (sublinear tf) of unigrams and
    bigrams, C chosen on dev from `c_grid`.

Every system's training runs in a forked child process (several at once with --jobs): the CPU seconds are
time.process_time() around the fitting calls only (not evaluation), and memory is the
child's peak resident set size (ru_maxrss) minus its size when the fit started.
"""
import multiprocessing
import os
import random
import resource
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import numpy

from .stats import selection_score

BOOST_ALGORITHMS = {
    # name: (algorithm, criterion)
    "+FQ": ("frequency", "iwakura"),
    "+FQ(z)": ("frequency", "z"),
    "-FQ": ("presence", "iwakura"),
    "BACT": ("bact", "iwakura"),
}
REPRESENTATIONS = ("BOW", "N-gram", "Tree")


@dataclass
class FoldData:
    """The inputs of one split, shared with the child processes by fork."""
    classes: List[str]
    multilabel: bool
    positive: Optional[str]
    y_train: List[Any]                 # class strings, or lists of class strings
    truth: Dict[str, numpy.ndarray]    # "dev"/"test": class indices (n,) or indicators (n, C)
    chain: Dict[str, Any]              # "train"/"dev"/"test" Forests of word chains
    tree: Dict[str, Any] = field(default_factory=dict)   # the same for dependency trees
    tokens: Dict[str, List[List[str]]] = field(default_factory=dict)
    texts: Dict[str, List[str]] = field(default_factory=dict)
    refit: Optional["FoldData"] = None  # the same split with the dev documents added to train
    both: Dict[str, Any] = field(default_factory=dict)  # chain+dependency forests, built on first use


def encode_truth(labels: List[Any], classes: List[str], multilabel: bool) -> numpy.ndarray:
    index = {c: i for i, c in enumerate(classes)}
    if multilabel:
        out = numpy.zeros((len(labels), len(classes)), dtype=numpy.int8)
        for i, v in enumerate(labels):
            for c in v:
                out[i, index[c]] = 1
        return out
    return numpy.array([index[v] for v in labels], dtype=numpy.int64)


# --------------------------------------------------------------------------------------------
# child processes


class ChildFit:
    """fn(*args) running in a forked child; `result()` waits for it and adds `peak_rss_mb` and `rss_growth_mb`.

    `conn` can be passed to multiprocessing.connection.wait to wait for several children at once.
    """

    def __init__(self, fn: Callable[..., Dict[str, Any]], *args: Any) -> None:
        ctx = multiprocessing.get_context("fork")
        self.conn, send = ctx.Pipe(duplex=False)

        def child() -> None:
            try:
                rss0 = _current_rss_mb()
                out = fn(*args)
                usage = resource.getrusage(resource.RUSAGE_SELF)
                peak = usage.ru_maxrss / 1024.0
                out["cpu_process"] = usage.ru_utime + usage.ru_stime   # the whole child: fits and evaluation
                out["peak_rss_mb"] = peak
                out["rss_growth_mb"] = max(0.0, peak - rss0)
                send.send(("ok", out))
            except BaseException:  # noqa: BLE001 - reported to the parent
                send.send(("error", traceback.format_exc()))
            finally:
                send.close()
                os._exit(0)

        self.started = time.time()
        self.proc = ctx.Process(target=child)
        self.proc.start()
        send.close()

    def result(self) -> Dict[str, Any]:
        try:
            status, payload = self.conn.recv()
        except EOFError:
            self.proc.join()
            raise RuntimeError(f"the child process died (exit code {self.proc.exitcode}); out of memory?") from None
        finally:
            self.conn.close()
        self.proc.join()
        if status != "ok":
            raise RuntimeError("the child process failed:\n" + payload)
        payload["wall_seconds"] = time.time() - self.started
        return payload


def _current_rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


# --------------------------------------------------------------------------------------------
# subtree boosting


class MarginTracker:
    """Margins of fixed forests under a growing rule set, updated with the new rules only."""

    def __init__(self, forests: Dict[str, Any], n_heads: int) -> None:
        self.forests = forests
        self.margins = {k: numpy.zeros((len(f), n_heads)) for k, f in forests.items()}
        self.done = [0] * n_heads

    def update(self, rules) -> None:
        from spacy_treeboost.models.rules import RuleSet

        new = RuleSet(rules.heads, algorithm=rules.algorithm, include_root_patterns=rules.include_root_patterns)
        added = False
        for h in range(len(rules.heads)):
            for code, z, a, b in rules.rules(h)[self.done[h]:]:
                new.add(h, code, z, a, b)
                added = True
            self.done[h] = rules.n_rules(h)
        if added:
            for k, f in self.forests.items():
                self.margins[k] += new.margins(f)


def margins_to_pred(F: numpy.ndarray, heads: List[str], classes: List[str], multilabel: bool,
                    positive: Optional[str]) -> numpy.ndarray:
    """Predictions in the encoding of `encode_truth` from one column of margins per head."""
    index = {c: i for i, c in enumerate(classes)}
    if multilabel:
        out = numpy.zeros((F.shape[0], len(classes)), dtype=numpy.int8)
        for j, h in enumerate(heads):
            out[:, index[h]] = F[:, j] > 0
        return out
    if len(heads) == 1:
        pos = index[heads[0]]
        neg = [i for i in range(len(classes)) if i != pos][0]
        return numpy.where(F[:, 0] > 0, pos, neg)
    cols = numpy.array([index[h] for h in heads])
    return cols[F.argmax(axis=1)]


class BoostRun:
    """One TreeBoostClassifier at one pattern size, boosted step by step with dev/test tracking."""

    def __init__(self, fd: FoldData, algorithm: str, criterion: str, forests: Dict[str, Any], size: int,
                 cfg: Dict[str, Any]) -> None:
        from spacy_treeboost import TreeBoostClassifier

        self.fd, self.size, self.cfg = fd, size, cfg
        self.clf = TreeBoostClassifier(algorithm, criterion=criterion, max_pattern_size=size,
                                       min_support=cfg.get("min_support", 1), boosting="adaboost",
                                       positive_class=fd.positive, max_cache_mb=cfg.get("max_cache_mb", 3072))
        t0 = time.process_time()
        self.clf.start(forests["train"], fd.y_train)
        self.cpu = time.process_time() - t0
        self.cpu_start = self.cpu
        self.tracker = MarginTracker({"dev": forests["dev"], "test": forests["test"]}, len(self.clf.heads_))
        self.heads = [h.name for h in self.clf.heads_]
        self.curve: List[List[float]] = []          # [rounds, dev score, training error]
        self.best_dev = -1.0
        self.best_rounds = 0
        self.best_test_pred: Optional[numpy.ndarray] = None
        self.best_cpu = self.cpu
        self.stopped = ""

    def run(self, until: int) -> None:
        step, patience = self.cfg["step"], self.cfg["patience"]
        while not self.stopped and self.clf.n_rounds_ < until:
            before = self.clf.n_rounds_
            t0 = time.process_time()
            self.clf.boost(min(step, until - before))
            self.cpu += time.process_time() - t0
            r = self.clf.n_rounds_
            if r == before:
                self.stopped = "boosting stopped by itself"
                break
            self.tracker.update(self.clf.rules_)
            pred = {k: margins_to_pred(F, self.heads, self.fd.classes, self.fd.multilabel, self.fd.positive)
                    for k, F in self.tracker.margins.items()}
            dev = selection_score(self.fd.truth["dev"], pred["dev"], self.fd.multilabel)
            errors = [e["error"] for e in self.clf.trace_[-len(self.heads):]]
            self.curve.append([r, dev, float(numpy.mean(errors))])
            dev = float(numpy.mean([c[1] for c in self.curve[-self.cfg.get("smooth", 1):]]))
            if dev > self.best_dev:
                self.best_dev, self.best_rounds, self.best_cpu = dev, r, self.cpu
                self.best_test_pred = pred["test"]
            if r - self.best_rounds >= patience:
                self.stopped = f"early stop: no better dev score in {patience} rounds"

    def summary(self) -> Dict[str, Any]:
        return {"size": self.size, "dev": self.best_dev, "rounds": self.best_rounds, "rounds_run": self.clf.n_rounds_,
                "stopped": self.stopped or "round limit", "curve": self.curve,
                "cpu_to_best": self.best_cpu, "cpu_run": self.cpu}

    def release(self) -> None:
        self.clf = None
        self.tracker = None


def fit_boost(fd: FoldData, representation: str, alg_name: str, cfg: Dict[str, Any], keep_rules: bool = False) -> Dict[str, Any]:
    """Choose the pattern size and rounds on dev; return dev/test predictions at the chosen point."""
    algorithm, criterion = BOOST_ALGORITHMS[alg_name]
    forests = fd.tree if representation == "Tree" else fd.chain
    sizes = [1] if representation == "BOW" else list(cfg["sizes"])
    probe = cfg["probe"] if len(sizes) > 1 else cfg["max_rounds"]
    best: Optional[BoostRun] = None
    per_size: Dict[str, Dict[str, Any]] = {}
    test_at: Dict[int, numpy.ndarray] = {}
    cpu_total = 0.0
    for size in sizes:
        try:
            run = BoostRun(fd, algorithm, criterion, forests, size, cfg)
            run.run(min(probe, cfg["max_rounds"]))
        except MemoryError as err:   # the search space outgrew max_cache_mb: this size is left out
            per_size[str(size)] = {"size": size, "error": str(err)}
            run = None
            continue
        cpu_total += run.cpu
        per_size[str(size)] = run.summary()
        test_at[size] = run.best_test_pred
        if best is None or run.best_dev > best.best_dev:
            if best is not None:
                best.release()
            best = run
        else:
            run.release()
    if best is None:
        raise MemoryError(f"every pattern size outgrew the search-space cap: {per_size}")
    cpu_before = best.cpu
    try:
        best.run(cfg["max_rounds"])
    except MemoryError as err:   # keep what was reached before the cap
        best.stopped = f"search space cap: {err}"
        best.clf = None
    cpu_total += best.cpu - cpu_before
    per_size[str(best.size)] = best.summary()
    test_at[best.size] = best.best_test_pred
    out = {
        "kind": "boost", "representation": representation, "algorithm": alg_name,
        "selected": {"size": best.size, "rounds": best.best_rounds},
        "dev": best.best_dev, "test_pred": best.best_test_pred,
        "per_size": per_size, "test_pred_per_size": {str(k): v for k, v in test_at.items()},
        # training CPU of the chosen model (start + rounds up to the chosen one) and of everything run
        "cpu_fit": best.best_cpu,
        "cpu_total": cpu_total,
        "train_error": best.curve[[c[0] for c in best.curve].index(best.best_rounds)][2] if best.curve else None,
        "first_zero_error_round": next((c[0] for c in best.curve if c[2] == 0), None),
    }
    if best.clf is not None:
        chosen = best.clf.rules_.truncate(best.best_rounds)
        out["n_patterns_used"] = chosen.n_patterns
        if keep_rules:
            out["rules"] = chosen.to_dict()
    best.release()
    return out


# --------------------------------------------------------------------------------------------
# peers


def _analyzer(tokens: List[str]) -> List[str]:
    return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]


def fit_sklearn(fd: FoldData, kind: str, cfg: Dict[str, Any]) -> Dict[str, Any]:
    """LinearSVC or LogisticRegression on tf-idf 1-2-grams; C chosen on dev."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    t0 = time.process_time()
    vec = TfidfVectorizer(analyzer=_analyzer, sublinear_tf=True)
    X = {"train": vec.fit_transform(fd.tokens["train"])}
    cpu_vec = time.process_time() - t0
    X["dev"] = vec.transform(fd.tokens["dev"])
    X["test"] = vec.transform(fd.tokens["test"])
    y = encode_truth(fd.y_train, fd.classes, fd.multilabel)
    best = None
    cpu_total = cpu_vec
    curve = []
    for C in cfg["c_grid"]:
        if kind == "LinearSVC":
            model = LinearSVC(C=C, max_iter=20000)
        else:
            model = LogisticRegression(C=C, max_iter=5000, solver="liblinear" if fd.multilabel or len(fd.classes) == 2 else "lbfgs")
        if fd.multilabel:
            model = OneVsRestClassifier(model)
        t0 = time.process_time()
        model.fit(X["train"], y)
        cpu = time.process_time() - t0
        cpu_total += cpu
        pred_dev = model.predict(X["dev"])
        dev = selection_score(fd.truth["dev"], pred_dev, fd.multilabel)
        curve.append([C, dev])
        if best is None or dev > best[0]:
            proba = model.predict_proba(X["test"]) if hasattr(model, "predict_proba") else None
            best = (dev, C, model.predict(X["test"]), cpu, proba)
    dev, C, test_pred, cpu, proba = best
    out = {"kind": "peer", "representation": "tf-idf 1-2-grams", "algorithm": kind, "selected": {"C": C},
           "dev": dev, "test_pred": numpy.asarray(test_pred), "cpu_fit": cpu_vec + cpu, "cpu_total": cpu_total,
           "c_curve": curve, "n_features": len(vec.vocabulary_)}
    if proba is not None:
        out["test_proba"] = numpy.asarray(proba)   # columns in the order of fd.classes (encode_truth's indices)
    return out


def fit_textcat(fd: FoldData, ngram_size: int, cfg: Dict[str, Any]) -> Dict[str, Any]:
    """spaCy textcat (TextCatBOW.v3) trained through nlp.update; epochs chosen on dev."""
    import spacy
    from spacy.training import Example
    from spacy.util import compounding, fix_random_seed, minibatch

    fix_random_seed(0)
    rng = random.Random(0)
    nlp = spacy.blank("en")
    name = "textcat_multilabel" if fd.multilabel else "textcat"
    model = {"@architectures": "spacy.TextCatBOW.v3", "exclusive_classes": not fd.multilabel,
             "ngram_size": ngram_size, "no_output_layer": False, "length": 262144}
    textcat = nlp.add_pipe(name, config={"model": model})
    for c in fd.classes:
        textcat.add_label(c)
    docs = {k: [nlp.make_doc(t) for t in texts] for k, texts in fd.texts.items()}

    def cats(v: Any) -> Dict[str, float]:
        on = set(v) if fd.multilabel else {v}
        return {c: float(c in on) for c in fd.classes}

    examples = [Example.from_dict(d, {"cats": cats(v)}) for d, v in zip(docs["train"], fd.y_train)]
    t0 = time.process_time()
    optimizer = nlp.initialize(lambda: examples)
    cpu = time.process_time() - t0
    order = [fd.classes.index(c) for c in textcat.labels]
    best = None
    curve = []
    for epoch in range(1, cfg["epochs"] + 1):
        rng.shuffle(examples)
        t0 = time.process_time()
        for batch in minibatch(examples, size=compounding(4.0, 32.0, 1.001)):
            nlp.update(batch, sgd=optimizer, losses={})
        cpu += time.process_time() - t0
        pred = {}
        for k in ("dev", "test"):
            scores = numpy.asarray(textcat.model.ops.to_numpy(textcat.predict(docs[k])))
            S = numpy.zeros_like(scores)
            S[:, order] = scores
            pred[k] = (S > 0.5).astype(numpy.int8) if fd.multilabel else S.argmax(axis=1)
        dev = selection_score(fd.truth["dev"], pred["dev"], fd.multilabel)
        curve.append([epoch, dev])
        if best is None or dev > best[0]:
            best = (dev, epoch, pred["test"], cpu)
    dev, epoch, test_pred, cpu_best = best
    return {"kind": "peer", "representation": f"TextCatBOW n-grams 1-{ngram_size}",
            "algorithm": f"spaCy textcat BOW (ngram_size {ngram_size})", "selected": {"epochs": epoch},
            "dev": dev, "test_pred": test_pred, "cpu_fit": cpu_best, "cpu_total": cpu, "epoch_curve": curve}


# --------------------------------------------------------------------------------------------
# the list of systems


def system_list(trees: bool) -> List[Dict[str, Any]]:
    """Every system as {name, family, ...}; Tree systems only when dependency trees are available."""
    out = []
    for rep in REPRESENTATIONS:
        if rep == "Tree" and not trees:
            continue
        for alg in BOOST_ALGORITHMS:
            out.append({"name": f"{rep} {alg}", "family": "treeboost", "representation": rep, "algorithm": alg})
    out.append({"name": "spaCy textcat BOW n=1", "family": "peer", "peer": "textcat", "ngram": 1})
    out.append({"name": "spaCy textcat BOW n=2", "family": "peer", "peer": "textcat", "ngram": 2})
    out.append({"name": "LinearSVC tf-idf 1-2", "family": "peer", "peer": "LinearSVC"})
    out.append({"name": "LogisticRegression tf-idf 1-2", "family": "peer", "peer": "LogisticRegression"})
    return out


def fit_system(fd: FoldData, system: Dict[str, Any], cfg: Dict[str, Any], keep_rules: bool = False) -> Dict[str, Any]:
    if system["family"] == "treeboost":
        return fit_boost(fd, system["representation"], system["algorithm"], cfg, keep_rules=keep_rules)
    if system["peer"] == "textcat":
        return fit_textcat(fd, system["ngram"], cfg)
    return fit_sklearn(fd, system["peer"], cfg)
