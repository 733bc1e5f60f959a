"""The default learner against NBSVM and LinearSVC on small and full corpora: docs/results_default.{json,md}.

    python -m bench.experiments.default_learner [--data ../shared/data] [--corpora movie_reviews ...]
        [--systems default nbsvm ...] [--protocol small|full|both] [--draws 10]
    python -m bench.experiments.default_learner --report-only

Two protocols, both on the splits of `bench.experiments.data` (the test splits choose nothing):

- small: 1,600 training documents per task, drawn (seed = draw) from the training part of a split, as
  most users have; the dev split of that split scores the variants that settle the defaults; the test
  split is scored once per system. Movie reviews' training part is 1,600 documents, so its ten draws
  are its ten folds; sentence polarity uses folds 0-9 with a draw of 1,600 from each training part; R8
  and R10 draw ten times from the ModApte training part (without its dev tenth), tested on ModApte test.
- full: every training and dev document of a split (movie reviews and sentence polarity: 9 folds, ten
  test folds; R8, R10: ModApte train), since the default component chooses nothing on dev.

Systems: "default" is `SubtreeLinearClassifier()` with the component's defaults over the component's
default trees (word chains, lower case); peers are NBSVM 1-2 with Wang & Manning's settings (binarized
1-2-grams, naive Bayes log-count ratios with alpha 1, an L2-SVM with C = 1, interpolation beta = 0.25;
one-vs-rest for several classes) and LinearSVC on sublinear tf-idf 1-2-grams with C chosen on the dev
split from C_GRID (a stronger peer than its default C). Other systems are the learner's variants that
chose the defaults on the dev splits. Each fit is cached as JSON under bench/_out/experiments/default/;
`--report-only` keeps the previous report's rows and dev cells whose fits are not cached, marked as not re-run.
"""
import argparse
import json
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy

from bench.harness import provenance

from .data import OUT, ROOT, Split, load_source
from .run import load_corpus
from .stats import correctness, mcnemar, mean_std, selection_score
from .systems import encode_truth, margins_to_pred

