"""Training from BACT shard files that the workers read and mine (`learning.shard_files`): the merged subtrees and
their documents are those of one miner on all the files' documents, and the model is the same for any grouping of
the files into workers, backend and number of workers."""
import gzip
import os
import sys
from pathlib import Path

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from one_shard import fit_on_row_shards
from reference import random_trees
from spacy_treeboost.learning import shard_files, shard_merge, tasks
from spacy_treeboost.learning.classifier_files import classifier_to_bytes
from spacy_treeboost.learning.mining import mine_subtrees
from spacy_treeboost.learning.shard_files import TreeShards
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.trees import Forest
from spacy_treeboost.trees.bact import code_to_sexpr, read_bact, write_bact

FIT = dict(max_pattern_size=2, min_support=2, C=None, Cs=[0.3, 3.0], cv=2, cv_documents=None)


def write_shards(directory: Path, forest: Forest, classes, cuts, gz=False):
    """The documents of `forest` written as one BACT file per run between `cuts`, in order."""
    whole = directory / "whole.tree"
    write_bact(whole, forest, classes)
    lines = whole.read_text(encoding="utf8").splitlines(keepends=True)
    paths = []
    for k, (lo, hi) in enumerate(zip([0, *cuts], [*cuts, len(lines)])):
        path = directory / f"shard{k}.tree{'.gz' if gz else ''}"
        text = "".join(lines[lo:hi]).encode("utf8")
        path.write_bytes(gzip.compress(text) if gz else text)
        paths.append(str(path))
    return paths


def labelled(seed, n_docs, n_classes=2):
    trees, _ = random_trees(seed, min_docs=n_docs, max_docs=n_docs, max_labels=5)
    y = [f"c{v}" for v in numpy.random.default_rng(seed).integers(0, n_classes, size=n_docs)]
    y[0], y[1] = "c0", "c1"
    return Forest.from_trees(trees), y


def in_process(monkeypatch):
    """Several workers in this process (`tasks.LocalWorkers`), for the backends that start processes."""
    monkeypatch.setattr(shard_files, "make_workers", lambda backend, n, builder, **_: tasks.LocalWorkers(n, builder))


def mined_by_workers(paths, n_workers, **opts):
    builder = lambda i, _: (shard_files.ShardFileWorker, (TreeShards(paths), paths[cuts[i]:cuts[i + 1]], int(cuts[i])), {})  # noqa: E731
    cuts = numpy.linspace(0, len(paths), n_workers + 1).round().astype(int)
    workers = tasks.LocalWorkers(n_workers, builder)
    strings = shard_files.read_files(workers)[0]
    return shard_merge.mine_files(workers, strings, **opts)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3),
       st.integers(0, 3), st.booleans(), st.sampled_from([1, 3, 10, shard_merge.MAX_CANDIDATES]))
def test_the_merged_subtrees_and_their_documents_are_those_of_one_miner(tmp_path_factory, seed, n_files, n_workers,
                                                                          size, min_support, rare, root, partition):
    """Also when a level is merged in parts of about `partition` candidates."""
    trees, _ = random_trees(seed, min_docs=n_files, max_docs=12)
    forest = Forest.from_trees(trees)
    cuts = sorted(numpy.random.default_rng(seed).choice(numpy.arange(1, len(forest)), n_files - 1, replace=False))
    paths = write_shards(tmp_path_factory.mktemp("shards"), forest, ["+1"] * len(forest), [int(c) for c in cuts])
    opts = dict(max_pattern_size=size, min_support=min_support, keep_rare_up_to=rare, include_root_patterns=root)
    whole, _ = read_bact(str(Path(paths[0]).parent / "whole.tree"))
    try:
        counts, codes = mine_subtrees(whole, **opts, max_cache_mb=64)
    except ValueError:
        return
    expected = {code_to_sexpr(c): int(n) for c, n in zip(codes, numpy.diff(counts.tocsc().indptr))}
    try:
        mined = mined_by_workers(paths, min(n_workers, n_files), **opts, max_cache_mb=64,
                                 max_candidates=partition)
    except ValueError as err:
        assert not expected and "no subtree" in str(err)
        return
    got = [code_to_sexpr(c) for c in mined.tree.codes_of(numpy.arange(len(mined.tree)))[0]]
    assert dict(zip(got, mined.docs.tolist())) == expected
    assert got == [code_to_sexpr(c) for c in codes]  # the one miner's order, too
    some = numpy.random.default_rng(seed).choice(len(got), min(3, len(got)), replace=False)
    subset, at = mined.tree.codes_of(some)  # only these codes and their ancestors' are spelled out
    assert [code_to_sexpr(subset[i]) for i in at] == [got[i] for i in some] and len(subset) <= len(got)
    assert sorted(mined.inverse.tolist()) == list(range(len(got)))
    assert numpy.all(numpy.diff(mined.docs[numpy.argsort(mined.inverse)]) <= 0)


