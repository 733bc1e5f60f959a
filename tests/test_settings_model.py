"""One settings model for every learner: a bad setting of any learner block (NMTF's included) is refused as spaCy's
located config error in `spacy debug config`, `spacy train` (its `init_nlp`) and `nlp.add_pipe`; the error carries
the setting (`InvalidSettingError`); the component clones its learner from `get_params`; a model that scores every
training document alike is reported with the setting most likely responsible."""
import math
import pickle
import sys
from pathlib import Path

import numpy
import pytest
import spacy
from confection import ConfigValidationError
from spacy.cli.debug_config import debug_config
from spacy.training.initialize import init_nlp
from spacy.util import load_config, registry

from spacy_treeboost.config_errors import setting_error
from spacy_treeboost.exceptions import InvalidSettingError
from spacy_treeboost.learning.corrective import CorrectiveBoostClassifier
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.params import clone
from spacy_treeboost.pipeline import learners as learners_module
from spacy_treeboost.pipeline import treeboost_textcat as textcat_module
from spacy_treeboost.pipeline.learners import NMTF_LEARNER_CLASSES, _big_integers, unfitted_copy
from spacy_treeboost.trees import Forest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import nmtf_pipes  # noqa: E402
from textcat_data import make_examples  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TEXTCAT, NMTF = ("components", "treeboost_textcat"), ("components", "nmtf_sentiment")
LINEAR = {"@learners": "spacy_treeboost.SubtreeLinear.v1"}
BOOST = {"@learners": "spacy_treeboost.SubtreeBoost.v1"}
CORRECTIVE = {"@learners": "spacy_treeboost.CorrectiveBoost.v1"}
SELF_TRAINED = {"@learners": "spacy_treeboost.SSMFLKSelfTrained.v1"}
NAN = float("nan")


def refused(factory, config):
    """The one located error of `nlp.add_pipe(factory, config=config)`: (location, message)."""
    with pytest.raises(ConfigValidationError) as err:
        spacy.blank("en").add_pipe(factory, config=config)
    (entry,) = err.value.errors
    return [part for loc in entry["loc"] for part in str(loc).split(".")], entry["msg"]


@pytest.mark.parametrize("name", sorted(NMTF_LEARNER_CLASSES))
def test_an_unknown_key_of_every_nmtf_learner_is_refused_at_the_key(name):
    assert name in getattr(registry, "learners")
    loc, message = refused("nmtf_sentiment", {"learner": {"@learners": name, "bogus": 1}})
    assert loc[-2:] == ["learner", "bogus"] and "bogus" in message


@pytest.mark.parametrize("name", sorted(NMTF_LEARNER_CLASSES))
def test_an_out_of_range_seed_of_every_nmtf_learner_is_refused_with_its_range(name):
    for seed in (-1, 2 ** 32):
        loc, message = refused("nmtf_sentiment", {"learner": {"@learners": name, "random_state": seed}})
        assert loc == [*NMTF, "learner", "random_state"]
        assert message == f"random_state={seed} is invalid: use a whole number from 0 to 4294967295"


@pytest.mark.parametrize("factory,block", [("treeboost_textcat", {"learner": {**LINEAR, "random_state": 10 ** 20}}),
                                           ("nmtf_sentiment", {"learner": {**SELF_TRAINED, "random_state": 10 ** 20}}),
                                           ("nmtf_sentiment", {"n_words": -(2 ** 63) - 1, "norm": "l2"})])
def test_a_whole_number_beyond_64_bits_is_refused_at_its_setting(factory, block):
    """spaCy's own JSON check (through ujson) can let such a number through and leave an exception set behind."""
    loc, message = refused(factory, block)
    name = loc[-1]
    assert loc[:2] == ["components", factory] and name in ("random_state", "n_words")
    assert message.startswith(f"{name}=") and message.endswith("is invalid: use a whole number that fits in 64 bits "
                                                                "(a config holds JSON values only)")


@pytest.mark.parametrize("factory,block", [
    ("treeboost_textcat", {"learner": {**LINEAR, "C": NAN}}),
    ("treeboost_textcat", {"learner": {**CORRECTIVE, "estimator": {**BOOST, "smoothing": math.inf}}}),
    ("treeboost_textcat", {"threshold": -math.inf}),
    ("nmtf_sentiment", {"learner": {**SELF_TRAINED, "lr_C": NAN}}),
    ("treeboost_textcat", {"learner": SubtreeLinearClassifier()}),
])
def test_add_pipe_refuses_a_value_a_config_cannot_hold_with_spacys_error(factory, block):
    with pytest.raises(ValueError, match=r"\[E961\] Found non-serializable Python object in config"):
        spacy.blank("en").add_pipe(factory, config=block)


