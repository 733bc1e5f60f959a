"""The corrective and subtree-linear learners against the linear peers: docs/results_linear.{json,md}.

    python -m bench.experiments.linear [--quick] [--jobs 2] [--data ../shared/data] [--corpora movie_reviews ...]
    python -m bench.experiments.linear --report-only

Same corpora, splits and data as `bench.experiments.run`; every system chooses its settings on the dev
split (subtree systems: the pattern size and, for the corrective list, the number of boosting rounds;
C is chosen inside the learners by 5-fold cross-validation on the training split, as the spaCy
component does) and is scored once on the test split. The best subtree system of a corpus is the one with
the best dev score; R8 and R10, which have one dev split each, choose it instead by 5-fold cross-validation
on train + dev (`choice_folds`), each fold fitted with the settings the dev split chose. Systems:

- Linear NB (`SubtreeLinearClassifier`, the component's defaults: naive Bayes scaled presence features,
  logistic loss, min_support 2) over word chains (N-gram) or dependency trees (Tree);
- N-gram+Tree Linear NB (the component's tree_mode "chain+dependency"): one Linear NB model over the
  word-chain and the dependency subtrees (the recorded results averaged two models, one per view, a setting
  since removed); N-gram+Tree Linear tf-idf: one tf-idf model over the subtrees of both views, each row
  normalized over all of them;
- N-gram Linear NB min_support 1 and N-gram+Tree Linear NB min_support 1 (sentence polarity only; see
  MIN_SUPPORT_1_CORPORA): the same models over every subtree of the training documents;
- Linear NB top-5000: the same, keeping per class the 5,000 subtrees of largest total contribution on
  the training split, refitted jointly (`max_rules`): a rule list of at most 5,000 rules whose subtrees
  are chosen by the linear model instead of by boosting;
- Linear tf-idf (`features="tfidf"`, L2-SVM loss): sublinear tf-idf of every subtree, each document's
  row L2-normalized over the model's subtrees (LinearSVC tf-idf 1-2's feature space when the subtrees are
  1-2-word chains), min_support 1 as the peer's vectorizer; like the peer, C is chosen on the dev split
  (from TFIDF_CS, with the pattern size) instead of by cross-validation inside the learner;
- Corrective (`CorrectiveBoostClassifier`): -FQ boosting, the rules' weights refitted jointly at each
  checkpoint of rounds;
- peers: NBSVM (Wang & Manning 2012: binarized n-grams scaled by naive Bayes log-count ratios,
  LinearSVC, interpolation beta = 0.25), LinearSVC and LogisticRegression on tf-idf 1-2-grams, spaCy
  textcat BOW n = 1, 2.

Log-loss and expected calibration error (10 equal-width bins; top label, or every (document, class)
pair for multi-label) are reported for every system that gives probabilities. Each fit runs in a
child process (CPU seconds of the fitting calls, peak RSS) and is cached as JSON under
bench/_out/experiments/linear_runs/ (or `--fit-cache`), so an interrupted run resumes.
"""
import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy

from spacy_treeboost.trees.forest import DEPENDENCY_VIEW_PREFIX

from bench.harness import provenance

from .data import CORPUS_TITLES, OUT, ROOT, SEED, Split, load_source
from .linear_report import FULL_RUN_CORPORA
from .run import cfg_hash, jsonable, fold_data, load_corpus, load_fit, log, train_missing
from .stats import correctness, mcnemar, mean_std, metrics, selection_score
from .systems import FoldData, encode_truth, fit_sklearn, fit_textcat, margins_to_pred

