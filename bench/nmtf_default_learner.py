"""The default learner of `nmtf_sentiment` against MFLK, the paper's SSMFLK and the supervised baselines, at 5 %
labelled: SSMFLK + naive Bayes (SSMFLKNaiveBayes) and a logistic regression trained on its classes
(SSMFLKSelfTrained, the default).

    python -m bench.nmtf_default_learner [--data ../shared/data] [--corpora sentence_polarity movie_reviews]

Same corpora, vocabulary, matrix, lexicon prior, dev part and labelled draws as bench/nmtf_experiments.py.
Two parts:

- selection (dev part, dev draws 101-108): the weight of naive Bayes in SSMFLKNaiveBayes (0 is the paper's
  SSMFLK) and what it counts (word presence or the matrix's weights), then SSMFLKSelfTrained (word presence)
  over four teacher weights and two values of lr_C. SSMFLKSelfTrained's teacher weight follows the mean number
  of distinct words per training document (`nb_weight` below `long_document_words`, `long_nb_weight` from it):
  sentence polarity's sentences (8 words) are short, movie reviews (204 words) long, so `nb_weight` is the
  self-trained weight best on the sentence polarity dev part, `long_nb_weight` the one best on the movie
  reviews dev part, and lr_C the value best on the mean of both at those weights;
- the 10 draws (seeds 0-9, 5 % labelled of each class) scored on the unlabelled documents of the test part
  (the other two thirds), as the label-fraction curves of bench/nmtf_experiments.py: MFLK, SSMFLK (the
  paper's model, pinned), SSMFLKNaiveBayes and SSMFLKSelfTrained with their defaults, LinearSVC on the L2 documents and
  multinomial naive Bayes on the counts, both trained on the labelled documents only.

Accuracies are transductive for MFLK and SSMFLK (argmax G, as in docs/nmtf_results.md) and for
SSMFLKNaiveBayes and SSMFLKSelfTrained (their `labels_`); the accuracy of the component's score
(`decision_function`: the fold-in for MFLK, SSMFLK and SSMFLKNaiveBayes, the logistic regression's margin for
SSMFLKSelfTrained) on the same documents is reported beside it. Log-loss and expected calibration error (10 equal-width bins) are those
of the probabilities the component writes: that score mapped by Platt scaling fitted on the labelled
documents (spacy_treeboost.nmtf.calibration).

Writes docs/nmtf_default_learner.{json,md}; rows are cached in bench/_out/nmtf_default_learner.json.
"""
import argparse
import json
import os
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from bench import nmtf_experiments as ne
from bench.harness import provenance, stamp
from spacy_treeboost.nmtf import MFLK, SSMFLK, SSMFLKNaiveBayes, SSMFLKSelfTrained, lexicon_prior
from spacy_treeboost.nmtf.hybrid import mean_distinct_words
from spacy_treeboost.nmtf.calibration import Calibration, expected_calibration_error, label_folds, log_loss

CACHE = ROOT / "bench" / "_out" / "nmtf_default_learner.json"
DOCS = ROOT / "docs"
FRACTION = 0.05
WEIGHTS = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5)
SELF_TRAINED_WEIGHTS = (0.05, 0.1, 0.2, 0.3)
FEATURES = ("binary", "weights")
LR_CS = (1.0, 10.0)
DEFAULT = SSMFLKSelfTrained()
HYBRID = "SSMFLK + naive Bayes"
DEFAULT_NAME = "SSMFLK + naive Bayes, self-trained (default)"
TEST_DRAWS = tuple(range(10))


def _save(cache: Dict[str, Any]) -> None:
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.with_suffix(".tmp").write_text(json.dumps(cache), encoding="utf-8")
    os.replace(CACHE.with_suffix(".tmp"), CACHE)


def _accuracy(labels: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean(labels == y))


