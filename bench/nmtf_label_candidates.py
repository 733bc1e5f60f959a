"""Other uses of a few labels beside the lexicon model, tried on the development parts before choosing the
default learner of `nmtf_sentiment` (docs/nmtf_sentiment.md, section "The default learner").

    python -m bench.nmtf_label_candidates [--corpora sentence_polarity movie_reviews]

Same corpora, matrix, lexicon prior, dev part and dev draws (101-108, 5 % labelled) as bench/nmtf_experiments.py
and bench/nmtf_default_learner.py; mean accuracy (%) on the unlabelled documents of the dev part. Rows:

- MFLK, SSMFLK (the paper's model) and SSMFLKNaiveBayes with its defaults;
- refitted naive Bayes: multinomial naive Bayes fitted on all documents, the labelled ones with their labels
  (weight lam) and the others with SSMFLK's classes (hard: argmax G; soft: G's rows normalized), on the matrix's
  weights (X) or on word counts; "+ EM" adds three rounds that refit it on its own posteriors;
- logistic regression (scikit-learn, L2, C) trained on the default learner's classes of the unlabelled documents
  (all of them, or the more confident half) and the true labels (weight lam), on X;
- stacking: a logistic regression of the labels on SSMFLK's and naive Bayes's (word presence) scores, both
  cross-fitted on two folds of the labelled documents as in the component's calibration, then applied to the
  full models' scores;
- the default learner over SSMFLK with `label_prior = 0.1`.

Writes docs/nmtf_label_candidates.{json,md}; rows are cached in bench/_out/nmtf_label_candidates.json.
"""
import argparse
import json
import os
from pathlib import Path
from typing import Any, Dict, List

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from bench import nmtf_experiments as ne
from spacy_treeboost.nmtf import MFLK, SSMFLK, SSMFLKNaiveBayes, lexicon_prior
from spacy_treeboost.nmtf.calibration import label_folds
from spacy_treeboost.nmtf.hybrid import naive_bayes_log_odds

CACHE = ROOT / "bench" / "_out" / "nmtf_label_candidates.json"
DOCS = ROOT / "docs"
FRACTION = 0.05


def _log_ratio(G: np.ndarray) -> np.ndarray:
    return np.log(G[:, 0]) - np.log(G[:, 1])


def _soft_nb(M, Q: np.ndarray) -> np.ndarray:
    """Log-odds of multinomial naive Bayes (Laplace smoothing) fitted with class weights Q (n, 2)."""
    sums = np.asarray(M.T @ Q)
    logp = np.log(sums + 1.0) - np.log((sums + 1.0).sum(axis=0))
    prior = np.log(Q.sum(axis=0))
    return np.asarray(M @ (logp[:, 0] - logp[:, 1])).ravel() + prior[0] - prior[1]