DOCS = ROOT / "docs"
RESULTS = DOCS / "results_linear.json"
CORPUS_ORDER = tuple(FULL_RUN_CORPORA)
C_GRID = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]
NB_BETA = 0.25
TOP_RULES = 5000
TFIDF_OPTIONS = {"loss": "squared_hinge", "min_support": 1}
TFIDF_CS = [1.0, 3.0, 10.0, 30.0, 100.0]
# Corpora that also run the Linear NB systems with min_support 1 (every subtree of the training documents, as
# NBSVM's vectorizer keeps every n-gram). Chosen on dev splits:
# on sentence polarity (one sentence per document) min_support 1 gains 0.3-0.6 dev points on word chains and
# 0-0.2 over both views; on movie reviews it loses 0.5 (chains, size 3) at 3.3x the CPU, so it is not run there;
# the Reuters floors are met without it and their two-view models are already the largest of the run.
MIN_SUPPORT_1_CORPORA = ("sentence_polarity",)
# Part of each run's cache key: fits cached under another solver or tolerance are not reused.
SOLVER = "newton-cg tol=1e-3 one-blas-thread"
# Corpora with one dev split (R8, R10) choose their best subtree system by this many folds of cross-validation
# on train + dev (each system with the settings its dev split chose): one dev split of ~700 documents cannot
# order systems whose dev scores lie a tenth of a point apart. Not part of the fit cache's key: the fits that
# choose settings are the same with or without it.
CHOICE_FOLDS = 5

FULL: Dict[str, Dict[str, Any]] = {
    "movie_reviews": dict(test_folds=list(range(10)), limit=0, trees=True, sizes=[2, 3], corrective_sizes=[2],
                          checkpoints=[1000, 2000, 5000, 10000], epochs=8, c_grid=C_GRID),
    "sentence_polarity": dict(test_folds=list(range(10)), limit=0, trees=True, sizes=[2, 3], corrective_sizes=[2],
                              checkpoints=[500, 1000, 2000], epochs=8, c_grid=C_GRID),
    "r8": dict(limit=0, test_limit=0, trees=True, sizes=[2, 3], corrective_sizes=[2],
               checkpoints=[250, 500, 1000], epochs=8, c_grid=C_GRID, choice_folds=CHOICE_FOLDS),
    "r10": dict(limit=0, test_limit=0, trees=True, sizes=[2, 3], corrective_sizes=[2],
                checkpoints=[250, 500, 1000], epochs=8, c_grid=C_GRID, choice_folds=CHOICE_FOLDS),
}
QUICK: Dict[str, Dict[str, Any]] = {
    "movie_reviews": dict(test_folds=[0, 1], limit=0, trees=False, sizes=[2], corrective_sizes=[2],
                          checkpoints=[500], epochs=3, c_grid=[0.1, 1.0, 10.0]),
    "sentence_polarity": dict(test_folds=[0, 1], limit=2000, trees=False, sizes=[2], corrective_sizes=[2],
                              checkpoints=[300], epochs=3, c_grid=[0.1, 1.0, 10.0]),
    "r8": dict(limit=1000, test_limit=500, trees=False, sizes=[2], corrective_sizes=[2], checkpoints=[60],
               epochs=3, c_grid=[0.1, 1.0, 10.0], choice_folds=CHOICE_FOLDS),
    "r10": dict(limit=1000, test_limit=500, trees=False, sizes=[2], corrective_sizes=[2], checkpoints=[60],
                epochs=3, c_grid=[0.1, 1.0, 10.0], choice_folds=CHOICE_FOLDS),
}
SMOKE: Dict[str, Dict[str, Any]] = {
    "embedded_reviews": dict(test_folds=[0, 1], limit=0, trees=True, sizes=[2], corrective_sizes=[2],
                             checkpoints=[10, 20], epochs=1, c_grid=[1.0], choice_folds=2),
}
PROFILES = {"full": FULL, "quick": QUICK, "smoke": SMOKE}