def cross_fitted_scores(fit_scores: Any, y: np.ndarray, n_folds: int = 2) -> np.ndarray:
    """The score of each labelled document from a model fitted with its fold's labels hidden (0 for the others).

    fit_scores (Callable[[numpy.ndarray], numpy.ndarray]): Fits on labels y' (-1 for hidden ones), returns the
        scores of all training documents.
    y (numpy.ndarray): 0 (positive), 1 (negative) or -1 (unlabelled) per document.
    """
    y = np.asarray(y)
    folds = label_folds(y, n_folds)
    out = np.zeros(len(y))
    for fold in range(n_folds):
        held = folds == fold
        if held.any():
            out[held] = np.asarray(fit_scores(np.where(held, -1, y)))[held]
    return out


def _calibrated(model: MFLK, X, y: np.ndarray, labelled: np.ndarray, scored: np.ndarray) -> Dict[str, float]:
    """Accuracy of the component's score, log-loss and ECE of the component's probabilities on the scored documents: Platt
    scaling on the labelled documents' fold-in scores, cross-fitted (2 folds) for the models that use labels."""
    score = model.decision_function(X)
    partial = np.where(labelled, y, -1)
    if isinstance(model, SSMFLK):
        calibration_scores = cross_fitted_scores(
            lambda y_fold: type(model)(**model.get_params()).fit(X, y_fold).decision_function(X), partial)
    else:
        calibration_scores = score
    calibration = Calibration.fit(calibration_scores, partial)
    p = calibration.positive_probability(score[scored])
    truth = (y[scored] == 0).astype(np.float64)
    return {"score accuracy": float(np.mean((score[scored] >= 0) == (y[scored] == 0))),
            "log-loss": log_loss(p, truth), "ECE": expected_calibration_error(p, truth)}


def selection_draw(corpus: Dict[str, Any], seed: int) -> Dict[str, float]:
    X, y, F0 = corpus["X"], corpus["y"], corpus["F0"]
    labelled = ne.draw_labelled(y, FRACTION, seed)
    scored = corpus["dev"] & ~labelled
    partial = np.where(labelled, y, -1)
    row = {}
    ssmflk = SSMFLK(lexicon_prior=F0).fit(X, partial)
    row["nb_weight = 0 (SSMFLK)"] = _accuracy(ssmflk.labels_[scored], y[scored])
    for features in FEATURES:
        model = SSMFLKNaiveBayes(lexicon_prior=F0, nb_features=features).fit(X, partial)
        for w in WEIGHTS[1:]:
            model.set_params(nb_weight=w)
            row[f"nb_features = {features}, nb_weight = {w:g}"] = _accuracy(model.labels_[scored], y[scored])
    for w in SELF_TRAINED_WEIGHTS:
        for C in LR_CS:
            model = SSMFLKSelfTrained(lexicon_prior=F0, lr_C=C, nb_weight=w, long_nb_weight=w).fit(X, partial)
            row[f"self-trained, nb_weight = {w:g}, lr_C = {C:g}"] = _accuracy(model.labels_[scored], y[scored])
    return row


def test_draw(corpus: Dict[str, Any], seed: int, mflk: MFLK) -> Dict[str, float]:
    from sklearn.naive_bayes import MultinomialNB
    from sklearn.svm import LinearSVC

    X, y, F0 = corpus["X"], corpus["y"], corpus["F0"]
    labelled = ne.draw_labelled(y, FRACTION, seed)
    scored = ~corpus["dev"] & ~labelled
    partial = np.where(labelled, y, -1)
    row: Dict[str, float] = {"MFLK": _accuracy(mflk.labels_[scored], y[scored])}
    ss = SSMFLK(lexicon_prior=F0).fit(X, partial)
    row["SSMFLK (paper)"] = _accuracy(ss.labels_[scored], y[scored])
    hybrid = SSMFLKNaiveBayes(lexicon_prior=F0).fit(X, partial)
    row[HYBRID] = _accuracy(hybrid.labels_[scored], y[scored])
    default = type(DEFAULT)(lexicon_prior=F0).fit(X, partial)
    row[DEFAULT_NAME] = _accuracy(default.labels_[scored], y[scored])
    for name, model in (("MFLK", mflk), ("SSMFLK (paper)", ss), (HYBRID, hybrid), (DEFAULT_NAME, default)):
        for key, value in _calibrated(model, X, y, labelled, scored).items():
            row[f"{name}: {key}"] = value
    svm = LinearSVC(random_state=seed).fit(corpus["X_docs"][labelled], y[labelled])
    row["SVM"] = _accuracy(svm.predict(corpus["X_docs"][scored]), y[scored])
    nb = MultinomialNB().fit(corpus["counts"][labelled], y[labelled])
    row["Naive Bayes"] = _accuracy(nb.predict(corpus["counts"][scored]), y[scored])
    return row