DOCS = ROOT / "docs"
RESULTS = DOCS / "results_default.json"
CACHE = OUT / "default"
CORPORA = ("movie_reviews", "sentence_polarity", "r8", "r10")
SMALL_N = 1600
C_GRID = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]
PEERS = ("nbsvm", "linearsvc")
# what features = "auto" offers the folds, in the cache key of its fits: 2 = the tf-idf family beside presence
AUTO_REVISION = 2
# learner settings of the named variants (besides "default": the learner's own defaults)
VARIANTS: Dict[str, Dict[str, Any]] = {
    # the learner's defaults before they were settled here
    "previous": {"C": None, "cv": 5, "nb_beta": 1.0, "calibrate": False, "keep_rare_up_to": 0},
    "C0.1": {"C": 0.1}, "C1": {"C": 1.0}, "C10": {"C": 10.0},
    "ms1": {"min_support": 1}, "beta": {"nb_beta": 0.25}, "hinge": {"loss": "squared_hinge"},
    "size2": {"max_pattern_size": 2},
    "nbsvm_like": {"min_support": 1, "loss": "squared_hinge", "C": 1.0, "nb_beta": 0.25, "max_pattern_size": 2},
    "ms1_beta": {"min_support": 1, "nb_beta": 0.25},
    "ms1_beta_s2": {"min_support": 1, "nb_beta": 0.25, "max_pattern_size": 2},
    "nbsvm_like_log": {"min_support": 1, "C": 1.0, "nb_beta": 0.25, "max_pattern_size": 2},
    "nbsvm_like_s3": {"min_support": 1, "loss": "squared_hinge", "C": 1.0, "nb_beta": 0.25},
    "ms1_beta_C1": {"min_support": 1, "nb_beta": 0.25, "C": 1.0},
    "auto_C1": {"C": 1.0, "nb_beta": None, "calibrate": True, "cv": 3, "selection": "log_loss"},
    "acc_C1_ms1_s2": {"C": 1.0, "nb_beta": None, "calibrate": True, "cv": 3, "min_support": 1, "max_pattern_size": 2},
    "acc_C1_ms1": {"C": 1.0, "nb_beta": None, "calibrate": True, "cv": 3, "min_support": 1},
    "acc_3C_ms1": {"Cs": [0.1, 1.0, 10.0], "nb_beta": None, "calibrate": True, "cv": 3, "min_support": 1},
    "rare2": {"C": 1.0, "nb_beta": None, "calibrate": True, "cv": 3, "keep_rare_up_to": 2},
    "rare2_3C": {"Cs": [0.1, 1.0, 10.0], "nb_beta": None, "calibrate": True, "cv": 3, "keep_rare_up_to": 2},
    "rare2_ll": {"C": 1.0, "nb_beta": None, "calibrate": True, "cv": 3, "keep_rare_up_to": 2, "selection": "log_loss"},
    "rare2_hinge": {"C": 1.0, "nb_beta": None, "calibrate": True, "cv": 3, "keep_rare_up_to": 2,
                    "loss": "squared_hinge"},
    "tfidf_C10": {"features": "tfidf", "C": 10.0, "min_support": 1, "loss": "squared_hinge"},
    "tfidf_C10_cal": {"features": "tfidf", "C": 10.0, "min_support": 1},
    "acc_C1": {"C": 1.0, "nb_beta": None, "calibrate": True, "cv": 3},
    "auto_C1_ms1": {"C": 1.0, "nb_beta": None, "calibrate": True, "cv": 3, "min_support": 1, "selection": "log_loss"},
    "auto_cvC": {"nb_beta": None, "calibrate": True, "selection": "log_loss"},
    "auto_C1_cv5": {"C": 1.0, "nb_beta": None, "calibrate": True, "cv": 5, "selection": "log_loss"},
    "presence_C0.25": {"features": "presence", "C": 0.25},
    "presence_C1": {"features": "presence", "C": 1.0},
    "presence_C0.1": {"features": "presence", "C": 0.1},
    "auto": {"features": "auto"},
    "auto_s2": {"max_pattern_size": 2},
    "auto_s3": {"max_pattern_size": 3},  # the default before max_pattern_size = None
    "auto_uncal": {"calibrate": False},
    "auto_hinge": {"loss": "squared_hinge"},
    "auto_ms1": {"min_support": 1},
    "auto_beta": {"nb_beta": 0.25},
    "nb_tron": {"features": "nb"},  # the default before features = "auto"
    "tfidf_C3_cal": {"features": "tfidf", "C": 3.0},
    "auto_3C_ms1": {"Cs": [0.1, 1.0, 10.0], "nb_beta": None, "calibrate": True, "cv": 3, "min_support": 1,
                    "selection": "log_loss"},
    "auto_ms3": {"min_support": 3}, "auto_ms5": {"min_support": 5},
    # the tf-idf family of "auto": its loss and C
    "tfidf_C30": {"features": "tfidf", "C": 30.0}, "tfidf_C100": {"features": "tfidf", "C": 100.0},
    "tfidf_sqh_C1": {"features": "tfidf", "C": 1.0, "loss": "squared_hinge"},
    "tfidf_sqh_C3": {"features": "tfidf", "C": 3.0, "loss": "squared_hinge"},
    "tfidf_sqh_C10": {"features": "tfidf", "C": 10.0, "loss": "squared_hinge"},
    "tfidf_sqh_C30": {"features": "tfidf", "C": 30.0, "loss": "squared_hinge"},
}


def small_splits(corpus, draws: int) -> List[Split]:
    """The small protocol's splits: at most SMALL_N training documents drawn from each split's training part."""
    out = []
    for d in range(draws):
        s = corpus.splits[d % len(corpus.splits)]
        rng = numpy.random.default_rng(d)
        train = s.train if len(s.train) <= SMALL_N else numpy.sort(rng.choice(s.train, SMALL_N, replace=False))
        out.append(Split(f"draw{d}", train, s.dev, s.test))
    return out


def full_splits(corpus) -> List[Split]:
    """Every split as it is; the systems fit on its training and dev documents (`Task.refit`)."""
    return list(corpus.splits)