def test_big_integer_finds_the_first_whole_number_beyond_64_bits():
    assert next(_big_integers({"a": 1, "b": [0.5, "x", NAN], "c": {"d": None, "e": True}}, []), None) is None
    assert next(_big_integers({"a": {"b": [1, 2 ** 64]}}, [])) == (["a", "b"], 2 ** 64)
    assert next(_big_integers({"a": 2 ** 64 - 1, "b": -(2 ** 63)}, []), None) is None
    assert next(_big_integers({"a": -(2 ** 63) - 1}, [])) == (["a"], -(2 ** 63) - 1)


@pytest.mark.parametrize("inner", [LINEAR, {"@learners": "spacy_treeboost.MFLK.v1"}])
def test_an_estimator_block_that_is_not_a_booster_is_refused(inner):
    loc, message = refused("treeboost_textcat", {"learner": {**CORRECTIVE, "estimator": inner}})
    assert loc == [*TEXTCAT, "learner", "estimator"]
    assert "is invalid: use a booster, a \"spacy_treeboost.SubtreeBoost.v1\" block" in message


@pytest.mark.parametrize("learner", [LINEAR, {**CORRECTIVE, "estimator": BOOST}])
@pytest.mark.parametrize("C", [1.0, None])
@pytest.mark.parametrize("setting,value", [("Cs", []), ("Cs", [-1]), ("Cs", [0]), ("Cs", [1.0, -0.5]), ("cv", 1),
                                           ("cv", 21), ("cv", 0)])
def test_cs_and_cv_are_checked_alike_whatever_c_is(learner, C, setting, value):
    loc, message = refused("treeboost_textcat", {"learner": {**learner, "C": C, setting: value}})
    assert loc == [*TEXTCAT, "learner", setting] and message.startswith(f"{setting}={value!r} is invalid")


def forest():
    return Forest.from_sentences([[["not", "good"]], [["very", "good"]], [["not", "bad"]], [["so", "bad"]],
                                  [["good", "fun"]], [["bad", "plot"]]])


def test_backend_null_means_what_the_docs_say():
    y = ["NEG", "POS", "NEG", "POS", "POS", "NEG"]
    booster = TreeBoostClassifier("frequency", n_rounds=3, backend=None).start(forest(), y)
    local = TreeBoostClassifier("frequency", n_rounds=3, backend="local").start(forest(), y)
    assert type(booster.space_) is type(local.space_)
    linear = SubtreeLinearClassifier(min_support=1, cv=2, backend=None).fit(forest(), y)
    linear_local = SubtreeLinearClassifier(min_support=1, cv=2, backend="local").fit(forest(), y)
    assert numpy.array_equal(linear.predict_proba(forest()), linear_local.predict_proba(forest()))
    for block in (LINEAR, BOOST):
        spacy.blank("en").add_pipe("treeboost_textcat", config={"learner": {**block, "backend": None}})


def test_an_invalid_setting_error_carries_the_setting_and_survives_pickling():
    with pytest.raises(InvalidSettingError) as err:
        SubtreeLinearClassifier(C=0).validate_params()
    assert isinstance(err.value, ValueError) and err.value.setting == "C" and err.value.value == 0
    again = pickle.loads(pickle.dumps(err.value))
    assert (str(again), again.setting, again.value) == (str(err.value), "C", 0)
    with pytest.raises(InvalidSettingError) as err:
        SubtreeLinearClassifier().set_params(bogus=1)
    assert err.value.setting == "bogus"


def test_config_errors_read_the_setting_not_the_message():
    block = ["components", "x", "learner"]
    plain = setting_error(ValueError("C=0 is invalid: use a number"), block, ["C"])
    assert plain.errors[0]["loc"] == block
    carried = setting_error(InvalidSettingError("the strength is too small", setting="C", value=0), block, ["C"])
    assert carried.errors[0]["loc"] == [*block, "C"] and carried.errors[0]["msg"] == "the strength is too small"
    foreign = setting_error(InvalidSettingError("n_rounds=5 is invalid", setting="n_rounds"), block, ["C"])
    assert foreign.errors[0]["loc"] == block


@pytest.mark.parametrize("config,setting,value,location,expected", [
    ("nmtf_sentiment.cfg", "components.nmtf_sentiment.learner.bogus", 1, "nmtf_sentiment.learner -> bogus",
     "unexpected argument: 'bogus'"),
    ("nmtf_sentiment.cfg", "components.nmtf_sentiment.learner.random_state", 99999999999999999999,
     "components -> nmtf_sentiment -> learner -> random_state",
     "random_state=99999999999999999999 is invalid: use a whole number that fits in 64 bits"),
    ("chain_sentiment.cfg", "components.treeboost_textcat.learner.Cs", [-1.0],
     "components -> treeboost_textcat -> learner -> Cs", "Cs=[-1.0] is invalid"),
])
def test_debug_config_and_train_locate_the_bad_setting(monkeypatch, capsys, config, setting, value, location,
                                                       expected):
    monkeypatch.chdir(ROOT)
    with pytest.raises(SystemExit) as stop:
        debug_config(Path("configs") / config, overrides={setting: value})
    assert stop.value.code == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith(location + "\t")]
    assert len(lines) == 1 and expected in lines[0], lines
    with pytest.raises(ConfigValidationError) as err:
        init_nlp(load_config(Path("configs") / config, overrides={setting: value}, interpolate=False))
    assert any(expected in entry["msg"] for entry in err.value.errors)