@pytest.mark.parametrize("features", ["auto", "tfidf", "presence"])
def test_the_model_from_files_is_the_same_for_any_grouping_into_workers(tmp_path, monkeypatch, features):
    forest, y = labelled(3, 36, n_classes=3 if features == "presence" else 2)
    paths = write_shards(tmp_path, forest, y, [9, 17, 30])
    one = classifier_to_bytes(SubtreeLinearClassifier(**FIT, features=features).fit(TreeShards(paths)))
    in_process(monkeypatch)
    for n_workers in (2, 3, 4):
        many = SubtreeLinearClassifier(**FIT, features=features, n_workers=n_workers, backend="processes")
        assert classifier_to_bytes(many.fit(TreeShards(paths))) == one


def test_equal_files_give_the_rules_of_the_sharded_fit_in_one_process(tmp_path, monkeypatch):
    forest, y = labelled(5, 40)
    paths = write_shards(tmp_path, forest, y, [10, 20, 30], gz=True)
    from_files = SubtreeLinearClassifier(**FIT, features="nb").fit(TreeShards(paths))
    fit_on_row_shards(monkeypatch, 10)
    whole = SubtreeLinearClassifier(**FIT, features="nb", max_rules=None).fit(forest, y)
    assert from_files.rules_.listing() == whole.rules_.listing()
    assert from_files.classes_ == whole.classes_
    numpy.testing.assert_array_equal(from_files.decision_function(forest), whole.decision_function(forest))


def planted(n_docs, seed=0):
    """Word chains of 8 words, the positive ones holding "good" more often."""
    rng = numpy.random.default_rng(seed)
    y = rng.integers(0, 2, size=n_docs)
    trees = []
    for label in y:
        words = [f"w{v}" for v in rng.integers(0, 40, size=8)]
        if rng.random() < (0.7 if label else 0.3):
            words[int(rng.integers(0, 8))] = "good"
        chain = ()
        for word in reversed(words):
            chain = ((word, chain),)
        trees.append(("\x00ROOT", chain))
    return Forest.from_trees(trees), ["POS" if v else "NEG" for v in y]


def test_files_are_pruned_as_the_sharded_fit_in_one_process(tmp_path, monkeypatch):
    whole, y = planted(2400)
    paths = write_shards(tmp_path, whole, y, [600, 1200, 1800])
    from_files = SubtreeLinearClassifier(cv=2).fit(TreeShards(paths))
    fit_on_row_shards(monkeypatch, 600)
    sharded = SubtreeLinearClassifier(cv=2).fit(whole, y)
    assert from_files.fit_info_[0]["pruned"]["share"] < 1.0
    assert from_files.fit_info_ == sharded.fit_info_
    assert from_files.rules_.listing() == sharded.rules_.listing()


def docbin_shards(directory: Path, n_docs=24, n_files=3, multilabel=False):
    """Random labeled docs as DocBin files (one per run of docs) and as BACT files of their word chains."""
    import spacy
    from spacy.tokens import DocBin

    from spacy_treeboost.trees.doc_trees import TreeSpec, docs_to_forest

    nlp, rng = spacy.blank("en"), numpy.random.default_rng(11)
    words = ["good", "bad", "film", "plot", "not", "very", "dull", "fine"]
    docs = []
    for i in range(n_docs):
        doc = nlp(" ".join(rng.choice(words, size=int(rng.integers(2, 9)))) + ". " + " ".join(rng.choice(words, 4)))
        pos = i % 2 == 0
        doc.cats = {"POS": float(pos), "NEG": float(not pos), **({"FUN": float(i % 3 == 0)} if multilabel else {})}
        docs.append(doc)
    cuts = numpy.linspace(0, n_docs, n_files + 1).round().astype(int)
    spacy_paths = []
    for k in range(n_files):
        path = directory / f"part{k}.spacy"
        DocBin(docs=docs[cuts[k]:cuts[k + 1]], store_user_data=True).to_disk(path)
        spacy_paths.append(str(path))
    forest = docs_to_forest(docs, TreeSpec())
    classes = ["POS" if i % 2 == 0 else "NEG" for i in range(n_docs)]
    return spacy_paths, write_shards(directory, forest, classes, [int(c) for c in cuts[1:-1]])


def test_docbin_shards_train_the_model_of_their_trees_in_bact_files(tmp_path):
    spacy_paths, bact_paths = docbin_shards(tmp_path)
    from_docs = SubtreeLinearClassifier(**FIT).fit(TreeShards(spacy_paths))
    from_trees = SubtreeLinearClassifier(**FIT).fit(TreeShards(bact_paths))
    assert classifier_to_bytes(from_docs) == classifier_to_bytes(from_trees)


