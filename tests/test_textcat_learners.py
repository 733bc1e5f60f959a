"""The corrective and linear learners inside `treeboost_textcat`: training, serialization, settings."""
import pickle

import numpy
import pytest
import spacy

from textcat_data import TRAIN, make_examples
from spacy_treeboost.learning.corrective import CorrectiveBoostClassifier
from spacy_treeboost.trees.doc_trees import TreeSpec, docs_to_forest
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.learning.classifier_files import classifier_to_dict
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from textcat_pipes import TEXTS, learner_block, trained

@pytest.mark.parametrize("algorithm", ["corrective", "linear"])
def test_learns_the_training_data_and_round_trips(tmp_path, algorithm):
    nlp, pipe = trained(algorithm)
    docs = list(nlp.pipe(TEXTS))
    for doc, (_, label) in zip(docs, TRAIN):
        assert max(doc.cats, key=doc.cats.get) == label
        assert min(doc.cats.values()) > 1e-4
    nlp.to_disk(tmp_path)
    nlp2 = spacy.load(tmp_path)
    assert [d.cats for d in nlp2.pipe(TEXTS)] == [d.cats for d in docs]
    assert nlp2.get_pipe("treeboost_textcat").rules_listing() == pipe.rules_listing()
    again = pickle.loads(pickle.dumps(pipe))
    assert [again(nlp.make_doc(t)).cats for t in TEXTS] == [d.cats for d in docs]
    fired = [e for t in TEXTS for e in pipe.explain(nlp(t))]
    assert fired and all(e["label"] == "POS" for e in fired)
    assert "not" in pipe.explain_html(nlp(TEXTS[1]))


def test_corrective_component_equals_the_estimator():
    nlp, pipe = trained("corrective", rounds=15, C=1.0, booster="frequency")
    forest = docs_to_forest([nlp.make_doc(t) for t in TEXTS], TreeSpec("chain", ["LOWER"], ["IS_SPACE"]))
    y = [label for _, label in TRAIN]
    ref = CorrectiveBoostClassifier(TreeBoostClassifier("frequency", n_rounds=15, max_pattern_size=2), C=1.0).fit(forest, y)
    F = pipe.predict([nlp.make_doc(t) for t in TEXTS])
    numpy.testing.assert_allclose(F[:, 0], ref.decision_function(forest), atol=1e-12)


def test_linear_component_equals_the_estimator():
    nlp, pipe = trained("linear", C=3.0, features="presence")
    forest = docs_to_forest([nlp.make_doc(t) for t in TEXTS], TreeSpec("chain", ["LOWER"], ["IS_SPACE", "IS_PUNCT"]))
    y = [label for _, label in TRAIN]
    ref = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=3.0, features="presence", cv=2).fit(forest, y)
    F = pipe.predict([nlp.make_doc(t) for t in TEXTS])
    numpy.testing.assert_allclose(F[:, 0], ref.decision_function(forest), atol=1e-12)
    assert pipe.n_rounds == 0


def test_corrective_refits_as_rounds_grow():
    nlp, pipe = trained("corrective", rounds=2, C=1.0)
    first = pipe._predictor()
    assert first.n_rounds_ == 2 and pipe._predictor() is first
    pipe.update(make_examples(nlp))
    assert pipe.n_rounds == 4
    assert pipe._predictor().n_rounds_ == 4


def test_flat_settings_outside_the_learner_block_are_refused():
    old = {"algorithm": "frequency", "max_pattern_size": 2, "min_support": 1, "max_rounds": 500}
    with pytest.raises(ValueError, match="algorithm"):
        spacy.blank("en").add_pipe("treeboost_textcat", config=old)


@pytest.mark.parametrize("kind,params,message", [
    ("linear", {"C": -1.0}, "C="), ("linear", {"l1_ratio": 2.0}, "l1_ratio="), ("corrective", {"cv": 1}, "cv="),
    ("linear", {"features": "bm25"}, "features="), ("corrective", {"booster": "svm"}, "algorithm="),
    ("linear", {"alpha": 1}, "alpha"), ("linear", {"Cs": [], "C": None}, "Cs="),
    ("corrective", {"refit_every": -1}, "refit_every="),
])
def test_bad_learner_settings_name_the_setting(kind, params, message):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=message):
        nlp.add_pipe("treeboost_textcat", config={"learner": learner_block(kind, **params)})


def test_every_registered_sub_config_resolves_by_name():
    from spacy.util import registry
    from thinc.api import Config

    from spacy_treeboost.pipeline.learners import LEARNERS, TREE_BUILDERS

    spacy.blank("en").add_pipe("treeboost_textcat")
    for name, cls in LEARNERS.items():
        resolved = registry.resolve(Config({"x": {"@learners": name}}))["x"]
        assert type(resolved) is cls and resolved.get_params(deep=False) == cls().get_params(deep=False)
    for name, cls in TREE_BUILDERS.items():
        resolved = registry.resolve(Config({"x": {"@tree_builders": name, "tree_mode": "dependency"}}))["x"]
        assert type(resolved) is cls and resolved.tree_mode == "dependency"


@pytest.mark.determinism
@pytest.mark.parametrize("backend", ["local", pytest.param("processes", marks=pytest.mark.slow)])
def test_search_workers_in_the_learner_block_give_the_same_rules(backend):
    _, one = trained("frequency", rounds=15)
    _, two = trained("frequency", rounds=15, n_workers=2, backend=backend)
    assert two.rules_listing() == one.rules_listing()
    assert classifier_to_dict(two._predictor()) == classifier_to_dict(one._predictor())


@pytest.mark.parametrize("kind, backend", [pytest.param("linear", None, marks=pytest.mark.slow), ("frequency", "local"),
                                           ("corrective", "local"),
                                           pytest.param("corrective", "processes", marks=pytest.mark.slow)])
def test_execution_settings_reach_the_learner_and_change_nothing(kind, backend):
    block = learner_block(kind)
    target = block if kind != "corrective" else block["estimator"]
    target.update({"n_workers": 2} if kind == "linear" else {"n_workers": 2, "backend": backend})
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat", config={"learner": block, "rounds_per_update": 20})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    booster = pipe._learner
    assert booster.n_workers == 2 and (kind == "linear" or booster.backend == backend)
    assert pipe.rules_listing() == trained(kind)[1].rules_listing()
    assert "n_workers" not in str(pipe.cfg["learner"])


def test_a_bad_execution_setting_is_a_config_error():
    from confection import ConfigValidationError

    nlp = spacy.blank("en")
    with pytest.raises(ConfigValidationError, match="n_workers"):
        nlp.add_pipe("treeboost_textcat", config={"learner": learner_block("linear", n_workers=0)})