class Task:
    """One split's inputs: forests and tokens of train / dev / test, labels and truth. With `refit`, "fit"
    is train + dev (what a system that chooses nothing fits on, and what a peer that chooses C on dev
    refits on), else train."""

    def __init__(self, corpus, split: Split, sd, refit: bool = False) -> None:
        fit = numpy.sort(numpy.concatenate([split.train, split.dev])) if refit else split.train
        parts = {"train": split.train, "dev": split.dev, "test": split.test, "fit": fit}
        idx = {k: corpus.source_index[v] for k, v in parts.items()}
        self.corpus, self.split, self.refit = corpus, split, refit
        self.y_train = [corpus.labels[i] for i in split.train]
        self.y_fit = [corpus.labels[i] for i in fit]
        self.truth = {k: encode_truth([corpus.labels[i] for i in getattr(split, k)], corpus.classes,
                                      corpus.multilabel) for k in ("dev", "test")}
        self.forest = {k: sd.chain.subset(v) for k, v in idx.items()}
        self.tokens = {k: [sd.tokens[i] for i in v] for k, v in idx.items()}

    def pred(self, F: numpy.ndarray, heads: List[str]) -> numpy.ndarray:
        c = self.corpus
        return margins_to_pred(F, heads, c.classes, c.multilabel, c.positive)

    def targets(self):
        """(head class names, one +-1 target vector per head of the "fit" documents), one-vs-rest."""
        c = self.corpus
        Y = encode_truth(self.y_fit, c.classes, c.multilabel)
        if c.multilabel:
            return c.classes, [numpy.where(Y[:, k] == 1, 1, -1) for k in range(len(c.classes))]
        if len(c.classes) == 2:
            pos = c.classes.index(c.positive)
            return [c.positive], [numpy.where(Y == pos, 1, -1)]
        return c.classes, [numpy.where(Y == k, 1, -1) for k in range(len(c.classes))]


def fit_subtree(task: Task, settings: Dict[str, Any]) -> Dict[str, Any]:
    from spacy_treeboost.learning.classifier import margins_to_proba
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier

    t0 = time.process_time()
    clf = SubtreeLinearClassifier(**settings).fit(task.forest["fit"], task.y_fit)
    cpu = time.process_time() - t0
    out: Dict[str, Any] = {"cpu": cpu, "C": [i["C"] for i in clf.fit_info_], "n_rules": len(clf.rules_)}
    for k in ("dev", "test"):
        F = clf.rules_.margins(task.forest[k])
        out[f"{k}_pred"] = task.pred(F, clf.rules_.heads)
        if k == "test":
            P = margins_to_proba(F[:, 0] if F.shape[1] == 1 else F, clf.classes_, clf.heads_[0].name,
                                 multilabel=clf.multilabel_)
            cols = {str(c): j for j, c in enumerate(clf.classes_)}
            proba = numpy.zeros((P.shape[0], len(task.corpus.classes)))
            for j, c in enumerate(task.corpus.classes):
                if c in cols:
                    proba[:, j] = P[:, cols[c]]
            out["test_proba"] = proba
    return out


def _bigrams(tokens: List[str]) -> List[str]:
    return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]


def fit_nbsvm(task: Task) -> Dict[str, Any]:
    """NBSVM 1-2 with Wang & Manning's settings (C = 1, beta = 0.25), one-vs-rest."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.svm import LinearSVC

    t0 = time.process_time()
    vec = CountVectorizer(analyzer=_bigrams, binary=True)
    X = {"fit": vec.fit_transform(task.tokens["fit"]).astype(numpy.float64)}
    X.update({k: vec.transform(task.tokens[k]).astype(numpy.float64) for k in ("dev", "test")})
    heads, targets = task.targets()
    F = {k: numpy.zeros((X[k].shape[0], len(heads))) for k in ("dev", "test")}
    for j, y in enumerate(targets):
        p = numpy.asarray(X["fit"][y > 0].sum(axis=0)).ravel() + 1.0
        q = numpy.asarray(X["fit"][y < 0].sum(axis=0)).ravel() + 1.0
        r = numpy.log(p / p.sum()) - numpy.log(q / q.sum())
        model = LinearSVC(C=1.0, max_iter=20000).fit(X["fit"].multiply(r).tocsr(), y)
        w = 0.75 * numpy.abs(model.coef_.ravel()).mean() + 0.25 * model.coef_.ravel()
        for k in F:
            F[k][:, j] = X[k].multiply(r).tocsr() @ w + model.intercept_[0]
    cpu = time.process_time() - t0
    return {"cpu": cpu, **{f"{k}_pred": task.pred(F[k], heads) for k in F}}


def fit_linearsvc(task: Task) -> Dict[str, Any]:
    """LinearSVC on sublinear tf-idf 1-2-grams, C chosen on dev (fitted on train), then, with `task.refit`,
    fitted again with that C on train + dev."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    t0 = time.process_time()
    vec = TfidfVectorizer(analyzer=_bigrams, sublinear_tf=True)
    X = {"train": vec.fit_transform(task.tokens["train"])}
    X.update({k: vec.transform(task.tokens[k]) for k in ("dev", "test")})
    c = task.corpus
    y = encode_truth(task.y_train, c.classes, c.multilabel)
    best = None
    for C in C_GRID:
        model = LinearSVC(C=C, max_iter=20000)
        model = (OneVsRestClassifier(model) if c.multilabel else model).fit(X["train"], y)
        dev = selection_score(task.truth["dev"], model.predict(X["dev"]), c.multilabel)
        if best is None or dev > best[0]:
            best = (dev, C, model.predict(X["dev"]), model.predict(X["test"]))
    if task.refit:
        vec = TfidfVectorizer(analyzer=_bigrams, sublinear_tf=True)
        A = vec.fit_transform(task.tokens["fit"])
        model = LinearSVC(C=best[1], max_iter=20000)
        model = (OneVsRestClassifier(model) if c.multilabel else model).fit(
            A, encode_truth(task.y_fit, c.classes, c.multilabel))
        best = (*best[:3], model.predict(vec.transform(task.tokens["test"])))
    cpu = time.process_time() - t0
    return {"cpu": cpu, "C": best[1], "dev_pred": best[2], "test_pred": best[3]}


