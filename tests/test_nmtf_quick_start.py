"""Every shipped NMTF config, trained as the README says, reads plain opinions the way its lexicon does, writes
probabilities that are never exactly 0 or 1, and shows its score in `spacy evaluate`."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
import srsly

from spacy_treeboost.datasets.readers import JsonlCorpus
from spacy_treeboost.nmtf.lexicons import read_jsonl_lexicon

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted((ROOT / "configs").glob("nmtf*.cfg"))
LEXICON = ROOT / "corpora" / "lexicons" / "sentiment_small.jsonl"
OPINIONS = ROOT / "corpora" / "opinions"
POSITIVE = [
    "A great, fun and brilliant film.",
    "The acting was superb and the plot was wonderful.",
    "great",
    "A charming, clever and delightful comedy.",
    "The cast was excellent and the story was gripping.",
]
NEGATIVE = [
    "An awful, boring mess.",
    "The plot was dull and the acting was terrible.",
    "awful",
    "A tedious, clumsy and pointless sequel.",
    "The script was weak and the ending was disappointing.",
]
LEARNERS = {
    "spacy_treeboost.SSMFLKSelfTrained.v1": {},
    "spacy_treeboost.SSMFLKNaiveBayes.v1": {},
    "spacy_treeboost.SSMFLK.v1": {},
    "spacy_treeboost.MFLK.v1": {},
}


def test_the_sentences_are_unnegated_lexicon_opinions():
    lexicon = read_jsonl_lexicon(LEXICON)
    for texts, own, other in ((POSITIVE, lexicon.positive, lexicon.negative),
                              (NEGATIVE, lexicon.negative, lexicon.positive)):
        for text in texts:
            words = {w.strip(".,").lower() for w in text.split()}
            assert words & own and not words & other and not words & {"not", "never", "no", "hardly"}, text


def check_reads_the_lexicon(nlp):
    for text in POSITIVE:
        assert nlp(text).cats["POS"] > 0.5, text
    for text in NEGATIVE:
        assert nlp(text).cats["POS"] < 0.5, text


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=[c.name for c in CONFIGS])
def test_shipped_config_trained_as_the_readme_says(config, tmp_path):
    """`python -m spacy train CONFIG --output ...` from the repository root, then `spacy evaluate` on dev."""
    out = tmp_path / "out"
    result = subprocess.run([sys.executable, "-m", "spacy", "train", str(config), "--output", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "CATS_SCORE" in result.stdout
    nlp = spacy.load(out / "model-best")
    check_reads_the_lexicon(nlp)
    dev = [json.loads(line)["text"] for line in (OPINIONS / "dev.jsonl").open(encoding="utf-8")]
    probabilities = [doc.cats["POS"] for doc in nlp.pipe(dev)]
    assert all(0.0 < p < 1.0 for p in probabilities)
    best = srsly.read_json(out / "model-best" / "meta.json")["performance"]["cats_score"]
    assert best >= 0.85
    assert srsly.read_json(out / "model-last" / "meta.json")["performance"]["cats_score"] == best
    spacy_file = tmp_path / "dev.spacy"
    converted = subprocess.run([sys.executable, "-m", "spacy_treeboost", "convert", str(OPINIONS / "dev.jsonl"),
                                str(spacy_file)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert converted.returncode == 0, converted.stderr
    evaluated = subprocess.run([sys.executable, "-m", "spacy", "evaluate", str(out / "model-best"), str(spacy_file),
                                "--output", str(tmp_path / "scores.json")],
                               cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    line = next(line for line in evaluated.stdout.splitlines() if line.startswith("TEXTCAT"))
    scores = srsly.read_json(tmp_path / "scores.json")
    assert f"{100 * scores['cats_score']:.2f}" in line
    assert scores["cats_score"] >= 0.85 and 0 < scores["cats_log_loss"] < 0.5 and 0 <= scores["cats_ece"] < 0.2


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_every_learner_reads_the_lexicon_on_the_shipped_corpus(learner):
    """In-process training on corpora/opinions, all iterations (the last model, not the best checkpoint)."""
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("nmtf_sentiment", config={"positive_label": "POS", "negative_label": "NEG",
                                                  "learner": {"@learners": learner, **LEARNERS[learner]}})
    examples = list(JsonlCorpus(OPINIONS / "train.jsonl", labels=["POS", "NEG"], unlabeled=True)(nlp))
    pipe.initialize(lambda: examples, nlp=nlp, lexicon=read_jsonl_lexicon(LEXICON))
    for _ in range(10):
        nlp.update(examples[:8])
    assert pipe._estimator.n_iter_ > 0
    check_reads_the_lexicon(nlp)
    dev = [json.loads(line)["text"] for line in (OPINIONS / "dev.jsonl").open(encoding="utf-8")]
    assert all(0.0 < doc.cats["POS"] < 1.0 for doc in nlp.pipe(dev))


@pytest.fixture(scope="module")
def quick_start_nlp():
    """The quick-start config (configs/nmtf_sentiment.cfg) initialized in-process on its own data and lexicon."""
    from spacy.training.initialize import init_nlp
    from spacy.util import load_config

    config = load_config(ROOT / "configs" / "nmtf_sentiment.cfg", overrides={
        "paths.train": str(OPINIONS / "train.jsonl"), "paths.dev": str(OPINIONS / "dev.jsonl"),
        "paths.lexicon": str(LEXICON)})
    return init_nlp(config)


def lexicon_pairs(words, n=200, seed=0):
    """A seeded sample of n sentences made of two different words."""
    import itertools
    import random

    pairs = list(itertools.combinations(sorted(words), 2))
    return [f"{a} {b}" for a, b in random.Random(seed).sample(pairs, min(n, len(pairs)))]


@pytest.mark.parametrize("polarity", ["positive", "negative"])
def test_two_lexicon_words_of_one_polarity_read_as_that_polarity(quick_start_nlp, polarity):
    """Sentences made only of two words of the shipped lexicon, most of which the training documents never
    show, take the lexicon's polarity."""
    lexicon = read_jsonl_lexicon(LEXICON)
    words = getattr(lexicon, polarity)
    pipe = quick_start_nlp.get_pipe("nmtf_sentiment")
    assert len(words - set(pipe.vocabulary)) > len(words) / 2
    wrong = [doc.text for doc in quick_start_nlp.pipe(lexicon_pairs(words))
             if (doc.cats["POS"] > 0.5) != (polarity == "positive")]
    assert wrong == []


def test_the_quick_start_keeps_its_dev_accuracy_and_training_steps_change_nothing(quick_start_nlp):
    dev = list(JsonlCorpus(OPINIONS / "dev.jsonl", labels=["POS", "NEG"])(quick_start_nlp))
    scores = quick_start_nlp.evaluate(dev)
    assert scores["cats_score"] >= 0.95
    quick_start_nlp.get_pipe("nmtf_sentiment").update([])
    assert quick_start_nlp.evaluate(dev)["cats_score"] == scores["cats_score"]
    assert quick_start_nlp("Terrible, awful, a waste of money.").cats["POS"] < 0.5
