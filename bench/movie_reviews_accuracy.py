"""Dev accuracy of trained pipelines on movie reviews fold 9.

    python -m bench.movie_reviews_accuracy training/mr_chain/model-best [more pipelines ...]

Train them first with the configs, e.g.
    MR=../shared/data/movie_review_polarity_v2/movie_review_polarity_v2.jsonl
    python -m spacy train configs/chain_sentiment.cfg --output training/mr_chain --paths.train $MR --paths.dev $MR \
        --corpora.train.folds "[0,1,2,3,4,5,6,7,8]" --corpora.dev.folds "[9]" \
        --training.max_steps 200 --training.eval_frequency 20 --training.patience 100
    python -m spacy train configs/dependency_sentiment.cfg --output training/mr_dep --paths.parser en_core_web_sm \
        (same paths and settings)
"""
import json
import sys
from pathlib import Path

import spacy

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "movie_review_polarity_v2" / "movie_review_polarity_v2.jsonl"


def main() -> None:
    rows = [json.loads(line) for line in open(DATA, encoding="utf8")]
    dev = [r for r in rows if r["fold"] == 9]
    for path in sys.argv[1:]:
        nlp = spacy.load(path)
        pipe = nlp.get_pipe("treeboost_textcat")
        correct = sum(max(doc.cats, key=doc.cats.get) == r["label"] for doc, r in zip(nlp.pipe(r["text"] for r in dev), dev))
        print(f"{path}: {pipe.n_rounds} rounds, dev accuracy {correct / len(dev):.4f} ({correct}/{len(dev)})")


if __name__ == "__main__":
    main()
