"""Why the NMTF quick start inverted polarity on corpora/reviews, and what it does on corpora/opinions.

    python -m bench.nmtf_quick_start_diagnosis

For each shipped corpus (training file, dev file) with the shipped lexicon, the component's representation
(lower-cased tokens, 5,000 most document-frequent words without stop words, L2 documents, unit-norm word rows)
and SSMFLK with the component's settings fitted on the training file (its labelled lines; the others
unlabelled), prints: vocabulary and lexicon words in it; how often positive and negative lexicon words occur in
positive and negative training reviews; S; the cosine of the two columns of F S; on how many lexicon words F and
F S agree with the lexicon; the dev accuracy and how many dev probabilities the old normalization
g / (g_pos + g_neg) puts at exactly 0 or 1, after 10 and 100 iterations; and the fold-in of "great" and "awful".
The figures are quoted in docs/nmtf_sentiment.md.
"""
import json
from pathlib import Path

import numpy as np
import spacy

ROOT = Path(__file__).resolve().parents[1]

from spacy_treeboost.nmtf import SSMFLK, document_term_matrix, lexicon_prior
from spacy_treeboost.nmtf.lexicons import read_jsonl_lexicon
from spacy_treeboost.pipeline.nmtf_documents import training_matrix

NLP = spacy.blank("en")


def load(path: Path):
    records = [json.loads(line) for line in path.open(encoding="utf-8")]
    tokens = [[t.lower_ for t in NLP.make_doc(r["text"]) if not t.is_space] for r in records]
    y = np.array([-1 if r.get("label") is None else 0 if r["label"] == "POS" else 1 for r in records])
    return tokens, y


def diagnose(corpus: str) -> None:
    lexicon = read_jsonl_lexicon(ROOT / "corpora" / "lexicons" / "sentiment_small.jsonl")
    train, y = load(ROOT / "corpora" / corpus / "train.jsonl")
    dev, y_dev = load(ROOT / "corpora" / corpus / "dev.jsonl")
    vocabulary, X, weights = training_matrix(train, 5000, "l2", True)
    F0 = lexicon_prior(vocabulary, lexicon.positive, lexicon.negative)
    in_lexicon = F0.sum(axis=1) > 0
    print(f"## corpora/{corpus}: {len(train)} training documents ({int((y >= 0).sum())} labelled), "
          f"{len(vocabulary)} vocabulary words, {int(in_lexicon.sum())} in the lexicon")
    for side, words in (("positive", lexicon.positive), ("negative", lexicon.negative)):
        counts = [sum(w in words for w in doc) for doc in train]
        print(f"{side} lexicon words: {sum(c for c, k in zip(counts, y) if k == 0)} times in labelled POS reviews, "
              f"{sum(c for c, k in zip(counts, y) if k == 1)} in labelled NEG reviews")
    X_dev = document_term_matrix(dev, vocabulary, norm="l2", word_weights=weights)
    for n_iter in (10, 100):
        model = SSMFLK(lexicon_prior=F0, max_iter=n_iter).fit(X, y)
        B = model.F_ @ model.S_
        cosine = B[:, 0] @ B[:, 1] / np.prod(np.linalg.norm(B, axis=0))
        expected = np.argmax(F0[in_lexicon], axis=1)
        p = model.predict_proba(X_dev)[:, 0]
        print(f"- {n_iter} iterations: S = {np.round(model.S_, 3).tolist()}, cosine of F S's columns {cosine:.4f}; "
              f"F agrees with the lexicon on {int((model.word_polarity()[in_lexicon] == expected).sum())}, F S on "
              f"{int((np.argmax(B[in_lexicon], axis=1) == expected).sum())} lexicon words; dev accuracy "
              f"{np.mean(model.predict(X_dev) == y_dev):.3f}, dev probabilities at exactly 0 or 1: "
              f"{int(np.sum((p == 0) | (p == 1)))} of {len(p)}")
        for word in ("great", "awful"):
            x = document_term_matrix([[word]], vocabulary, norm="l2", word_weights=weights)
            print(f"  '{word}': F S row {np.round(np.asarray(x @ B).ravel(), 3).tolist()}, "
                  f"fold-in g {np.round(model.fold_in(x).ravel(), 3).tolist()}")
    print()


if __name__ == "__main__":
    for name in ("reviews", "opinions"):
        diagnose(name)