def one_draw(corpus: Dict[str, Any], seed: int, mflk: MFLK) -> Dict[str, float]:
    from sklearn.linear_model import LogisticRegression

    X, y, F0, counts = corpus["X"], corpus["y"], corpus["F0"], corpus["counts"]
    labelled = ne.draw_labelled(y, FRACTION, seed)
    scored = corpus["dev"] & ~labelled
    partial = np.where(labelled, y, -1)
    free = ~labelled

    def acc(score: np.ndarray) -> float:
        return float(np.mean(np.where(score >= 0, 0, 1)[scored] == y[scored]))

    row = {"MFLK": acc(_log_ratio(mflk.G_))}
    ss = SSMFLK(lexicon_prior=F0).fit(X, partial)
    s = _log_ratio(ss.G_)
    row["SSMFLK"] = acc(s)
    default = SSMFLKNaiveBayes(lexicon_prior=F0).fit(X, partial)
    row["SSMFLKNaiveBayes (defaults)"] = acc(default.transductive_score())
    for features, M in (("X", X), ("counts", counts)):
        for lam in (1.0, 5.0, 20.0):
            for kind in ("hard", "soft"):
                Q = np.eye(2)[ss.labels_] if kind == "hard" else ss.G_ / ss.G_.sum(axis=1, keepdims=True)
                Q = Q.copy()
                Q[labelled] = 0.0
                Q[labelled, y[labelled]] = lam
                t = _soft_nb(M, Q)
                row[f"refitted naive Bayes ({features}, {kind}, lam = {lam:g})"] = acc(t)
                for _ in range(3):
                    p = 1.0 / (1.0 + np.exp(-np.clip(t, -30, 30)))
                    Q = np.stack([p, 1 - p], axis=1)
                    Q[labelled] = 0.0
                    Q[labelled, y[labelled]] = lam
                    t = _soft_nb(M, Q)
                row[f"refitted naive Bayes ({features}, {kind}, lam = {lam:g}) + EM"] = acc(t)
    z = default.transductive_score()
    target = np.where(z >= 0, 0, 1)
    target[labelled] = y[labelled]
    for share in (0.5, 1.0):
        idx = np.flatnonzero(free)
        keep = np.concatenate([idx[np.argsort(-np.abs(z[idx]), kind="stable")[: int(share * len(idx))]],
                               np.flatnonzero(labelled)])
        for lam in (1.0, 10.0):
            weight = np.where(labelled, lam, 1.0)
            for C in (1.0, 10.0):
                lr = LogisticRegression(C=C, max_iter=2000).fit(X[keep], target[keep], sample_weight=weight[keep])
                row[f"logistic regression on the default's classes ({share:.0%}, lam = {lam:g}, C = {C:g})"] = acc(
                    -lr.decision_function(X))
    presence = (X > 0).astype(np.float64)
    folds = label_folds(partial, 2)
    s_cf, t_cf = np.zeros(len(y)), np.zeros(len(y))
    for fold in range(2):
        held = folds == fold
        y_fold = np.where(held, -1, partial)
        s_fold = _log_ratio(SSMFLK(lexicon_prior=F0).fit(X, y_fold).G_)
        coef, intercept = naive_bayes_log_odds(presence, y_fold, 1.0)
        t_fold = presence @ coef + intercept
        s_cf[held] = (s_fold / s_fold[y_fold < 0].std())[held]
        t_cf[held] = (t_fold / t_fold[y_fold < 0].std())[held]
    coef, intercept = naive_bayes_log_odds(presence, partial, 1.0)
    t = presence @ coef + intercept
    full = np.stack([s / s[free].std(), t / t[free].std()], axis=1)
    for C in (0.1, 1.0, 100.0):
        lr = LogisticRegression(C=C).fit(np.stack([s_cf, t_cf], axis=1)[labelled], y[labelled])
        row[f"stacking (C = {C:g})"] = acc(-(full @ lr.coef_[0] + lr.intercept_[0]))
    with_prior = SSMFLKNaiveBayes(lexicon_prior=F0, label_prior=0.1).fit(X, partial)
    row["SSMFLKNaiveBayes (defaults), label_prior = 0.1"] = acc(with_prior.transductive_score())
    return row


def render(results: Dict[str, Any]) -> str:
    lines = ["# Other uses of the labels (development parts)", "",
             "Generated by `python -m bench.nmtf_label_candidates` (its docstring describes every row); mean accuracy "
             f"(%) on the unlabelled documents of the dev part over the dev draws {ne.DEV_DRAWS[0]}-{ne.DEV_DRAWS[-1]}, "
             f"{FRACTION:.0%} of each class labelled.", ""]
    for name, rows in results.items():
        base = np.mean(rows["MFLK"])
        lines += [f"## {name}", "", "| method | accuracy | sd | vs MFLK |", "|---|---|---|---|"]
        lines += [f"| {k} | {100 * np.mean(v):.2f} | {100 * np.std(v, ddof=1):.2f} | {100 * (np.mean(v) - base):+.2f} |"
                  for k, v in rows.items()]
        lines.append("")
    return "\n".join(lines)


def main(argv: List[str] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", nargs="+", default=["sentence_polarity", "movie_reviews"])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args(argv)
    cache = json.loads(CACHE.read_text(encoding="utf-8")) if CACHE.is_file() else {}
    lexicon = ne.read_hu_liu_lexicon(args.data / ne.LEXICON)
    results: Dict[str, Any] = {}
    for name in args.corpora:
        corpus = ne.load_corpus(args.data, name)
        corpus["F0"] = lexicon_prior(corpus["vocabulary"], lexicon.positive, lexicon.negative)
        corpus["dev"] = ne.dev_part(len(corpus["y"]))
        mflk = MFLK(lexicon_prior=corpus["F0"]).fit(corpus["X"])
        rows: Dict[str, List[float]] = {}
        for seed in ne.DEV_DRAWS:
            key = f"{name}/{seed}"
            if key not in cache:
                cache[key] = one_draw(corpus, seed, mflk)
                CACHE.parent.mkdir(parents=True, exist_ok=True)
                CACHE.with_suffix(".tmp").write_text(json.dumps(cache), encoding="utf-8")
                os.replace(CACHE.with_suffix(".tmp"), CACHE)
                print(key, flush=True)
            for method, value in cache[key].items():
                rows.setdefault(method, []).append(value)
        results[name] = rows
    (DOCS / "nmtf_label_candidates.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    (DOCS / "nmtf_label_candidates.md").write_text(render(results) + "\n", encoding="utf-8")
    print(render(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
