"""Damaged or edited model files are refused with a message, never loaded into silently wrong scores."""
import random
from pathlib import Path

import numpy
import pytest
import srsly
import spacy
from hypothesis import given, settings, strategies as st

from textcat_pipes import trained_nlp
from spacy_treeboost.files import seal, unseal
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.learning.classifier_files import classifier_from_bytes, classifier_from_dict, classifier_to_bytes, classifier_to_dict
from spacy_treeboost.learning.classifier_files import CLASSIFIER_FORMAT
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
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


def test_linear_files_with_removed_settings_load_and_log1p_rules_are_refused():
    """Files of earlier versions: their `separate_views` and `shard_documents` are ignored (the rules predict alike);
    rules scoring log(1 + count), a feature family since removed, are refused with a message."""
    f = Forest.from_sentences([[["not", "good"]], [["very", "good"]], [["not", "bad"]], [["so", "bad"]]])
    clf = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, cv=2).fit(f, ["NEG", "POS", "POS", "NEG"])
    data = classifier_to_dict(clf)
    data["params"].update(separate_views=False, shard_documents=None)
    numpy.testing.assert_array_equal(classifier_from_dict(data).decision_function(f), clf.decision_function(f))
    data["rules"]["value"] = "log1p"
    with pytest.raises(ModelFormatError, match="unknown rule value 'log1p'.*retrain"):
        classifier_from_dict(data)


@pytest.mark.parametrize("edit,message", [
    ({"threshold": 7.5}, "threshold=7.5 is invalid"),
    ({"rounds_per_update": -3}, "rounds_per_update=-3 is invalid"),
    ({"learner": {"@learners": "spacy_treeboost.SubtreeBoost.v1", "algorithm": "svm"}}, "algorithm='svm' is invalid"),
    ({"learner": {"@learners": "spacy_treeboost.Unknown.v1"}}, "Unknown"),
    ({"trees": {"tree_mode": "bag"}}, "tree_mode='bag' is invalid"),
    ({"max_rounds": 10}, "unknown settings \\['max_rounds'\\].*retrain the pipeline"),
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


def flipped(data: bytes, bit: int) -> bytes:
    out = bytearray(data)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def sample_bits(n_bits: int, n: int, seed: int) -> list:
    return list(range(n_bits)) if n >= n_bits else random.Random(seed).sample(range(n_bits), n)


def classifier_outcomes(data: bytes, bits, forest):
    """(rejected, identical, changed) counts over single-bit flips of a classifier file."""
    clf = classifier_from_bytes(data)
    expected = (clf.decision_function(forest).tolist(), clf.predict(forest), clf.classes_)
    counts = {"rejected": 0, "identical": 0, "changed": 0}
    for bit in bits:
        try:
            other = classifier_from_bytes(flipped(data, bit))
        except ModelFormatError as err:
            assert str(err)
            counts["rejected"] += 1
            continue
        same = (other.decision_function(forest).tolist(), other.predict(forest), other.classes_) == expected
        counts["identical" if same else "changed"] += 1
    return counts


def test_every_bit_flip_of_a_small_classifier_file_is_refused_or_harmless():
    f = Forest.from_sentences([[["not", "good"]], [["very", "good"]], [["not", "bad"]], [["so", "bad"]]])
    data = classifier_to_bytes(fitted())
    counts = classifier_outcomes(data, range(len(data) * 8), f)
    assert counts["changed"] == 0 and counts["rejected"] > 0.99 * len(data) * 8


@pytest.mark.parametrize("version", [0, 2, 99, "1", None, True])
def test_a_classifier_file_of_any_other_version_is_refused(version):
    """The model files are format version 1; a sealed file of another version, or an unsealed one, is refused."""
    data = classifier_to_dict(fitted())
    newer = isinstance(version, int) and not isinstance(version, bool) and version > 1
    expected = (f"The classifier file's format version {version} was written by a newer spacy-treeboost (this one "
                "reads version 1); upgrade spacy-treeboost or retrain the model." if newer else
                f"The classifier file's format version {version!r} is not supported (this spacy-treeboost reads "
                "version 1); retrain the model with this spacy-treeboost.")
    with pytest.raises(ModelFormatError) as err:
        classifier_from_bytes(seal(data, CLASSIFIER_FORMAT, version))
    assert str(err.value) == expected
    with pytest.raises(ModelFormatError, match="^The classifier file \\(format version 1\\) is damaged: its payload "
                                               "or checksum entry is missing"):
        classifier_from_bytes(srsly.msgpack_dumps(data))


def test_no_bit_flip_of_an_unsealed_classifier_dict_loads():
    data = srsly.msgpack_dumps(classifier_to_dict(fitted()))
    for bit in sample_bits(len(data) * 8, 300, seed=1):
        with pytest.raises(ModelFormatError):
            classifier_from_bytes(flipped(data, bit))


def component_outcomes(nlp, pipe, tmp_path, field: str, bits, texts):
    pipe.to_disk(tmp_path / "p")
    target = tmp_path / "p" / field
    data = target.read_bytes()
    expected = [d.cats for d in nlp.pipe(texts)]
    counts = {"rejected": 0, "identical": 0, "changed": 0}
    for bit in bits:
        target.write_bytes(flipped(data, bit))
        other = nlp.create_pipe(pipe.factory, pipe.name)
        try:
            other.from_disk(tmp_path / "p")
        except ModelFormatError as err:
            assert str(err)
            counts["rejected"] += 1
            continue
        same = [d.cats for d in other.pipe(nlp.make_doc(t) for t in texts)] == expected
        counts["identical" if same else "changed"] += 1
    target.write_bytes(data)
    return counts, len(data) * 8


TEXTS = ["good movie", "bad film", "not good at all", "a great and fun plot", "boring"]


@pytest.mark.parametrize("field", ["model", "cfg"])
def test_bit_flips_of_component_files_are_refused_or_harmless(tmp_path, field):
    nlp, pipe = trained_nlp(rounds=3)
    _, n_bits = component_outcomes(nlp, pipe, tmp_path, field, [], TEXTS)
    counts, _ = component_outcomes(nlp, pipe, tmp_path, field, sample_bits(n_bits, 400, 0), TEXTS)
    assert counts["changed"] == 0 and counts["rejected"] >= 300


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["frequency", "linear"])
def test_thousand_bit_flips_of_a_cli_model(algorithm):
    """The acceptance figure: 1,000 random single-bit flips of a model as `learn` writes it, none of which
    changes an output without an error."""
    from bact_text import TRAIN

    forest, y = read_bact_text(TRAIN * 5)
    if algorithm == "linear":
        clf = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=1.0).fit(forest, y)
    else:
        clf = TreeBoostClassifier("frequency", n_rounds=20, max_pattern_size=3).fit(forest, y)
    data = classifier_to_bytes(clf)
    counts = classifier_outcomes(data, sample_bits(len(data) * 8, 1000, 1), forest)
    assert counts["changed"] == 0 and counts["rejected"] + counts["identical"] == 1000


