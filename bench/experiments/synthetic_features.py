"""The default learner's feature map and C on the shared generator's 60-word documents (partial study).

    python -m bench.experiments.synthetic_features [--n 32000] [--variants default presence_C0.1 ...]

Generates (once, cached under bench/_out/synthetic_features/) the shared generator's 128k-document corpus with
`--words 20 --sents 3 --seed 13` and 4,000 test documents, fits `SubtreeLinearClassifier` variants on the
first N training documents in this process and prints one JSON line per variant: test accuracy, the fit's
CPU seconds and its phases. It compares naive Bayes scaled presence (the default) with plain presence at
several C, the question behind the default learner's accuracy gap to LinearSVC on large corpora.
"""
import argparse
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict

import numpy

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench" / "_out" / "synthetic_features"
GEN = ROOT.parent / "shared" / "bench" / "gen_synth_trees.py"
VARIANTS: Dict[str, Dict[str, Any]] = {
    "default": {},
    "C0.1": {"C": 0.1},
    "beta1": {"nb_beta": 1.0},
    "presence": {"features": "presence"},
    "presence_C0.25": {"features": "presence", "C": 0.25},
    "presence_C0.1": {"features": "presence", "C": 0.1},
    "presence_C0.03": {"features": "presence", "C": 0.03},
    "presence_C0.1_tol1e-2": {"features": "presence", "C": 0.1, "tol": 0.01},
    "presence_C0.1_uncalibrated": {"features": "presence", "C": 0.1, "calibrate": False},
    "auto": {"features": "auto"},
    "tol1e-2": {"tol": 0.01},
    "C0.1_tol1e-2": {"C": 0.1, "tol": 0.01},
    "presence_C0.1_rare0": {"features": "presence", "C": 0.1, "keep_rare_up_to": 0},
    "C0.1_rare0": {"C": 0.1, "keep_rare_up_to": 0},
    "tfidf": {"features": "tfidf"},
    "log1p": {"features": "log1p"},
    "squared_hinge": {"loss": "squared_hinge"},
}


def corpus(n_train: int) -> Path:
    out = OUT / f"words60_{n_train}"
    if not (out / "test.tree").is_file():
        if not GEN.is_file():
            sys.exit(f"the shared generator is not at {GEN}: this study needs ../shared/bench beside the checkout")
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(GEN), "--out-dir", str(out), "--n-train", str(n_train), "--n-test",
                        "4000", "--words", "20", "--sents", "3", "--seed", "13"], check=True,
                       stdout=subprocess.DEVNULL)
    return out


def main(argv=None) -> None:
    from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
    from spacy_treeboost.trees.bact import read_bact

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=32000)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    args = parser.parse_args(argv)
    root = corpus(128000)
    with open(root / "train.tree", encoding="utf-8") as f:
        X, y = read_bact(list(itertools.islice(f, args.n)))
    Xt, yt = read_bact(root / "test.tree")
    for name in args.variants:
        t0 = time.process_time()
        clf = SubtreeLinearClassifier(**VARIANTS[name]).fit(X, y)
        cpu = time.process_time() - t0
        acc = 100.0 * float(numpy.mean(numpy.asarray(clf.predict(Xt)) == numpy.asarray(yt)))
        print(json.dumps({"n": args.n, "variant": name, "settings": VARIANTS[name], "accuracy": round(acc, 2),
                          "fit_cpu_seconds": round(cpu, 1), "phases": {k: round(v, 2) for k, v in clf.timings_.items()},
                          "n_features": clf.n_features_}), flush=True)


if __name__ == "__main__":
    main()