def test_docbin_shards_take_several_labels_per_doc_unless_the_classes_are_exclusive(tmp_path):
    spacy_paths, _ = docbin_shards(tmp_path, multilabel=True)
    with pytest.raises(ValueError, match="exactly one") as err:
        SubtreeLinearClassifier(**FIT).fit(TreeShards(spacy_paths))
    assert "\n" not in str(err.value)
    model = SubtreeLinearClassifier(**FIT).fit(TreeShards(spacy_paths, exclusive_classes=False))
    assert model.multilabel_ and model.classes_ == ["FUN", "NEG", "POS"]
    only = SubtreeLinearClassifier(**FIT).fit(TreeShards(spacy_paths, labels=["POS", "NEG"]))
    assert only.classes_ == ["NEG", "POS"]


def test_docbin_shards_get_one_line_errors(tmp_path):
    from spacy_treeboost.trees.doc_trees import TreeSpec

    spacy_paths, _ = docbin_shards(tmp_path)
    bad = tmp_path / "bad.spacy"
    bad.write_bytes(b"not a docbin")
    for X, match in [(TreeShards([spacy_paths[0], str(bad)]), "not a spaCy DocBin"),
                     (TreeShards(spacy_paths, spec=TreeSpec(tree_mode="dependency")), "needs parsed docs")]:
        with pytest.raises(ValueError, match=match) as err:
            SubtreeLinearClassifier(**FIT).fit(X)
        assert "\n" not in str(err.value)


def test_bad_shard_files_get_one_line_errors(tmp_path):
    forest, y = labelled(2, 8)
    paths = write_shards(tmp_path, forest, y, [4])
    fit = SubtreeLinearClassifier(**FIT).fit
    empty = tmp_path / "empty.tree"
    empty.write_text("")
    one_class = write_shards(tmp_path, forest, ["c0"] * len(forest), [])
    for X, y_, match in [(TreeShards([]), None, "names no file"),
                         (TreeShards([str(tmp_path / "missing.tree")]), None, "cannot read the shard file"),
                         (TreeShards([paths[0], str(empty)]), None, "holds no documents"),
                         (TreeShards(one_class), None, "only one class"),
                         (TreeShards(paths), y, "pass y=None")]:
        with pytest.raises(ValueError, match=match) as err:
            fit(X, y_)
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="max_rules=5"):
        SubtreeLinearClassifier(max_rules=5).fit(TreeShards(paths))
    with pytest.raises(ValueError, match="y is None"):
        SubtreeLinearClassifier().fit(forest)


class ReadGuard:
    """An audit hook that fails an open of the guarded paths in the process that set it (not in its workers)."""

    def __init__(self):
        self.pid, self.paths = os.getpid(), set()
        sys.addaudithook(self)

    def __call__(self, event, args):
        if event == "open" and self.paths and os.getpid() == self.pid and isinstance(args[0], (str, Path)) \
                and os.path.realpath(args[0]) in self.paths:
            raise PermissionError(f"the training process opened the shard file {args[0]}")


GUARD = None


@pytest.fixture
def guarded():
    """Guard the given shard paths against this process's reads during the test."""
    global GUARD
    GUARD = GUARD or ReadGuard()
    yield lambda paths: GUARD.paths.update(os.path.realpath(p) for p in paths)
    GUARD.paths.clear()


def test_the_guard_stops_a_read_here(tmp_path, guarded):
    forest, y = labelled(2, 8)
    paths = write_shards(tmp_path, forest, y, [4])
    guarded(paths)
    with pytest.raises(ValueError, match="the training process opened"):
        SubtreeLinearClassifier(**FIT).fit(TreeShards(paths))


@pytest.mark.slow
def test_worker_processes_fit_the_same_model_and_this_process_reads_no_shard(tmp_path, guarded):
    forest, y = labelled(7, 30)
    paths = write_shards(tmp_path, forest, y, [8, 15, 22])
    guarded(paths)
    models = set()
    for n_workers in (1, 2, 3):
        model = SubtreeLinearClassifier(**FIT, n_workers=n_workers, backend="processes").fit(TreeShards(paths))
        assert len(model.peak_rss_["workers"]) == n_workers and all(r > 0 for r in model.peak_rss_["workers"])
        models.add(classifier_to_bytes(model))
    assert len(models) == 1


def test_learn_takes_several_files_or_a_glob_and_trains_from_them_as_shards(tmp_path):
    from typer.testing import CliRunner

    from spacy_treeboost import cli
    from spacy_treeboost.learning.classifier_files import classifier_from_bytes

    forest, y = labelled(4, 24)
    paths = write_shards(tmp_path, forest, y, [6, 12, 18])
    result = CliRunner().invoke(cli.app, ["learn", str(tmp_path / "shard*.tree"), str(tmp_path / "m.bin"),
                                          "--max-pattern-size", "2"])
    assert result.exit_code == 0, result.output
    assert "of the training files" in result.output and "rules over" in result.output
    expected = SubtreeLinearClassifier(max_pattern_size=2).fit(TreeShards(paths))
    assert classifier_from_bytes((tmp_path / "m.bin").read_bytes()).rules_.listing() == expected.rules_.listing()
    result = CliRunner().invoke(cli.app, ["learn", str(tmp_path / "none*.tree"), str(tmp_path / "m.bin")])
    assert result.exit_code == 2 and "no file matches" in result.output
