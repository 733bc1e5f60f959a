"""Damaged or edited model files are refused with a message, never loaded into silently wrong scores."""
import srsly
import pytest
import spacy

from test_treeboost_textcat import trained_nlp
from spacy_treeboost.learning.learner import TreeBoostClassifier, classifier_from_dict, classifier_to_dict
from spacy_treeboost.models.rules import ModelFormatError, RuleSet
from spacy_treeboost.trees.forest import Forest


def fitted():
    f = Forest.from_sentences([[["not", "good"]], [["very", "good"]], [["not", "bad"]], [["so", "bad"]]])
    return TreeBoostClassifier("frequency", n_rounds=3, max_pattern_size=2).fit(f, ["NEG", "POS", "POS", "NEG"])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_weights_are_refused(value):
    data = fitted().rules_.to_dict()
    data["rules"][0][2][0] = value
    with pytest.raises(ModelFormatError, match="not a finite number"):
        RuleSet.from_dict(data)


def test_future_classifier_version_is_refused():
    data = classifier_to_dict(fitted())
    data["version"] = 99
    with pytest.raises(ModelFormatError, match="version 99 is not supported.*reads version 1"):
        classifier_from_dict(data)


@pytest.mark.parametrize("edit,message", [
    ({"threshold": 7.5}, "threshold=7.5 is invalid"),
    ({"rounds_per_update": -3}, "rounds_per_update=-3 is invalid"),
    ({"learner": {"@learners": "spacy_treeboost.SubtreeBoost.v1", "algorithm": "svm"}}, "algorithm='svm' is invalid"),
    ({"learner": {"@learners": "spacy_treeboost.Unknown.v1"}}, "Unknown"),
    ({"trees": {"tree_mode": "bag"}}, "tree_mode='bag' is invalid"),
    ({"max_rounds": 10}, "unknown settings \\['max_rounds'\\].*migrate-config"),
    ({"surprise": 1}, "unknown settings \\['surprise'\\]"),
    ({"labels": "POS"}, "labels='POS' is invalid"),
])
def test_invalid_stored_cfg_is_refused(tmp_path, edit, message):
    nlp, pipe = trained_nlp()
    pipe.to_disk(tmp_path / "p")
    cfg = srsly.read_json(tmp_path / "p" / "cfg")
    cfg.update(edit)
    srsly.write_json(tmp_path / "p" / "cfg", cfg)
    other = spacy.blank("en").add_pipe("treeboost_textcat")
    before = dict(other.cfg)
    with pytest.raises(ModelFormatError, match=message):
        other.from_disk(tmp_path / "p")
    assert other.cfg == before


def test_cfg_labels_that_do_not_match_the_model_are_refused(tmp_path):
    nlp, pipe = trained_nlp()
    pipe.to_disk(tmp_path / "p")
    cfg = srsly.read_json(tmp_path / "p" / "cfg")
    cfg["labels"] = ["negative", "positive"]
    srsly.write_json(tmp_path / "p" / "cfg", cfg)
    with pytest.raises(ModelFormatError, match="not among the labels"):
        spacy.blank("en").add_pipe("treeboost_textcat").from_disk(tmp_path / "p")
