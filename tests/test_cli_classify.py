"""`classify` streams its input in batches and warns about test labels the model does not know."""
import numpy
import pytest
import srsly
from typer.testing import CliRunner

from spacy_treeboost import cli
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.learning.classifier_files import classifier_from_dict, classifier_to_bytes
from spacy_treeboost.trees import Forest, read_bact, write_bact

from reference import random_trees


def _train(tmp_path, seed=0):
    rng = numpy.random.default_rng(seed)
    trees, _ = random_trees(seed, min_docs=40, max_docs=40, max_nodes=9)
    forest = Forest.from_trees(trees)
    n = len(forest)
    classes = ["+1" if rng.random() < 0.5 else "-1" for _ in range(n)]
    classes[:2] = ["+1", "-1"]
    clf = TreeBoostClassifier("frequency", n_rounds=8, max_pattern_size=2).fit(forest, classes)
    model = tmp_path / "model.bin"
    model.write_bytes(classifier_to_bytes(clf))
    return forest, classes, model


def invoke(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args])


@pytest.mark.parametrize("batch", [1, 3, 1000])
def test_batches_give_the_scores_of_one_pass(tmp_path, monkeypatch, batch):
    forest, classes, model = _train(tmp_path)
    test = tmp_path / "test.tree"
    write_bact(test, forest, classes)
    monkeypatch.setattr(cli.bact, "CLASSIFY_BATCH", batch)
    result = invoke("classify", test, model)
    assert result.exit_code == 0, result.stderr
    clf = classifier_from_dict(srsly.msgpack_loads(model.read_bytes()))
    whole, gold = read_bact(test)
    F, pred = clf.decision_function(whole), clf.predict(whole)
    assert result.stdout == "".join(f"{p} {f:.6f}\n" for p, f in zip(pred, F))
    correct = sum(p == g for p, g in zip(pred, gold))
    assert f"accuracy {correct / len(gold):.4f} ({correct}/{len(gold)})" in result.stderr
    assert "warning" not in result.stderr


def test_labels_that_are_not_model_classes_warn_once_with_counts(tmp_path, monkeypatch):
    forest, classes, model = _train(tmp_path)
    test = tmp_path / "test.tree"
    write_bact(test, forest, ["1" if c == "+1" else "0" for c in classes])
    monkeypatch.setattr(cli.bact, "CLASSIFY_BATCH", 7)
    result = invoke("classify", test, model)
    assert result.exit_code == 0
    n_pos, n = classes.count("+1"), len(classes)
    assert result.stderr.count("warning") == 1
    assert f"warning: {n} of {n} test labels are not classes of the model (+1, -1): " in result.stderr
    assert f"1 ({n_pos})" in result.stderr and f"0 ({n - n_pos})" in result.stderr
    assert "accuracy 0.0000" in result.stderr


def test_malformed_line_after_a_batch_is_an_error_naming_the_line(tmp_path, monkeypatch):
    forest, classes, model = _train(tmp_path)
    test = tmp_path / "test.tree"
    write_bact(test, forest, classes)
    with open(test, "a", encoding="utf8") as f:
        f.write("+1 (ROOT(a)\n")
    monkeypatch.setattr(cli.bact, "CLASSIFY_BATCH", 5)
    result = invoke("classify", test, model)
    assert result.exit_code == 2
    assert f"line {len(classes) + 1}: 1 unclosed" in result.stderr
