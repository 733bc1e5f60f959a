"""A small version of the papers' comparison table, from the review corpus in corpora/.

BACT (Kudo & Matsumoto 2004), frequency-aware boosting (+FQ, Iwakura 2013) and the default subtree-linear
learner, each trained on the word chains of corpora/reviews/train.jsonl and scored on dev.jsonl and
test.jsonl: accuracy, rules and CPU seconds. Run by `spacy project run paper-table`.

    python scripts/paper_table.py metrics/paper_table.md
"""
import json
import sys
import time
from pathlib import Path
from typing import List, Tuple

import spacy

from spacy_treeboost import SubtreeLinearClassifier, TreeBoostClassifier
from spacy_treeboost.trees.doc_trees import TreeSpec, docs_to_forest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpora" / "reviews"


def read(split: str, nlp: spacy.Language) -> Tuple[object, List[str]]:
    records = [json.loads(line) for line in (CORPUS / f"{split}.jsonl").open(encoding="utf8") if line.strip()]
    docs = list(nlp.pipe(r["text"] for r in records))
    return docs_to_forest(docs, TreeSpec("chain", ["LOWER"], ["IS_SPACE", "IS_PUNCT"])), [r["label"] for r in records]


def main(output: str) -> None:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    train, y_train = read("train", nlp)
    dev_docs = {split: read(split, nlp) for split in ("dev", "test")}
    systems = [
        ("BACT (AdaBoost, 1,000 rounds)", TreeBoostClassifier("bact", max_pattern_size=3, n_rounds=1000)),
        ("+FQ frequency-aware boosting (1,000 rounds)", TreeBoostClassifier("frequency", max_pattern_size=3,
                                                                            n_rounds=1000)),
        ("subtree-linear (the default learner)", SubtreeLinearClassifier()),
    ]
    rows = ["| system | dev accuracy | test accuracy | rules | CPU s |", "|---|---|---|---|---|"]
    for name, clf in systems:
        clock = time.process_time()
        clf.fit(train, y_train)
        seconds = time.process_time() - clock
        scores = [clf.score(*dev_docs[split]) for split in ("dev", "test")]
        rules = sum(len(list(clf.rules_.rules(h))) for h in range(len(clf.rules_.heads)))
        rows.append(f"| {name} | {100 * scores[0]:.2f} | {100 * scores[1]:.2f} | {rules} | {seconds:.1f} |")
    header = ("# Subtree classifiers on corpora/reviews\n\nWord chains of 400 training reviews, scored on 100 dev and "
              "100 test reviews (`python scripts/paper_table.py`; CPU seconds vary by machine).\n\n")
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    Path(output).write_text(header + "\n".join(rows) + "\n", encoding="utf8")
    print("\n".join(rows))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "metrics/paper_table.md")
