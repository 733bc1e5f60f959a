"""The corrective and linear learners inside `treeboost_textcat`: training, serialization, settings."""
import pickle

import numpy
import pytest
import spacy

from test_treeboost_textcat import TRAIN, make_examples
from spacy_treeboost.corrective import CorrectiveBoostClassifier
from spacy_treeboost.docs import TreeSpec, docs_to_forest
from spacy_treeboost.learner import TreeBoostClassifier, classifier_to_dict
from spacy_treeboost.subtree_linear import SubtreeLinearClassifier

TEXTS = [t for t, _ in TRAIN]


def trained(algorithm, rounds=20, **config):
    nlp = spacy.blank("en")
    linear = {"cv": 2, **config.pop("linear", {})}
    pipe = nlp.add_pipe("treeboost_textcat", config={"algorithm": algorithm, "rounds_per_update": rounds,
                                                     "max_pattern_size": 2, "min_support": 1,
                                                     "linear": linear, **config})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    return nlp, pipe


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
    nlp, pipe = trained("corrective", rounds=15, linear={"C": 1.0, "booster": "frequency"})
    forest = docs_to_forest([nlp.make_doc(t) for t in TEXTS], TreeSpec("chain", ["LOWER"], ["IS_SPACE"]))
    y = [label for _, label in TRAIN]
    ref = CorrectiveBoostClassifier(TreeBoostClassifier("frequency", n_rounds=15, max_pattern_size=2), C=1.0).fit(forest, y)
    F = pipe.predict([nlp.make_doc(t) for t in TEXTS])
    numpy.testing.assert_allclose(F[:, 0], ref.decision_function(forest), atol=1e-12)


def test_linear_component_equals_the_estimator():
    nlp, pipe = trained("linear", linear={"C": 3.0, "features": "log1p"})
    forest = docs_to_forest([nlp.make_doc(t) for t in TEXTS], TreeSpec("chain", ["LOWER"], ["IS_SPACE"]))
    y = [label for _, label in TRAIN]
    ref = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=3.0, features="log1p").fit(forest, y)
    F = pipe.predict([nlp.make_doc(t) for t in TEXTS])
    numpy.testing.assert_allclose(F[:, 0], ref.decision_function(forest), atol=1e-12)
    assert pipe.n_rounds == 0


def test_corrective_refits_as_rounds_grow():
    nlp, pipe = trained("corrective", rounds=2, linear={"C": 1.0})
    first = pipe._predictor()
    assert first.n_rounds_ == 2 and pipe._predictor() is first
    pipe.update(make_examples(nlp))
    assert pipe.n_rounds == 4
    assert pipe._predictor().n_rounds_ == 4


def test_published_algorithms_ignore_the_linear_block():
    _, plain = trained("frequency")
    _, other = trained("frequency", linear={"C": 0.01, "l1_ratio": 0.5, "features": "log1p"})
    assert classifier_to_dict(plain._predictor()) == classifier_to_dict(other._predictor())


@pytest.mark.parametrize("linear,message", [
    ({"C": -1.0}, "C="), ({"l1_ratio": 2.0}, "l1_ratio="), ({"cv": 1, "C": None}, "cv="),
    ({"features": "tfidf"}, "features="), ({"booster": "svm"}, "linear.booster="), ({"alpha": 1}, "unknown settings"),
    ({"Cs": [], "C": None}, "Cs="),
])
def test_bad_linear_settings_name_the_setting(linear, message):
    nlp = spacy.blank("en")
    with pytest.raises(ValueError, match=message):
        nlp.add_pipe("treeboost_textcat", config={"algorithm": "linear" if "features" in linear else "corrective",
                                                  "linear": linear})