def settings_key(system: str) -> str:
    """What a cached fit of a system must have been made with: its learner's settings (peers: its name)."""
    if system in PEERS:
        return system
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier

    from spacy_treeboost.learning.learner import EXECUTION_PARAMS

    settings = SubtreeLinearClassifier(**({} if system == "default" else VARIANTS[system])).get_params()
    key = {k: v for k, v in settings.items() if k not in EXECUTION_PARAMS}
    if settings["features"] == "auto":
        key["auto_revision"] = AUTO_REVISION
    return json.dumps(key, sort_keys=True, default=list)


def fit_system(task: Task, system: str) -> Dict[str, Any]:
    if system == "nbsvm":
        return fit_nbsvm(task)
    if system == "linearsvc":
        return fit_linearsvc(task)
    return fit_subtree(task, {} if system == "default" else VARIANTS[system])


def _cached(path: Path, key: str, fn: Callable[[], Dict[str, Any]]) -> Dict[str, Any]:
    if path.is_file():
        with open(path, encoding="utf8") as f:
            data = json.load(f)
        if data.get("settings_key") == key:
            return {k: (numpy.asarray(v) if k.endswith(("_pred", "_proba")) else v) for k, v in data.items()}
    out = {**fn(), "settings_key": key, "provenance": provenance()}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf8") as f:
        json.dump({k: (v.tolist() if isinstance(v, numpy.ndarray) else v) for k, v in out.items()}, f)
    tmp.replace(path)
    return out


def _is_cached(path: Path, key: str) -> bool:
    if not path.is_file():
        return False
    with open(path, encoding="utf8") as f:
        return json.load(f).get("settings_key") == key


def run(corpora, systems, protocols, draws: int, data: Path, log=print, cached_only: bool = False) -> Dict[str, Any]:
    results: Dict[str, Any] = {}
    for name in corpora:
        corpus, _ = load_corpus(name, {"trees": False}, data)
        sd = load_source(data, corpus.source, trees=False, log=log)
        for protocol in protocols:
            splits = small_splits(corpus, draws) if protocol == "small" else full_splits(corpus)
            per: Dict[str, List[Dict[str, Any]]] = {s: [] for s in systems}
            for split in splits:
                task = Task(corpus, split, sd, refit=protocol == "full")
                for system in systems:
                    path = CACHE / protocol / name / split.name / f"{system}.json"
                    t0 = time.time()
                    if cached_only and not _is_cached(path, settings_key(system)):
                        continue
                    out = _cached(path, settings_key(system), lambda: fit_system(task, system))
                    out["dev"] = selection_score(task.truth["dev"], out["dev_pred"], corpus.multilabel)
                    out["test"] = selection_score(task.truth["test"], out["test_pred"], corpus.multilabel)
                    out["correct"] = correctness(task.truth["test"], out["test_pred"])
                    per[system].append(out)
                    log(f"{protocol} {name} {split.name} {system}: dev {out['dev']:.4f} test {out['test']:.4f} "
                        f"cpu {out['cpu']:.1f} s ({time.time() - t0:.0f} s)")
            results.setdefault(name, {})[protocol] = per
    return results


def summarize(results: Dict[str, Any]) -> Dict[str, Any]:
    summary: Dict[str, Any] = {}
    for name, protocols in results.items():
        for protocol, per in protocols.items():
            rows = {}
            for system, fits in per.items():
                if not fits:
                    continue
                rows[system] = {"test": mean_std([100 * f["test"] for f in fits]),
                                "dev": mean_std([100 * f["dev"] for f in fits]),
                                "cpu": float(numpy.median([f["cpu"] for f in fits])), "n": len(fits)}
                if system not in PEERS:
                    for peer in PEERS:
                        if peer in per and len(per[peer]) == len(fits):
                            a = numpy.concatenate([f["correct"] for f in fits])
                            b = numpy.concatenate([f["correct"] for f in per[peer]])
                            rows[system][f"mcnemar_{peer}"] = mcnemar(a, b)
            summary.setdefault(name, {})[protocol] = rows
    return summary