def _table(rows: Dict[str, List[float]], base: str = "MFLK") -> List[str]:
    lines = ["| method | mean | sd | vs MFLK |", "|---|---|---|---|"]
    for method, values in rows.items():
        if ":" in method:
            continue
        lines.append(f"| {method} | {100 * np.mean(values):.2f} | {100 * np.std(values, ddof=1):.2f} | "
                     f"{100 * (np.mean(values) - np.mean(rows[base])):+.2f} |")
    return lines


def render(results: Dict[str, Any]) -> str:
    lines = ["# The default learner of nmtf_sentiment", "",
             "Generated by `python -m bench.nmtf_default_learner` (its docstring describes every row); accuracy in %, "
             f"{FRACTION:.0%} of each class labelled.", "", stamp(results.get("provenance")), ""]
    if results.get("partial"):
        lines += [f"**Partial**: {results['partial']}", ""]
    lines += ["## Selection (dev part, dev draws 101-108)", ""]
    names = list(results["selection"])
    if names:
        lines += ["| setting | " + " | ".join(f"{n}: mean ± sd" for n in names) + " |", "|---|" + "---|" * len(names)]
        settings = list(dict.fromkeys(k for rows in results["selection"].values() for k in rows))
        for k in settings:
            cells = [(f"{100 * np.mean(v):.2f} ± {100 * np.std(v, ddof=1):.2f}" if (v := results["selection"][n].get(k))
                      else "—") for n in names]
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
        lines.append("")
    selection = results["selection"]
    if selection:
        for name, rows in selection.items():
            trained = {k: np.mean(v) for k, v in rows.items() if k.startswith("self-trained")}
            best = max(trained, key=trained.get)
            words = results.get("words", {}).get(name)
            length = "" if words is None else (f"{words:.1f} distinct words per document: "
                                               f"{'long' if words >= DEFAULT.long_document_words else 'short'}; ")
            lines.append(f"- {name}: {length}best self-trained setting on its dev part: {best} "
                         f"({100 * trained[best]:.2f})")
        chosen = {}
        for name, rows in selection.items():
            trained = {k: np.mean(v) for k, v in rows.items() if k.startswith("self-trained")}
            chosen[name] = max(trained, key=trained.get).split(", lr_C")[0]
        for C in LR_CS:
            mean = np.mean([np.mean(selection[name][f"{chosen[name]}, lr_C = {C:g}"]) for name in selection])
            lines.append(f"- lr_C = {C:g} at those weights: mean {100 * mean:.2f} over the dev parts")
        lines += ["", f"The default learner is {type(DEFAULT).__name__} with nb_features = {DEFAULT.nb_features}, "
                      f"nb_weight = {DEFAULT.nb_weight:g} (short documents), long_nb_weight = "
                      f"{DEFAULT.long_nb_weight:g} (from {DEFAULT.long_document_words:g} distinct words per document "
                      f"on average), lr_C = {DEFAULT.lr_C:g} (nb_weight = 0 is the paper's SSMFLK).", ""]
    lines += ["",
              f"## Test part, {len(TEST_DRAWS)} draws (seeds {TEST_DRAWS[0]}-{TEST_DRAWS[-1]})", ""]
    for name, rows in results["test"].items():
        n = len(rows["MFLK"])
        lines += [f"### {name} ({n} draws)", ""] + _table(rows) + [""]
        lines += ["| model | score accuracy | log-loss | ECE |", "|---|---|---|---|"]
        for model in ("MFLK", "SSMFLK (paper)", HYBRID, DEFAULT_NAME):
            lines.append(f"| {model} | {100 * np.mean(rows[model + ': score accuracy']):.2f} | "
                         f"{np.mean(rows[model + ': log-loss']):.4f} | {np.mean(rows[model + ': ECE']):.4f} |")
        default = np.mean(rows[DEFAULT_NAME])
        mflk, ss = np.mean(rows["MFLK"]), np.mean(rows["SSMFLK (paper)"])
        best_sup = max(np.mean(rows["SVM"]), np.mean(rows["Naive Bayes"]))
        lines += ["", f"- default >= MFLK + 1.5 points: {100 * (default - mflk):+.2f}: "
                      f"**{'met' if default - mflk >= 0.015 else 'missed'}**",
                  f"- default >= max(SVM, naive Bayes) + 1 point: {100 * (default - best_sup):+.2f}: "
                  f"**{'met' if default - best_sup >= 0.01 else 'missed'}**",
                  f"- the paper's SSMFLK: {100 * (ss - mflk):+.2f} over MFLK, {100 * (ss - best_sup):+.2f} over the "
                  "better supervised baseline", ""]
    return "\n".join(lines)


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", nargs="+", default=["sentence_polarity", "movie_reviews"])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--skip-selection", action="store_true")
    args = ap.parse_args(argv)
    cache = json.loads(CACHE.read_text(encoding="utf-8")) if CACHE.is_file() else {}
    lexicon = ne.read_hu_liu_lexicon(args.data / ne.LEXICON)
    results: Dict[str, Any] = {"selection": {}, "test": {}}
    missing = []
    for name in args.corpora:
        corpus = ne.load_corpus(args.data, name)
        corpus["F0"] = lexicon_prior(corpus["vocabulary"], lexicon.positive, lexicon.negative)
        corpus["dev"] = ne.dev_part(len(corpus["y"]))
        results.setdefault("words", {})[name] = mean_distinct_words(corpus["X"])
        mflk = MFLK(lexicon_prior=corpus["F0"]).fit(corpus["X"])
        parts = ([] if args.skip_selection else [("selection", ne.DEV_DRAWS)]) + [("test", TEST_DRAWS)]
        for part, seeds in parts:
            rows: Dict[str, List[float]] = {}
            for seed in seeds:
                key = (f"{name}/{part}/{type(DEFAULT).__name__}/{DEFAULT.nb_weight:g}/{DEFAULT.long_nb_weight:g}/"
                       f"{DEFAULT.long_document_words:g}/{DEFAULT.lr_C:g}/{seed}")
                if part == "selection":
                    key = f"{name}/{part}/{seed}"
                if key not in cache:
                    cache[key] = selection_draw(corpus, seed) if part == "selection" else test_draw(corpus, seed, mflk)
                    _save(cache)
                    print(key, {k: round(v, 4) for k, v in cache[key].items()}, flush=True)
                for method, value in cache[key].items():
                    rows.setdefault(method, []).append(value)
            results[part].setdefault(name, rows)
    for name in args.corpora:
        if name not in results["test"] or len(results["test"][name]["MFLK"]) < len(TEST_DRAWS):
            missing.append(name)
    if missing:
        results["partial"] = f"not all draws of {', '.join(missing)} ran"
    results["provenance"] = provenance()
    (DOCS / "nmtf_default_learner.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (DOCS / "nmtf_default_learner.md").write_text(render(results) + "\n", encoding="utf-8")
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
