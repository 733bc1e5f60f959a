"""A small lexicon, corpus and trained nmtf_sentiment pipeline shared by the tests."""
import spacy
from spacy.training import Example

from spacy_treeboost.nmtf import SSMFLK
from spacy_treeboost.nmtf.lexicons import Lexicon


LEXICON = Lexicon(["good", "great", "superb", "fun"], ["bad", "awful", "boring", "dull"])
TEXTS = [
    ("a good and great film with a superb cast", "pos"),
    ("what a bad , awful and boring plot", "neg"),
    ("great fun , good acting", "pos"),
    ("dull and bad , an awful script", "neg"),
    ("superb film , great story , fun", "pos"),
    ("boring , dull story and bad acting", "neg"),
    ("the cast and the film", None),
    ("good story but boring acting", None),
]


def make_examples(nlp, texts=TEXTS):
    examples = []
    for text, label in texts:
        cats = {} if label is None else {"pos": float(label == "pos"), "neg": float(label == "neg")}
        examples.append(Example.from_dict(nlp.make_doc(text), {"cats": cats}))
    return examples


ESTIMATOR_SETTINGS = set(SSMFLK().get_params())


def make_nlp(use_labels=True, **config):
    """The component; estimator settings go into its learner block (SSMFLK, or MFLK without labels)."""
    learner = {"@learners": "spacy_treeboost.SSMFLK.v1" if use_labels else "spacy_treeboost.MFLK.v1"}
    learner.update({k: config.pop(k) for k in list(config) if k in ESTIMATOR_SETTINGS})
    nlp = spacy.blank("en")
    nlp.add_pipe("nmtf_sentiment", config={"positive_label": "pos", "negative_label": "neg", "iterations_per_update": 5,
                                           "learner": learner, **config})
    return nlp


def train(nlp, steps=4):
    examples = make_examples(nlp)
    nlp.get_pipe("nmtf_sentiment").initialize(lambda: examples, nlp=nlp, lexicon=LEXICON)
    for _ in range(steps):
        losses = nlp.update(examples[:2])
    return examples, losses