def system_list(trees: bool, corpus: str = "") -> List[Dict[str, Any]]:
    out = []
    for rep in ("N-gram", "Tree"):
        if rep == "Tree" and not trees:
            continue
        out.append({"name": f"{rep} Linear NB", "family": "subtree", "representation": rep, "learner": "linear",
                    "features": "nb"})
        out.append({"name": f"{rep} Linear NB top-{TOP_RULES}", "family": "subtree", "representation": rep,
                    "learner": "linear", "features": "nb", "max_rules": TOP_RULES})
        out.append({"name": f"{rep} Linear tf-idf", "family": "subtree", "representation": rep, "learner": "linear",
                    "features": "tfidf", "options": dict(TFIDF_OPTIONS), "dev_Cs": TFIDF_CS})
        out.append({"name": f"{rep} Corrective", "family": "subtree", "representation": rep, "learner": "corrective"})
    if trees:
        out.append({"name": "N-gram+Tree Linear NB", "family": "subtree", "representation": "Both", "learner": "linear",
                    "features": "nb"})
        out.append({"name": "N-gram+Tree Linear tf-idf", "family": "subtree", "representation": "Both",
                    "learner": "linear", "features": "tfidf", "options": dict(TFIDF_OPTIONS), "dev_Cs": TFIDF_CS})
    if corpus in MIN_SUPPORT_1_CORPORA:
        out.append({"name": "N-gram Linear NB min_support 1", "family": "subtree", "representation": "N-gram",
                    "learner": "linear", "features": "nb", "options": {"min_support": 1}})
        if trees:
            out.append({"name": "N-gram+Tree Linear NB min_support 1", "family": "subtree", "representation": "Both",
                        "learner": "linear", "features": "nb", "options": {"min_support": 1}})
    out.append({"name": "NBSVM 1-2", "family": "peer", "peer": "nbsvm", "n": 2})
    out.append({"name": "NBSVM 1-3", "family": "peer", "peer": "nbsvm", "n": 3})
    out.append({"name": "LinearSVC tf-idf 1-2", "family": "peer", "peer": "LinearSVC"})
    out.append({"name": "LogisticRegression tf-idf 1-2", "family": "peer", "peer": "LogisticRegression"})
    out.append({"name": "spaCy textcat BOW n=1", "family": "peer", "peer": "textcat", "ngram": 1})
    out.append({"name": "spaCy textcat BOW n=2", "family": "peer", "peer": "textcat", "ngram": 2})
    return out


def predict(clf, forest, fd: FoldData) -> numpy.ndarray:
    F = clf.rules_.margins(forest)
    return margins_to_pred(F, clf.rules_.heads, fd.classes, fd.multilabel, fd.positive)


def _test_outputs(clf, forest, fd: FoldData) -> Dict[str, numpy.ndarray]:
    """Predictions and probabilities (columns in the order of fd.classes; a class the learner never saw gets 0)
    from one matching of the test forest."""
    from spacy_treeboost.learning.classifier import margins_to_proba

    F = clf.rules_.margins(forest)
    P = margins_to_proba(F[:, 0] if F.shape[1] == 1 else F, clf.classes_, clf.heads_[0].name,
                         multilabel=clf.multilabel_)
    cols = {str(c): j for j, c in enumerate(clf.classes_)}
    proba = numpy.zeros((P.shape[0], len(fd.classes)))
    for k, c in enumerate(fd.classes):
        if c in cols:
            proba[:, k] = P[:, cols[c]]
    return {"test_pred": margins_to_pred(F, clf.rules_.heads, fd.classes, fd.multilabel, fd.positive),
            "test_proba": proba}


def combined_forest(chain, tree, prefix: str = DEPENDENCY_VIEW_PREFIX):
    """Each document's word chains and its dependency trees under one root, dependency labels prefixed: the
    trees of the component's tree_mode "chain+dependency"."""
    from spacy_treeboost.trees.forest import ForestBuilder, LabelVocab

    vocab = LabelVocab(chain.vocab.to_list())
    dep_ids = numpy.array([vocab.add(prefix + s) for s in tree.vocab.to_list()] + [-1], dtype=numpy.int32)
    builder = ForestBuilder(vocab)
    for i in range(len(chain)):
        a, b = int(chain.offsets[i]), int(chain.offsets[i + 1])
        c, d = int(tree.offsets[i]), int(tree.offsets[i + 1])
        labels = numpy.concatenate((chain.labels[a:b], dep_ids[tree.labels[c + 1:d]]))
        parents = chain.parents[a:b].astype(numpy.int64) - a
        parents[0] = -1
        dep_parents = tree.parents[c + 1:d].astype(numpy.int64) - c
        dep_parents = numpy.where(dep_parents == 0, 0, dep_parents + (b - a) - 1)
        builder.add_arrays(labels, numpy.concatenate((parents, dep_parents)))
    return builder.build()