@pytest.mark.slow
@pytest.mark.parametrize("field", ["model", "cfg"])
def test_thousand_bit_flips_of_a_component_file(tmp_path, field):
    nlp, pipe = trained_nlp(rounds=30)
    _, n_bits = component_outcomes(nlp, pipe, tmp_path, field, [], TEXTS)
    counts, _ = component_outcomes(nlp, pipe, tmp_path, field, sample_bits(n_bits, 1000, 2), TEXTS)
    assert counts["changed"] == 0 and counts["rejected"] + counts["identical"] == 1000


def read_bact_text(text: str):
    import tempfile

    from spacy_treeboost.trees import read_bact

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.tree"
        path.write_text(text, encoding="utf8")
        return read_bact(path)


@pytest.mark.parametrize("damaged", [b"\xc1\xc1", b"\x85\xa6format", b"\xde\x00\x05", b"\x81\xa1a"])
def test_garbage_collector_stays_enabled_after_a_failed_load(tmp_path, damaged):
    import gc

    path = tmp_path / "model.bin"
    path.write_bytes(damaged)
    assert gc.isenabled()
    for load in (lambda: classifier_from_bytes(damaged), lambda: RuleSet.from_bytes(damaged),
                 lambda: RuleSet.from_disk(path)):
        with pytest.raises(ModelFormatError):
            load()
        assert gc.isenabled()
    pipe = spacy.blank("en").add_pipe("treeboost_textcat")
    with pytest.raises(ModelFormatError):
        pipe.from_bytes(damaged)
    assert gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(ModelFormatError):
            classifier_from_bytes(damaged)
        assert not gc.isenabled()
    finally:
        gc.enable()


payloads = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 63, 2 ** 64 - 1) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=12)


@settings(max_examples=200, deadline=None)
@given(payload=payloads, data=st.data())
def test_sealed_payloads_round_trip_and_any_flip_is_refused_or_harmless(payload, data):
    sealed = seal(payload, "test.format", 1)
    assert unseal(sealed, "test.format", 1, error=ModelFormatError, what="test file") == payload
    bit = data.draw(st.integers(0, len(sealed) * 8 - 1))
    try:
        loaded = unseal(flipped(sealed, bit), "test.format", 1, error=ModelFormatError, what="test file")
    except ModelFormatError as err:
        assert str(err)
    else:
        assert loaded == payload
