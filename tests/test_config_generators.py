"""The two config generators (`python -m spacy_treeboost init-config` and spaCy's `spacy init config`) give the
same component, and what the component says about a `spacy train` or `spacy debug data` run of either."""
import warnings
from pathlib import Path

import pytest
import spacy
from spacy.cli.debug_data import debug_data
from spacy.cli.init_config import init_config
from spacy.training.initialize import init_nlp

from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.pipeline.starter_config import starter_config
from spacy_treeboost.pipeline.training_docs import IdleStepsWarning, label_statistics
from textcat_data import make_examples

ROOT = Path(__file__).resolve().parents[1]
REVIEWS = ROOT / "corpora" / "reviews"


def test_both_generators_give_the_same_component_and_tree_settings():
    ours = starter_config()["components"]["treeboost_textcat"]
    spacys = init_config(lang="en", pipeline=["treeboost_textcat"])["components"]["treeboost_textcat"]
    assert spacys == ours
    assert ours["trees"]["skip_flags"] == ["IS_SPACE", "IS_PUNCT"]
    added = spacy.blank("en").add_pipe("treeboost_textcat")
    assert list(added._spec.skip_flags) == ["IS_SPACE", "IS_PUNCT"]


def jsonl_config(**training):
    config = starter_config()
    config["paths"]["train"] = str(REVIEWS / "train.jsonl")
    config["paths"]["dev"] = str(REVIEWS / "dev.jsonl")
    config["training"].update(training)
    return spacy.util.load_config_from_str(config.to_str())


@pytest.mark.parametrize("training, steps", [
    ({"max_steps": 20000, "patience": 1600}, "up to 1,600 steps"),
    ({"max_steps": 0, "patience": 0}, "until the epochs end"),
    ({"max_steps": 50, "patience": 0}, "up to 50 steps"),
])
def test_spacy_training_settings_that_run_idle_steps_after_the_fit_are_named(training, steps):
    with pytest.warns(IdleStepsWarning, match=rf"runs {steps} \(max_steps = {training['max_steps']}, patience = "
                                              rf"{training['patience']}\): set \[training\] max_steps = 1"):
        init_nlp(jsonl_config(**training))


@pytest.mark.parametrize("training", [{"max_steps": 1, "patience": 1600}, {"max_steps": 0, "patience": 1}])
def test_one_step_or_a_python_initialize_does_not_warn(training):
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdleStepsWarning)
        init_nlp(jsonl_config(**training))
        nlp = spacy.blank("en")
        nlp.add_pipe("treeboost_textcat", config={"learner": {"@learners": "spacy_treeboost.SubtreeLinear.v1",
                                                              "min_support": 1}})
        nlp.initialize(lambda: make_examples(nlp))


def test_the_boosting_learner_keeps_its_steps_without_a_warning():
    config = jsonl_config(max_steps=20000, patience=1600)
    config["components"]["treeboost_textcat"]["learner"] = {"@learners": "spacy_treeboost.SubtreeBoost.v1",
                                                            "algorithm": "frequency", "n_rounds": 10}
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdleStepsWarning)
        init_nlp(config)


def test_debug_data_shows_the_label_statistics_without_fitting(tmp_path, capsys, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("spacy debug data fitted the model")

    monkeypatch.setattr(SubtreeLinearClassifier, "fit", refuse)
    path = tmp_path / "config.cfg"
    jsonl_config().to_disk(path)
    debug_data(path, silent=False)
    out = capsys.readouterr().out
    assert "'treeboost_textcat': 2 labels in 400 training documents (the model is not fitted" in out
    assert "NEG       200 documents" in out and "POS       200 documents" in out
    assert "documents with no label: 0, with several: 0" in out
    assert "Pipeline can be initialized with data" in out


def test_label_statistics_count_each_label_and_the_documents_with_none_or_several():
    nlp = spacy.blank("en")
    examples = make_examples(nlp, [("a", "POS"), ("b", "NEG"), ("c", "POS")])
    examples[1].reference.cats = {"POS": 1.0, "NEG": 1.0}
    examples[2].reference.cats = {"POS": 0.0, "NEG": 0.0}
    lines = label_statistics("tc", examples, ["NEG", "POS"])
    assert lines[0].startswith("'tc': 2 labels in 3 training documents")
    assert lines[1:] == ["  NEG         1 documents", "  POS         2 documents",
                         "  documents with no label: 1, with several: 1"]