def _forests(fd: FoldData, representation: str) -> Dict[str, Any]:
    """The train / dev / test forests of a representation: N-gram (chains), Tree or Both (chain+dependency)."""
    if representation == "Both":
        if not fd.both:
            fd.both = {k: combined_forest(fd.chain[k], fd.tree[k]) for k in fd.chain}
        return fd.both
    return fd.tree if representation == "Tree" else fd.chain


def fit_subtree_linear(fd: FoldData, system: Dict[str, Any], cfg: Dict[str, Any]) -> Dict[str, Any]:
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier

    X = _forests(fd, system["representation"])
    best, cpu_total, per_size = None, 0.0, {}
    options = {"min_support": 2, **system.get("options", {})}
    for size in cfg["sizes"]:
        for C in system.get("dev_Cs", [None]):
            t0 = time.process_time()
            clf = SubtreeLinearClassifier(max_pattern_size=size, features=system["features"],
                                          max_rules=system.get("max_rules"), C=C, **options)
            clf.fit(X["train"], fd.y_train)
            cpu = time.process_time() - t0
            cpu_total += cpu
            dev = selection_score(fd.truth["dev"], predict(clf, X["dev"], fd), fd.multilabel)
            key = str(size) if C is None else f"{size}/C{C:g}"
            per_size[key] = {"dev": dev, "cpu": cpu, "C": [i["C"] for i in clf.fit_info_]}
            if best is None or dev > best[0]:
                best = (dev, size, clf, cpu, C)
    dev, size, clf, cpu, C = best
    selected = {"size": size, "C": [i["C"] for i in clf.fit_info_]} if C is None else {"size": size, "C": C}
    return {"dev": dev, "selected": selected,
            **_test_outputs(clf, X["test"], fd), "cpu_fit": cpu, "cpu_total": cpu_total, "n_rules": len(clf.rules_), "n_features": clf.n_features_,
            "per_size": per_size}


def fit_corrective(fd: FoldData, system: Dict[str, Any], cfg: Dict[str, Any]) -> Dict[str, Any]:
    from spacy_treeboost.learning.corrective import CorrectiveBoostClassifier
    from spacy_treeboost.learning.learner import TreeBoostClassifier

    X = _forests(fd, system["representation"])
    best, cpu_total, points = None, 0.0, []
    for size in cfg["corrective_sizes"]:
        t0 = time.process_time()
        booster = TreeBoostClassifier("presence", n_rounds=0, max_pattern_size=size).start(X["train"], fd.y_train)
        cpu_boost = time.process_time() - t0
        done = 0
        for checkpoint in cfg["checkpoints"]:
            t0 = time.process_time()
            booster.boost(checkpoint - done)
            cpu_boost += time.process_time() - t0
            done = checkpoint
            t0 = time.process_time()
            clf = CorrectiveBoostClassifier().refit(booster, X["train"])
            cpu_refit = time.process_time() - t0
            cpu_total += cpu_refit
            dev = selection_score(fd.truth["dev"], predict(clf, X["dev"], fd), fd.multilabel)
            points.append({"size": size, "rounds": booster.n_rounds_, "dev": dev, "cpu_boost": cpu_boost,
                           "cpu_refit": cpu_refit, "n_rules": len(clf.rules_),
                           "C": [i["C"] for i in clf.refit_info_]})
            if best is None or dev > best[0]:
                best = (dev, points[-1], _test_outputs(clf, X["test"], fd))
            if all(h.stopped for h in booster.heads_):
                break
        cpu_total += cpu_boost
    dev, point, outputs = best
    return {"dev": dev, "selected": {"size": point["size"], "rounds": point["rounds"], "C": point["C"]},
            **outputs, "cpu_fit": point["cpu_boost"] + point["cpu_refit"],
            "cpu_total": cpu_total, "n_rules": point["n_rules"], "cpu_boost": point["cpu_boost"],
            "cpu_refit": point["cpu_refit"], "checkpoints": points}