@pytest.mark.parametrize("config,setting", [("nmtf_sentiment.cfg", "components.nmtf_sentiment.learner.lr_C"),
                                            ("chain_sentiment.cfg", "components.treeboost_textcat.learner.C")])
def test_debug_config_and_train_refuse_a_nan_override_with_spacys_error(monkeypatch, config, setting):
    monkeypatch.chdir(ROOT)
    with pytest.raises(ValueError, match=r"\[E961\] Found non-serializable Python object in config"):
        debug_config(Path("configs") / config, overrides={setting: NAN})
    with pytest.raises(ValueError, match=r"\[E961\] Found non-serializable Python object in config"):
        init_nlp(load_config(Path("configs") / config, overrides={setting: NAN}, interpolate=False))


def test_the_component_clones_its_learner_from_its_parameters(monkeypatch):
    learner = {**CORRECTIVE, "C": 2.0, "cv": 2, "estimator": {**BOOST, "n_workers": 1, "backend": "local",
                                                               "max_pattern_size": 2}}
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat", config={"learner": learner, "rounds_per_update": 5})

    def no_round_trip(*args, **kwargs):
        raise AssertionError("a learner went through its cfg dict")

    monkeypatch.setattr(textcat_module, "learner_from_settings", no_round_trip)
    monkeypatch.setattr(textcat_module, "learner_settings", no_round_trip)
    monkeypatch.setattr(learners_module, "learner_from_settings", no_round_trip)
    monkeypatch.setattr(learners_module, "learner_settings", no_round_trip)
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    assert pipe._learner.get_params()["backend"] == "local"
    copy = unfitted_copy(pipe._template, "POS")
    assert copy is not pipe._template and copy.estimator is not pipe._template.estimator
    expected = {**pipe._template.get_params(), "estimator__positive_class": "POS"}
    assert {k: v for k, v in copy.get_params().items() if k != "estimator"} == \
        {k: v for k, v in expected.items() if k != "estimator"}


@pytest.mark.parametrize("estimator", [
    SubtreeLinearClassifier(C=0.5, Cs=(1.0, 2.0), n_workers=2, backend="processes"),
    CorrectiveBoostClassifier(TreeBoostClassifier("bact", n_rounds=7, backend="local"), C=None),
    CorrectiveBoostClassifier(TreeBoostClassifier(smoothing=0.1), cv=3),
])
def test_clone_keeps_every_parameter_and_shares_no_estimator(estimator):
    copy = clone(estimator)
    assert type(copy) is type(estimator) and copy is not estimator
    assert {k: v for k, v in copy.get_params().items() if k != "estimator"} == \
        {k: v for k, v in estimator.get_params().items() if k != "estimator"}
    if getattr(estimator, "estimator", None) is not None:
        assert copy.estimator is not estimator.estimator


def train_textcat(block, **config):
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat", config={"learner": block, "rounds_per_update": 20, **config})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)


SMALL = {"max_pattern_size": 2, "min_support": 1}


@pytest.mark.parametrize("block,setting", [
    ({**BOOST, **SMALL, "smoothing": 1e300}, "smoothing = 1e+300"),
    ({**LINEAR, **SMALL, "cv": 2, "max_rules": 1}, "max_rules = 1"),
    ({**CORRECTIVE, "C": 1e-6, "cv": 2, "estimator": {**BOOST, **SMALL, "algorithm": "presence"}}, "C = 1e-06"),
])
def test_a_model_that_scores_every_training_document_alike_names_the_setting(block, setting):
    with pytest.warns(UserWarning, match="gives every training document the same scores") as record:
        train_textcat(block)
    assert any(setting in str(w.message) for w in record), [str(w.message) for w in record]


def test_the_nmtf_model_that_scores_every_document_alike_names_lr_c():
    nlp = spacy.blank("en")
    nlp.add_pipe("nmtf_sentiment", config={"positive_label": "pos", "negative_label": "neg",
                                           "learner": {**SELF_TRAINED, "lr_C": 1e300}})
    examples = nmtf_pipes.make_examples(nlp)
    with pytest.warns(UserWarning, match="lr_C = 1e\\+300 is extreme"):
        with numpy.errstate(all="ignore"):
            nlp.get_pipe("nmtf_sentiment").initialize(lambda: examples, nlp=nlp, lexicon=nmtf_pipes.LEXICON)


@pytest.mark.parametrize("block", [{**LINEAR, **SMALL, "cv": 2}, {**BOOST, **SMALL}])
def test_a_model_that_tells_documents_apart_trains_without_that_warning(recwarn, block):
    train_textcat(block)
    assert not [w for w in recwarn if "same scores" in str(w.message)]
    nlp = nmtf_pipes.make_nlp()
    nmtf_pipes.train(nlp)
    assert not [w for w in recwarn if "same scores" in str(w.message)]
