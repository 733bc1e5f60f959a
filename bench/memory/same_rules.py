"""The learned model's sha256 for a matrix of boosting settings, to check that a kernel change keeps the rules.

Run it once per build (kernels built in place in each checkout) and compare the outputs line by line:
    PYTHONPATH=<checkout A> python -m bench.memory.same_rules TRAIN.tree 150 > a.txt
    PYTHONPATH=<checkout B> python -m bench.memory.same_rules TRAIN.tree 150 > b.txt
    diff <(cut -d' ' -f1-5 a.txt) <(cut -d' ' -f1-5 b.txt)
Settings: frequency with the iwakura and z criteria, presence, bact, three classes (made from the binary labels
and the document index) with frequency and bact, and two workers; size 3, min support 1. The last column is CPU.
"""
import hashlib
import sys
import time

from spacy_treeboost.learning.classifier_files import classifier_to_bytes
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.trees.bact import read_bact


def main() -> None:
    forest, labels = read_bact(sys.argv[1])
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 150
    three = [("abc"[i % 3] if label == "+1" else "abc"[(i // 3) % 3]) for i, label in enumerate(labels)]
    runs = [("frequency", "iwakura", "binary", 1), ("frequency", "z", "binary", 1), ("presence", "iwakura", "binary", 1),
            ("bact", "iwakura", "binary", 1), ("frequency", "iwakura", "three", 1), ("bact", "iwakura", "three", 1),
            ("frequency", "iwakura", "binary", 2)]
    for algorithm, criterion, classes, workers in runs:
        t0 = time.process_time()
        clf = TreeBoostClassifier(algorithm, criterion=criterion, n_rounds=rounds, max_pattern_size=3, min_support=1,
                                  n_workers=workers)
        clf.fit(forest, labels if classes == "binary" else three)
        sha = hashlib.sha256(classifier_to_bytes(clf)).hexdigest()[:16]
        print(algorithm, criterion, classes, workers, sha, f"{time.process_time() - t0:.1f}s", flush=True)


if __name__ == "__main__":
    main()
