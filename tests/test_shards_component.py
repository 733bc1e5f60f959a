"""`treeboost_textcat` fitted on shard files named in [initialize.components.NAME] shards: the subtree-linear
learner's workers read them, and the training examples are not read."""
import numpy
import pytest
import spacy
from spacy.tokens import DocBin

from spacy_treeboost.learning.classifier_files import classifier_to_bytes
from spacy_treeboost.learning.shard_files import TreeShards
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.trees.doc_trees import TreeSpec
from textcat_data import TRAIN, make_examples
from textcat_pipes import learner_block

LINEAR = learner_block("linear", max_rules=None)


def write_docbins(nlp, directory, n_files=3):
    examples = make_examples(nlp)
    cuts = numpy.linspace(0, len(examples), n_files + 1).round().astype(int)
    paths = []
    for k in range(n_files):
        docs = [eg.reference for eg in examples[cuts[k]:cuts[k + 1]]]
        path = directory / f"train-{k}.spacy"
        DocBin(docs=docs).to_disk(path)
        paths.append(path)
    return paths


class Unread:
    """Training examples that fail the test when more than the first is read."""

    def __init__(self, examples):
        self.examples, self.read = examples, 0

    def __call__(self):
        for eg in self.examples:
            self.read += 1
            assert self.read <= 1, "the training examples were read"
            yield eg


def pipeline_on_shards(directory, learner=LINEAR, **settings):
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat", config={"learner": learner})
    paths = write_docbins(nlp, directory)
    nlp.config["initialize"]["components"]["treeboost_textcat"] = {"shards": str(directory / "train-*.spacy"),
                                                                   **settings}
    return nlp, pipe, paths


def test_the_component_fits_the_shards_and_reads_no_training_example(tmp_path):
    nlp, pipe, paths = pipeline_on_shards(tmp_path)
    nlp.initialize(Unread(make_examples(nlp)))
    spec = TreeSpec(tree_mode="chain", node_attrs=["LOWER"], skip_flags=["IS_SPACE", "IS_PUNCT"])
    settings = {k: v for k, v in LINEAR.items() if k != "@learners"}
    direct = SubtreeLinearClassifier(**settings).fit(TreeShards([str(p) for p in paths], spec=spec, lang="en"))
    assert classifier_to_bytes(pipe._learner) == classifier_to_bytes(direct)
    assert pipe.labels == ("NEG", "POS")
    doc = nlp(TRAIN[0][0])
    assert set(doc.cats) == set(pipe.labels)


def test_shards_are_refused_for_a_learner_that_needs_the_documents_here(tmp_path):
    nlp, _, _ = pipeline_on_shards(tmp_path, learner=learner_block("frequency"))
    with pytest.raises(ValueError, match="subtree-linear learner's workers") as err:
        nlp.initialize(lambda: make_examples(nlp))
    assert "\n" not in str(err.value)


def test_a_pattern_that_matches_no_file_gets_a_one_line_error(tmp_path):
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat", config={"learner": LINEAR})
    nlp.config["initialize"]["components"]["treeboost_textcat"] = {"shards": str(tmp_path / "none-*.spacy")}
    with pytest.raises(ValueError, match="no file matches") as err:
        nlp.initialize(lambda: make_examples(nlp))
    assert "\n" not in str(err.value)
