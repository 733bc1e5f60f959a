"""nmtf_sentiment's scores under spaCy's cats_* keys (what `spacy evaluate` prints), with log-loss and ECE, and
beside treeboost_textcat in one pipeline."""
import warnings

import pytest
import spacy
from spacy.training import Example

from spacy_treeboost.nmtf.lexicons import Lexicon
from spacy_treeboost.pipeline.nmtf_factory import DEFAULT_NMTF_SCORE_WEIGHTS

LEXICON = Lexicon(["good", "great", "superb", "fun"], ["bad", "awful", "boring", "dull"])
DATA = [("a good and great film", "POS", "FILM"), ("a bad and awful film", "NEG", "FILM"),
        ("great fun , good phone", "POS", "PHONE"), ("dull and bad phone", "NEG", "PHONE"),
        ("superb film , great story", "POS", "FILM"), ("boring , dull phone", "NEG", "PHONE"),
        ("good fun phone", "POS", "PHONE"), ("awful boring film", "NEG", "FILM")]


def pipeline(prefix=None):
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat", config={"learner": {"@learners": "spacy_treeboost.SubtreeBoost.v1",
                                                          "algorithm": "frequency"}, "rounds_per_update": 20})
    scorer = {} if prefix is None else {"scorer": {"@scorers": "spacy_treeboost.nmtf_scorer.v2", "prefix": prefix}}
    nlp.add_pipe("nmtf_sentiment", config={"positive_label": "POS", "negative_label": "NEG", **scorer})
    examples = []
    for text, s, t in DATA:
        cats = {"POS": float(s == "POS"), "NEG": float(s == "NEG"), "FILM": float(t == "FILM"), "PHONE": float(t == "PHONE")}
        examples.append(Example.from_dict(nlp.make_doc(text), {"cats": cats}))
    return nlp, examples


def test_default_keys_are_spacys_with_log_loss_and_ece():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("nmtf_sentiment", config={"positive_label": "POS", "negative_label": "NEG"})
    examples = [Example.from_dict(nlp.make_doc(text), {"cats": {"POS": float(s == "POS"), "NEG": float(s == "NEG")}})
                for text, s, _ in DATA]
    pipe.initialize(lambda: examples, nlp=nlp, lexicon=LEXICON)
    nlp.update(examples)
    scores = nlp.evaluate(examples)
    assert scores["cats_score"] == 1.0 and scores["cats_score_desc"] == "macro F"
    assert set(scores["cats_f_per_type"]) == {"POS", "NEG"}
    assert 0 < scores["cats_log_loss"] < 0.7 and 0 <= scores["cats_ece"] < 0.5
    assert not any(key.startswith("nmtf_") for key in scores)
    assert DEFAULT_NMTF_SCORE_WEIGHTS["cats_score"] == 1.0 and "cats_log_loss" in DEFAULT_NMTF_SCORE_WEIGHTS


def test_beside_treeboost_textcat_each_component_keeps_its_own_scores():
    nlp, examples = pipeline(prefix="nmtf_")
    nlp.get_pipe("treeboost_textcat").initialize(lambda: [_only(eg, {"FILM", "PHONE"}) for eg in examples], nlp=nlp)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nlp.get_pipe("nmtf_sentiment").initialize(lambda: [_only(eg, {"POS", "NEG"}) for eg in examples], nlp=nlp,
                                                  lexicon=LEXICON)
    for _ in range(2):
        nlp.update(examples)
    scores = nlp.evaluate(examples)
    assert set(scores["cats_f_per_type"]) == {"FILM", "PHONE"}
    assert set(scores["nmtf_cats_f_per_type"]) == {"POS", "NEG"}
    assert scores["nmtf_cats_score"] == 1.0 and "nmtf_cats_log_loss" in scores and "cats_log_loss" not in scores
    doc = nlp("a great film")
    assert set(doc.cats) == {"FILM", "PHONE", "POS", "NEG"}


def test_two_components_on_spacys_keys_get_a_warning_naming_the_fix():
    nlp, examples = pipeline()
    with pytest.warns(UserWarning, match='prefix = "nmtf_"'):
        nlp.get_pipe("nmtf_sentiment").initialize(lambda: [_only(eg, {"POS", "NEG"}) for eg in examples], nlp=nlp,
                                                  lexicon=LEXICON)


def _only(example, labels):
    cats = {k: v for k, v in example.reference.cats.items() if k in labels}
    return Example.from_dict(example.predicted.copy(), {"cats": cats})