def _ngrams(n: int):
    def analyzer(tokens: List[str]) -> List[str]:
        return [" ".join(tokens[i:i + k]) for k in range(1, n + 1) for i in range(len(tokens) - k + 1)]
    return analyzer


def fit_nbsvm(fd: FoldData, system: Dict[str, Any], cfg: Dict[str, Any]) -> Dict[str, Any]:
    """NBSVM (Wang & Manning 2012), one-vs-rest for several classes; C chosen on dev."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.svm import LinearSVC

    t0 = time.process_time()
    vec = CountVectorizer(analyzer=_ngrams(system["n"]), binary=True)
    X = {"train": vec.fit_transform(fd.tokens["train"]).tocsr().astype(numpy.float64)}
    cpu_vec = time.process_time() - t0
    X["dev"] = vec.transform(fd.tokens["dev"]).astype(numpy.float64)
    X["test"] = vec.transform(fd.tokens["test"]).astype(numpy.float64)
    Y = encode_truth(fd.y_train, fd.classes, fd.multilabel)
    if fd.multilabel:
        heads = list(range(len(fd.classes)))
        targets = [numpy.where(Y[:, k] == 1, 1, -1) for k in heads]
    elif len(fd.classes) == 2:
        pos = fd.classes.index(fd.positive) if fd.positive in fd.classes else 1
        heads = [pos]
        targets = [numpy.where(Y == pos, 1, -1)]
    else:
        heads = list(range(len(fd.classes)))
        targets = [numpy.where(Y == k, 1, -1) for k in heads]
    best, cpu_total = None, cpu_vec
    for C in cfg["c_grid"]:
        t0 = time.process_time()
        scores = {k: numpy.zeros((X[k].shape[0], len(heads))) for k in ("dev", "test")}
        for j, y in enumerate(targets):
            p = numpy.asarray(X["train"][y > 0].sum(axis=0)).ravel() + 1.0
            q = numpy.asarray(X["train"][y < 0].sum(axis=0)).ravel() + 1.0
            r = numpy.log(p / p.sum()) - numpy.log(q / q.sum())
            model = LinearSVC(C=C, max_iter=20000).fit(X["train"].multiply(r).tocsr(), y)
            w = model.coef_.ravel()
            w = (1 - NB_BETA) * numpy.abs(w).mean() + NB_BETA * w
            for k in scores:
                scores[k][:, j] = X[k].multiply(r).tocsr() @ w + model.intercept_[0]
        cpu = time.process_time() - t0
        cpu_total += cpu
        pred = {k: margins_to_pred(scores[k], [fd.classes[h] for h in heads], fd.classes, fd.multilabel, fd.positive)
                for k in scores}
        dev = selection_score(fd.truth["dev"], pred["dev"], fd.multilabel)
        if best is None or dev > best[0]:
            best = (dev, C, pred["test"], cpu)
    dev, C, test_pred, cpu = best
    return {"dev": dev, "selected": {"C": C}, "test_pred": test_pred, "cpu_fit": cpu_vec + cpu,
            "cpu_total": cpu_total, "n_features": len(vec.vocabulary_)}


def _fit_selecting(fd: FoldData, system: Dict[str, Any], cfg: Dict[str, Any]) -> Dict[str, Any]:
    if system["family"] == "subtree":
        fit = fit_corrective if system["learner"] == "corrective" else fit_subtree_linear
        return fit(fd, system, cfg)
    if system["peer"] == "nbsvm":
        return fit_nbsvm(fd, system, cfg)
    if system["peer"] == "textcat":
        return fit_textcat(fd, system["ngram"], cfg)
    return fit_sklearn(fd, system["peer"], cfg)


def _only_selected(system: Dict[str, Any], cfg: Dict[str, Any], selected: Dict[str, Any]):
    """The system and settings narrowed to the one candidate the dev split chose."""
    system, cfg = dict(system), dict(cfg)
    if "size" in selected:
        cfg["sizes"] = cfg["corrective_sizes"] = [selected["size"]]
    if "rounds" in selected:
        cfg["checkpoints"] = [selected["rounds"]]
    if "epochs" in selected:
        cfg["epochs"] = selected["epochs"]
    if "dev_Cs" in system:
        system["dev_Cs"] = [selected["C"]]
    elif system["family"] == "peer" and "C" in selected:
        cfg["c_grid"] = [selected["C"]]
    return system, cfg


def fit_one(fd: FoldData, system: Dict[str, Any], cfg: Dict[str, Any], keep: bool = False) -> Dict[str, Any]:
    """Choose the system's settings on the dev split; with `cfg["refit"]`, fit the chosen settings again on
    train + dev (fd.refit) and score that fit on the test split, as 10-fold cross-validation trains on 9 folds."""
    res = _fit_selecting(fd, system, cfg)
    if not cfg.get("refit"):
        return res
    refit = _fit_selecting(fd.refit, *_only_selected(system, cfg, res["selected"]))
    tests = {k: v for k, v in refit.items() if k.startswith("test_") or k in ("n_rules", "n_features")}
    return {**res, **tests, "selected_fit": {k: res[k] for k in ("cpu_fit", "n_rules") if k in res},
            "cpu_fit": refit["cpu_fit"], "cpu_total": res["cpu_total"] + refit["cpu_total"],
            "refit_selected": refit["selected"]}


def choice_splits(corpus, split: Split, k: int) -> List[Split]:
    """k folds of the split's train + dev documents (stratified by class for single-label corpora; seed 0) for
    choosing among systems: a fold's held-out part is both its dev and its test part (the settings are fixed)."""
    from sklearn.model_selection import KFold, StratifiedKFold

    merged = numpy.concatenate([split.train, split.dev])
    if corpus.multilabel:
        parts = KFold(k, shuffle=True, random_state=SEED).split(merged)
    else:
        parts = StratifiedKFold(k, shuffle=True, random_state=SEED).split(merged, [corpus.labels[i] for i in merged])
    return [Split(f"{split.name}-choice{j + 1}of{k}", numpy.sort(merged[tr]), numpy.sort(merged[te]),
                  numpy.sort(merged[te])) for j, (tr, te) in enumerate(parts)]


