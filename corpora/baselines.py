"""Print the accuracy table of corpora/README.md: simple classifiers on the embedded reviews.

    python corpora/baselines.py

Logistic regression on word counts (scikit-learn defaults, `max_iter=5000`) and
`TreeBoostClassifier` (300 rounds) on the sentences of each review as chains of
lowercase words without punctuation (spaCy's sentencizer), each trained on
`reviews/train.jsonl` and scored on `dev.jsonl` and `test.jsonl`.
"""
import json
from pathlib import Path
from typing import List, Tuple

REVIEWS = Path(__file__).resolve().parent / "reviews"
HEADER = ["| classifier | features | dev accuracy | test accuracy |", "|---|---|---|---|"]


def _read(name: str) -> Tuple[List[str], List[str]]:
    rows = [json.loads(line) for line in (REVIEWS / f"{name}.jsonl").read_text(encoding="utf8").splitlines()]
    return [r["text"] for r in rows], [r["label"] for r in rows]


def table() -> List[str]:
    """RETURNS (List[str]): The markdown table, one line per row."""
    import spacy
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    from spacy_treeboost import Forest, TreeBoostClassifier

    train, dev, test = _read("train"), _read("dev"), _read("test")
    lines = list(HEADER)
    for features, ngrams in (("unigrams", (1, 1)), ("unigrams + bigrams", (1, 2))):
        vectorizer = CountVectorizer(ngram_range=ngrams)
        model = LogisticRegression(max_iter=5000).fit(vectorizer.fit_transform(train[0]), train[1])
        accs = [model.score(vectorizer.transform(x), y) for x, y in (dev, test)]
        lines.append(f"| logistic regression | {features} | {accs[0]:.2f} | {accs[1]:.2f} |")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")

    def forest(texts: List[str]) -> Forest:
        return Forest.from_sentences([[[t.lower_ for t in s if not t.is_punct] for s in doc.sents]
                                      for doc in nlp.pipe(texts)])

    X_train, X_dev, X_test = forest(train[0]), forest(dev[0]), forest(test[0])
    for algorithm, name in (("frequency", "TreeBoost +FQ"), ("bact", "TreeBoost BACT")):
        for size, features in ((1, "words (subtrees of 1 node)"), (2, "word bigrams (subtrees of ≤ 2 nodes)")):
            clf = TreeBoostClassifier(algorithm, max_pattern_size=size, n_rounds=300).fit(X_train, train[1])
            accs = [sum(p == g for p, g in zip(clf.predict(X), y)) / len(y) for X, y in ((X_dev, dev[1]), (X_test, test[1]))]
            lines.append(f"| {name} | {features} | {accs[0]:.2f} | {accs[1]:.2f} |")
    return lines


if __name__ == "__main__":
    print("\n".join(table()))
