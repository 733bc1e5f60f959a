"""The small labelled texts that the treeboost_textcat test modules train on."""
from spacy.language import Language
from spacy.training import Example

TRAIN = [
    ("this movie was good and fun", "POS"),
    ("not good at all , boring", "NEG"),
    ("good good good acting", "POS"),
    ("the plot was not fun", "NEG"),
    ("a fun and good film", "POS"),
    ("boring and not good", "NEG"),
]


def make_examples(nlp: Language, data=TRAIN, labels=("NEG", "POS")):
    out = []
    for text, label in data:
        cats = {l: float(l == label) for l in labels}
        out.append(Example.from_dict(nlp.make_doc(text), {"cats": cats}))
    return out