def fit_chosen(fd: FoldData, system: Dict[str, Any], cfg: Dict[str, Any], keep: bool = False) -> Dict[str, Any]:
    """Fit the settings that the dev split chose (`system["selected"]`) on a choice fold; score its held-out part
    (its decisions are kept, not its probabilities)."""
    res = _fit_selecting(fd, *_only_selected(system, cfg, system["selected"]))
    res.pop("test_proba", None)
    return res


def choice_scores(corpus, sd, texts: List[str], systems, cfg: Dict[str, Any], cache_path, jobs: int
                  ) -> Dict[str, List[float]]:
    """Per subtree system, per split: the cross-validation score on train + dev that chooses the best system
    (`cfg["choice_folds"]` folds, pooled), each fold fitted with the settings chosen on the split's dev part."""
    k = cfg["choice_folds"]
    scores: Dict[str, List[float]] = {s["name"]: [] for s in systems if s["family"] == "subtree"}
    for split in corpus.splits:
        folds = choice_splits(corpus, split, k)
        chosen = [dict(s, selected=load_fit(cache_path(split, s["name"]))["selected"]) for s in systems
                  if s["family"] == "subtree"]
        train_missing(replace(corpus, splits=folds), sd, texts, chosen, cfg, cache_path, jobs, fit=fit_chosen,
                      keep_rules=())
        truth = numpy.concatenate([encode_truth([corpus.labels[i] for i in f.test], corpus.classes,
                                                corpus.multilabel) for f in folds])
        for s in chosen:
            pred = numpy.concatenate([numpy.asarray(load_fit(cache_path(f, s["name"]))["test_pred"]) for f in folds])
            scores[s["name"]].append(selection_score(truth, pred, corpus.multilabel))
    return scores