def carry_previous(summary: Dict[str, Any], dev_table: Dict[str, Dict[str, float]],
                   previous: Dict[str, Any]) -> Dict[str, Any]:
    """Add to `summary` and `dev_table` the rows and cells of the previous report whose fits are not cached (not
    re-run here); return their places with the commits and machines that measured them, for the page to mark."""
    before = previous.get("carried") or {"rows": [], "cells": [], "provenance": []}
    out: Dict[str, Any] = {"rows": [], "cells": []}
    stamps: Dict[str, Any] = {}

    def carry(kind: str, place: List[str]) -> None:
        out[kind].append(place)
        for f in before["provenance"] if place in before[kind] else previous.get("provenance", []):
            stamps[json.dumps(f, sort_keys=True)] = f

    for name, protocols in previous.get("summary", {}).items():
        for protocol, rows in protocols.items():
            fresh = summary.setdefault(name, {}).setdefault(protocol, {})
            merged = {}
            for system, row in rows.items():
                merged[system] = fresh.get(system, row)
                if system not in fresh:
                    carry("rows", [name, protocol, system])
            summary[name][protocol] = {**merged, **fresh}
    for system, per in previous.get("dev_table", {}).items():
        for corpus, value in per.items():
            if corpus not in dev_table.get(system, {}):
                dev_table.setdefault(system, {})[corpus] = value
                carry("cells", [system, corpus])
    out["provenance"] = list(stamps.values())
    return out


def write_report(args: argparse.Namespace) -> None:
    from .default_report import render, variant_dev

    results = run(args.corpora, ["default", "nb_tron", *PEERS], ("small", "full"), args.draws, args.data,
                  log=lambda msg: None, cached_only=True)
    summary = summarize(results)
    tried = run(args.corpora, ["default", *VARIANTS, *PEERS], ("small",), 5, args.data, log=lambda msg: None,
                cached_only=True)
    dev_table = variant_dev(tried, 5)
    command = "python -m bench.experiments.default_learner"
    fits = [f for protocols in results.values() for per in protocols.values() for fs in per.values() for f in fs]
    stamps = list({json.dumps(f["provenance"], sort_keys=True): f["provenance"] for f in fits if f.get("provenance")}.values())
    previous = json.loads(RESULTS.read_text(encoding="utf8")) if RESULTS.is_file() else {}
    if not stamps:   # fits cached before they recorded their commit: keep the report's record
        stamps = previous.get("provenance", [])
    carried = carry_previous(summary, dev_table, previous)
    RESULTS.write_text(json.dumps({"summary": summary, "dev_table": dev_table, "variants": VARIANTS,
                                   "provenance": stamps, "carried": carried}, indent=1) + "\n", encoding="utf8")
    RESULTS.with_suffix(".md").write_text(render(summary, dev_table, VARIANTS, command, stamps, carried),
                                          encoding="utf8")
    print(RESULTS.with_suffix(".md").read_text(encoding="utf8"))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    parser.add_argument("--systems", nargs="+", default=["default", *PEERS])
    parser.add_argument("--protocol", choices=("small", "full", "both"), default="both")
    parser.add_argument("--draws", type=int, default=10)
    parser.add_argument("--summary", type=Path, default=None, help="write the summary as JSON here")
    parser.add_argument("--report-only", action="store_true",
                        help="write docs/results_default.{json,md} from the cached fits (fitting nothing)")
    args = parser.parse_args(argv)
    protocols = ("small", "full") if args.protocol == "both" else (args.protocol,)
    if args.report_only:
        write_report(args)
        return
    results = run(args.corpora, args.systems, protocols, args.draws, args.data)
    summary = summarize(results)
    for name, protocols_ in summary.items():
        for protocol, rows in protocols_.items():
            print(f"\n{name} ({protocol})")
            for system, row in rows.items():
                extra = " ".join(f"{k[8:]} {v['a_only']}/{v['b_only']} p={v['p']:.3g}" for k, v in row.items()
                                 if k.startswith("mcnemar_"))
                print(f"  {system:28s} test {row['test']['mean']:.2f} ± {row['test']['std']:.2f}  "
                      f"dev {row['dev']['mean']:.2f}  cpu {row['cpu']:.1f}  {extra}")
    if args.summary:
        with open(args.summary, "w", encoding="utf8") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