def refit_fold(corpus, split, sd, texts: List[str]) -> FoldData:
    """fold_data of the split, with fd.refit: the same split whose training part includes the dev documents."""
    fd = fold_data(corpus, split, sd, texts)
    merged = Split(split.name, numpy.concatenate([split.train, split.dev]), split.dev, split.test)
    fd.refit = fold_data(corpus, merged, sd, texts)
    return fd


def calibration(truth: numpy.ndarray, proba: numpy.ndarray, multilabel: bool, bins: int = 10) -> Dict[str, float]:
    """Log-loss and expected calibration error of probabilities against the truth (encode_truth's encoding)."""
    eps = 1e-15
    P = numpy.clip(proba, eps, 1 - eps)
    if multilabel:
        ll = -numpy.mean(truth * numpy.log(P) + (1 - truth) * numpy.log(1 - P))
        conf, hit = P.ravel(), truth.ravel().astype(float)
    else:
        ll = -numpy.mean(numpy.log(P[numpy.arange(len(truth)), truth]))
        conf = P.max(axis=1)
        hit = (P.argmax(axis=1) == truth).astype(float)
    idx = numpy.minimum((conf * bins).astype(int), bins - 1)
    ece = sum(abs(conf[idx == b].mean() - hit[idx == b].mean()) * (idx == b).sum() for b in range(bins) if (idx == b).any())
    return {"log_loss": float(ll), "ece": float(ece / len(conf)), "min_probability": float(proba.min())}


def run_corpus(name: str, cfg: Dict[str, Any], data: Path, profile: str, jobs: int,
               only: Optional[List[str]] = None, fit_cache: Optional[Path] = None) -> Dict[str, Any]:
    t_start = time.time()
    corpus, texts = load_corpus(name, cfg, data)
    sd = load_source(data, corpus.source, trees=cfg["trees"], log=log)
    systems = [s for s in system_list(trees=sd.tree is not None, corpus=name) if only is None or s["name"] in only]
    key = {k: v for k, v in cfg.items() if k != "choice_folds"}
    run_dir = (fit_cache or OUT / "linear_runs") / profile / f"{name}_{cfg_hash(dict(key, solver=SOLVER))}"
    run_dir.mkdir(parents=True, exist_ok=True)

    def cache_path(split, sname: str) -> Path:
        return run_dir / f"{split.name}__{sname.replace(' ', '_').replace('/', '_')}.json"

    train_missing(corpus, sd, texts, systems, cfg, cache_path, jobs, fit=fit_one, keep_rules=(),
                  make_fold=refit_fold if cfg.get("refit") else fold_data)
    choice = choice_scores(corpus, sd, texts, systems, cfg, cache_path, jobs) if cfg.get("choice_folds") else {}
    score_key = "micro_f1" if corpus.multilabel else "accuracy"
    rows: Dict[str, List[Dict[str, Any]]] = {s["name"]: [] for s in systems}
    preds: Dict[str, List[numpy.ndarray]] = {s["name"]: [] for s in systems}
    probas: Dict[str, List[numpy.ndarray]] = {s["name"]: [] for s in systems}
    truths = []
    for split in corpus.splits:
        fd = fold_data(corpus, split, sd, texts)
        truths.append(fd.truth["test"])
        for s in systems:
            res = load_fit(cache_path(split, s["name"]))
            res["test"] = metrics(fd.truth["test"], res["test_pred"], corpus.classes, corpus.multilabel)
            if "test_proba" in res:
                res["calibration"] = calibration(fd.truth["test"], res["test_proba"], corpus.multilabel)
                probas[s["name"]].append(res["test_proba"])
            preds[s["name"]].append(numpy.asarray(res["test_pred"]))
            rows[s["name"]].append({k: v for k, v in res.items() if k not in ("test_pred", "test_proba")})
    truth = numpy.concatenate(truths)
    correct = {n: correctness(truth, numpy.concatenate(p)) for n, p in preds.items()}
    summary = {}
    for s in systems:
        n, r = s["name"], rows[s["name"]]
        summary[n] = {
            "family": s["family"], "score": mean_std([x["test"][score_key] for x in r]),
            "accuracy": mean_std([x["test"]["accuracy"] for x in r]),
            "pooled": metrics(truth, numpy.concatenate(preds[n]), corpus.classes, corpus.multilabel),
            "dev": mean_std([x["dev"] for x in r]), "cpu_fit": mean_std([x["cpu_fit"] for x in r]),
            "cpu_total": mean_std([x["cpu_total"] for x in r]),
            "peak_rss_mb": max(x["peak_rss_mb"] for x in r), "rss_growth_mb": max(x["rss_growth_mb"] for x in r),
            "selected": [x["selected"] for x in r],
        }
        if n in choice:
            summary[n]["choice"] = mean_std(choice[n])
        if probas[n]:
            summary[n]["calibration"] = calibration(truth, numpy.concatenate(probas[n]), corpus.multilabel)
        if "n_rules" in r[0]:
            summary[n]["n_rules"] = mean_std([x["n_rules"] for x in r])
        if "cpu_refit" in r[0]:
            summary[n]["refit_share"] = mean_std([x["cpu_refit"] / max(x["cpu_boost"], 1e-9) for x in r])
    subtree = [s["name"] for s in systems if s["family"] == "subtree"]
    peers = [s["name"] for s in systems if s["family"] == "peer"]
    tests = [dict(a=a, b=b, **mcnemar(correct[a], correct[b])) for a in subtree for b in peers]
    return jsonable({
        "title": CORPUS_TITLES[name], "run": profile, "settings": cfg, "classes": corpus.classes,
        "multilabel": corpus.multilabel, "n_docs": len(corpus), "score_name": score_key,
        "n_splits": len(corpus.splits), "wall_seconds": time.time() - t_start,
        "summary": summary, "per_split": rows, "mcnemar": tests,
    })


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the small run")
    ap.add_argument("--profile", choices=sorted(PROFILES), default=None)
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--corpora", nargs="+", default=None)
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--systems", nargs="+", default=None,
                    help="run only these systems (a partial run: write it elsewhere with --docs)")
    ap.add_argument("--refit", action="store_true",
                    help="fit the settings chosen on dev again on train + dev before scoring the test split")
    ap.add_argument("--fit-cache", type=Path, default=None,
                    help="keep each fit's result (JSON) under this folder instead of "
                         "bench/_out/experiments/linear_runs: a folder committed beside a partial run lets another "
                         "machine resume it")
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--docs", type=Path, default=None,
                    help="write the results here instead of docs/ (a smoke run writes beside its cache)")
    args = ap.parse_args(argv)
    profile = args.profile or ("quick" if args.quick else "full")
    docs = args.docs or (OUT / "smoke" if profile == "smoke" else DOCS)
    results_path = docs / "results_linear.json"
    from .linear_report import render

    def load() -> Dict[str, Any]:
        return json.loads(results_path.read_text(encoding="utf8")) if results_path.is_file() else {"corpora": {}}

    if args.report_only:
        render(load(), docs)
        return 0
    settings = PROFILES[profile]
    for name in args.corpora or list(settings):
        log(f"=== {name} ({profile} run)")
        cfg = dict(settings[name], refit=True) if args.refit else settings[name]
        res = run_corpus(name, cfg, args.data, profile, max(1, args.jobs), args.systems, args.fit_cache)
        results = load()
        results["corpora"][name] = dict(res, provenance=provenance())
        if args.systems:
            results["partial"] = sorted(set(results.get("partial", [])) | set(args.systems))
        results["corpora"] = {k: results["corpora"][k] for k in sorted(results["corpora"], key=_order)}
        docs.mkdir(parents=True, exist_ok=True)
        tmp = results_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(results, separators=(",", ":")) + "\n", encoding="utf8")
        os.replace(tmp, results_path)
        render(results, docs)
    return 0


def _order(name: str) -> int:
    return CORPUS_ORDER.index(name) if name in CORPUS_ORDER else len(CORPUS_ORDER)


if __name__ == "__main__":
    sys.exit(main())
