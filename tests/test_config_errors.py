"""Bad settings and bad training data, as `spacy train` and `spacy debug config` report them: a short error that
names the setting (or the file and line), its value and what is allowed, and no Python traceback."""
import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from confection import ConfigValidationError
from spacy.util import registry

from spacy_treeboost.config_errors import DataError, setting_error
from spacy_treeboost.datasets.jsonl import CorpusFormatError
from spacy_treeboost.datasets.readers import JsonlCorpus

ROOT = Path(__file__).resolve().parent.parent
TREEBOOST, NMTF = "components.treeboost_textcat", "components.nmtf_sentiment"
LINEAR, BOOST, SENTIMENT = "chain_sentiment.cfg", "chain_rules.cfg", "nmtf_sentiment.cfg"

# (config, setting, value as given on the command line, location spaCy prints (None: the setting's own), text the
# message must hold: the setting's value and what is allowed)
BAD_SETTINGS = [
    (LINEAR, f"{TREEBOOST}.learner.max_pattern_size", "-1", None,
     "max_pattern_size=-1 is invalid: use a whole number from 1 to 64"),
    (LINEAR, f"{TREEBOOST}.learner.max_pattern_size", "0", None,
     "max_pattern_size=0 is invalid: use a whole number from 1 to 64"),
    (LINEAR, f"{TREEBOOST}.learner.min_support", "0", None,
     "min_support=0 is invalid: use a whole number of documents >= 1"),
    (LINEAR, f"{TREEBOOST}.learner.C", "0", None, "C=0 is invalid: use a regularization strength from 1e-06 to 1e+06"),
    (LINEAR, f"{TREEBOOST}.learner.C", "-1", None,
     "C=-1 is invalid: use a regularization strength from 1e-06 to 1e+06"),
    (LINEAR, f"{TREEBOOST}.learner.C", "1e-308", None, "C=1e-308 is invalid: use a regularization strength from 1e-06"),
    (LINEAR, f"{TREEBOOST}.learner.Cs", "[]", None,
     "Cs=[] is invalid: list one or more values of C from 1e-06 to 1e+06"),
    (LINEAR, f"{TREEBOOST}.learner.cv", "1", None, "cv=1 is invalid: use a whole number of folds from 2 to 20"),
    (LINEAR, f"{TREEBOOST}.learner.features", '"foo"', None,
     "features='foo' is invalid: choose one of auto, nb, presence, tfidf"),
    (LINEAR, f"{TREEBOOST}.learner.loss", '"foo"', None,
     "loss='foo' is invalid: choose one of logistic, squared_hinge"),
    (LINEAR, f"{TREEBOOST}.learner.l1_ratio", "2", None, "l1_ratio=2 is invalid: use a number from 0 (L2) to 1 (L1)"),
    (LINEAR, f"{TREEBOOST}.learner.max_cache_mb", "0", None,
     "max_cache_mb=0 is invalid: use a positive number of megabytes"),
    (LINEAR, f"{TREEBOOST}.learner.max_iter", "0", None, "max_iter=0 is invalid: use a whole number from 1 to 1000000"),
    (LINEAR, f"{TREEBOOST}.learner.tol", "0", None, "tol=0 is invalid: use a small positive number"),
    (LINEAR, f"{TREEBOOST}.learner.nb_beta", "2", None, "nb_beta=2 is invalid: use a number from 0 to 1"),
    (LINEAR, f"{TREEBOOST}.learner.max_rules", "0", None,
     "max_rules=0 is invalid: use 'auto' (prune on the cross-validation folds), a whole number of rules >= 1, or None"),
    (LINEAR, f"{TREEBOOST}.threshold", "2", None, "threshold=2 is invalid: use a probability between 0 and 1"),
    (LINEAR, f"{TREEBOOST}.rounds_per_update", "-1", None, "rounds_per_update=-1 is invalid: use a whole number >= 0"),
    (LINEAR, f"{TREEBOOST}.initial_rounds", "-1", None, "initial_rounds=-1 is invalid: use a whole number >= 0"),
    (LINEAR, f"{TREEBOOST}.parse_source", '"foo"', "treeboost_textcat -> parse_source",
     "'foo' is not typing.Literal['pipeline', 'reference', 'predicted']"),
    (LINEAR, f"{TREEBOOST}.trees.tree_mode", '"foo"', "spacy_treeboost.DocTrees.v1 -> tree_mode",
     "tree_mode='foo' is invalid: choose one of 'chain', 'dependency'"),
    (LINEAR, f"{TREEBOOST}.trees.node_attrs", "[]", "spacy_treeboost.DocTrees.v1 -> node_attrs",
     "node_attrs is empty: name at least one token attribute"),
    (LINEAR, f"{TREEBOOST}.trees.node_attrs", '["FOO"]', "spacy_treeboost.DocTrees.v1 -> node_attrs",
     "node_attrs: 'FOO' is not a string-valued token attribute; use any of ORTH, LOWER"),
    (LINEAR, f"{TREEBOOST}.trees.skip_flags", '["FOO"]', "spacy_treeboost.DocTrees.v1 -> skip_flags",
     "skip_flags: 'FOO' is not a boolean token attribute (e.g. IS_PUNCT"),
    (BOOST, f"{TREEBOOST}.learner.algorithm", '"foo"', None,
     "algorithm='foo' is invalid: choose one of bact, frequency, presence"),
    (BOOST, f"{TREEBOOST}.learner.criterion", '"foo"', None, "criterion='foo' is invalid: choose one of iwakura, z"),
    (BOOST, f"{TREEBOOST}.learner.boosting", '"foo"', None, "boosting='foo' is invalid: choose one of adaboost, arcgv"),
    (BOOST, f"{TREEBOOST}.learner.n_rounds", "-1", None, "n_rounds=-1 is invalid: use a whole number >= 0"),
    (BOOST, f"{TREEBOOST}.learner.n_rounds", "1000000000000", None,
     "n_rounds=1000000000000 is invalid: boosting adds one rule per round and class, so use at most 1,000,000 rounds"),
    (BOOST, f"{TREEBOOST}.learner.smoothing", "NaN", None,
     "smoothing='NaN' is invalid: use a positive number, or None for 1/m"),
    (BOOST, f"{TREEBOOST}.learner.smoothing", "0", None,
     "smoothing=0 is invalid: use a positive number, or None for 1/m"),
    (BOOST, f"{TREEBOOST}.learner.max_cache_mb", "0", None,
     "max_cache_mb=0 is invalid: use a positive number of megabytes"),
    (BOOST, f"{TREEBOOST}.learner.n_workers", "0", None, "n_workers=0 is invalid: use a whole number of workers >= 1"),
    (BOOST, f"{TREEBOOST}.learner.backend", '"foo"', None,
     "backend='foo' is invalid: choose one of local, processes, ray"),
    (BOOST, f"{TREEBOOST}.rounds_per_update", "0", None,
     "rounds_per_update=0 is invalid: with initial_rounds = 0 and a boosting learner no rule would ever be learned"),
    (SENTIMENT, f"{NMTF}.learner.alpha", "-1", None, "alpha=-1 is invalid: use a number >= 0"),
    (SENTIMENT, f"{NMTF}.learner.beta", "-1", None, "beta=-1 is invalid: use a number >= 0"),
    (SENTIMENT, f"{NMTF}.learner.offset", "0", None, "offset=0 is invalid: use a number > 0: a multiplicative update cannot move"),
    (SENTIMENT, f"{NMTF}.learner.init", '"foo"', None, "init='foo' is invalid: choose one of lexicon, kmeans"),
    (SENTIMENT, f"{NMTF}.n_words", "0", None, "n_words=0 is invalid: use a whole number >= 1"),
    (SENTIMENT, f"{NMTF}.iterations_per_update", "0", None, "iterations_per_update=0 is invalid: use a whole number >= 1"),
    (SENTIMENT, f"{NMTF}.negative_label", '"POS"', None,
     "positive_label and negative_label must be two different non-empty labels, got 'POS' and 'POS'."),
    (SENTIMENT, f"{NMTF}.norm", '"l3"', "nmtf_sentiment -> norm", "'l3' is not typing.Literal['l1', 'l2']"),
    (SENTIMENT, "paths.lexicon", "nope.jsonl", "spacy_treeboost.Lexicon.v1 -> path",
     "Lexicon not found: nope.jsonl (expected a Hu & Liu folder"),
    (LINEAR, "corpora.train.limit", "-1", "spacy_treeboost.JsonlCorpus.v1 -> limit",
     "limit=-1 is invalid: use a whole number of examples >= 0"),
    (LINEAR, "paths.train", "nope.jsonl", "spacy_treeboost.JsonlCorpus.v1 -> path", "JSONL file not found: nope.jsonl"),
    (SENTIMENT, f"{NMTF}.learner.bogus", "1", "nmtf_sentiment.learner -> bogus", "unexpected argument: 'bogus'"),
    (SENTIMENT, f"{NMTF}.learner.random_state", "99999999999999999999", None,
     "random_state='99999999999999999999' is invalid: use a whole number from 0 to 4294967295"),
    (LINEAR, f"{TREEBOOST}.learner.C", "NaN", None, "C='NaN' is invalid: use a regularization strength from 1e-06"),
    (SENTIMENT, f"{NMTF}.learner.lr_C", "NaN", None, "lr_C='NaN' is invalid: use a number > 0"),
]
# run through `spacy train` as well: one per kind of location
TRAINED = [0, 20, 29, 35, 43]


def spacy_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "spacy", *args], capture_output=True, text=True, cwd=ROOT)


def check_report(result: subprocess.CompletedProcess, loc: str, expected: str) -> None:
    out = result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in out, out[-3000:]
    lines = [line for line in out.splitlines() if line.startswith(loc + "\t")]
    assert len(lines) == 1 and expected in lines[0], out[-3000:]


def default_loc(setting: str) -> str:
    return " -> ".join(setting.split("."))


@pytest.mark.slow
@pytest.mark.parametrize("config,setting,value,loc,expected", BAD_SETTINGS)
def test_debug_config_names_the_bad_setting(config, setting, value, loc, expected):
    result = spacy_cli("debug", "config", f"configs/{config}", f"--{setting}", value)
    check_report(result, loc or default_loc(setting), expected)


@pytest.mark.slow
@pytest.mark.parametrize("index", TRAINED)
def test_spacy_train_names_the_bad_setting(tmp_path, index):
    config, setting, value, loc, expected = BAD_SETTINGS[index]
    result = spacy_cli("train", f"configs/{config}", f"--{setting}", value, "--output", str(tmp_path / "out"))
    check_report(result, loc or default_loc(setting), expected)
    assert not (tmp_path / "out" / "model-last").exists()


@pytest.mark.slow
def test_spacy_train_names_a_positive_label_that_is_not_a_label(tmp_path):
    setting = f"{TREEBOOST}.positive_label"
    result = spacy_cli("train", f"configs/{LINEAR}", f"--{setting}", '"MAYBE"', "--training.max_steps", "1")
    check_report(result, default_loc(setting), "positive_label='MAYBE' is invalid: it is not one of the labels "
                 "['NEG', 'POS']; use one of them, or null")


GOOD = [{"text": f"good fun {i}" if i % 2 else f"dull bad {i}", "label": "POS" if i % 2 else "NEG"}
        for i in range(20)]


def lines(records) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


BAD_CORPORA = [
    ("empty.jsonl", b"", ": the corpus has no document to read (the file is empty or blank). Give a file with "
     "one JSON object per line"),
    ("blank.jsonl", b"\n \n", ": the corpus has no document to read (the file is empty or blank)."),
    ("blank_label.jsonl", lines(GOOD[:3] + [{"text": "x", "label": ""}]), ", line 4: a label is empty or blank"),
    ("one_class.jsonl", lines([r for r in GOOD if r["label"] == "POS"]), "has only one label ('POS') but "
     "exclusive_classes = true needs at least two. Add the other class"),
    ("one_doc.jsonl", lines(GOOD[1:2]), "has only one label ('POS')"),
    ("number.jsonl", lines(GOOD[:3] + [{"text": "x", "label": 1}]), ", line 4: labels must be a string ('label') "
     "or a list of strings ('labels'), found [1]."),
    ("missing.jsonl", lines(GOOD[:3] + [{"text": "x"}]), ", line 4: the record has neither 'label' nor 'labels'; "
     "add one"),
    ("utf8.jsonl", lines(GOOD[:3]) + b'{"text": "b\xffd", "label": "NEG"}\n', ", line 4: the bytes are not UTF-8 "
     "(invalid start byte at byte 11 of the line). Save the file as UTF-8."),
    ("cut.jsonl.gz", gzip.compress(lines(GOOD * 400))[:-20], ": the gzip file is truncated or damaged after line "),
]


@pytest.mark.slow
@pytest.mark.parametrize("name,content,message", BAD_CORPORA)
def test_spacy_train_names_the_bad_corpus_file(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    result = spacy_cli("train", f"configs/{LINEAR}", "--paths.train", str(path), "--training.max_steps", "1")
    out = result.stdout + result.stderr
    assert result.returncode == 1 and "Traceback" not in out, out[-3000:]
    last = out.strip().splitlines()[-1]
    assert last.startswith(str(path)) and message in last, last


@pytest.mark.slow
def test_spacy_train_with_an_empty_dev_corpus_stops_with_one_line(tmp_path):
    """spaCy's training loop reads the dev corpus itself: the reader's error is printed as one line there too."""
    train, dev = tmp_path / "train.jsonl", tmp_path / "dev.jsonl"
    train.write_bytes(lines(GOOD))
    dev.write_bytes(b"")
    result = spacy_cli("train", f"configs/{LINEAR}", "--paths.train", str(train), "--paths.dev", str(dev),
                       "--training.max_steps", "1")
    assert result.returncode == 1 and "Traceback" not in result.stdout + result.stderr, result.stderr[-3000:]
    assert result.stderr.strip().splitlines()[-1] == (
        f"Error: {dev}: the corpus has no document to read (the file is empty or blank). Give a file with one JSON "
        "object per line, e.g. {\"text\": \"...\", \"label\": \"POS\"}.")


def add_pipe(factory: str, **config):
    return spacy.blank("en").add_pipe(factory, config=config)


@pytest.mark.parametrize("factory,config,loc,message", [
    ("treeboost_textcat", {"learner": {"@learners": "spacy_treeboost.SubtreeLinear.v1", "C": 0}},
     ["learner", "C"], "C=0 is invalid"),
    ("treeboost_textcat", {"learner": {"@learners": "spacy_treeboost.CorrectiveBoost.v1", "cv": 1}},
     ["learner", "cv"], "cv=1 is invalid"),
    ("treeboost_textcat", {"learner": {"@learners": "spacy_treeboost.CorrectiveBoost.v1", "estimator": {
        "@learners": "spacy_treeboost.SubtreeBoost.v1", "criterion": "x"}}},
     ["learner", "estimator", "criterion"], "criterion='x' is invalid"),
    ("treeboost_textcat", {"learner": {"@learners": "spacy_treeboost.CorrectiveBoost.v1", "estimator": {
        "@learners": "spacy_treeboost.SubtreeBoost.v1", "n_workers": 0}}},
     ["learner", "estimator", "n_workers"], "n_workers=0 is invalid"),
    ("treeboost_textcat", {"learner": {"@learners": "spacy_treeboost.SubtreeBoost.v1", "smoothing": "NaN"}},
     ["learner", "smoothing"], "smoothing='NaN' is invalid"),
    ("treeboost_textcat", {"threshold": -0.5}, ["threshold"], "threshold=-0.5 is invalid"),
    ("nmtf_sentiment", {"learner": {"@learners": "spacy_treeboost.MFLK.v1", "update": "x"}},
     ["learner", "update"], "update='x' is invalid: choose one of monotone"),
])
def test_the_factories_locate_the_bad_setting(factory, config, loc, message):
    with pytest.raises(ConfigValidationError) as err:
        add_pipe(factory, **config)
    (entry,) = err.value.errors
    assert entry["loc"] == ["components", factory, *loc] and message in entry["msg"]


def test_a_booster_that_can_never_learn_a_rule_is_refused():
    boost = {"@learners": "spacy_treeboost.SubtreeBoost.v1"}
    with pytest.raises(ConfigValidationError, match="no rule would ever be learned"):
        add_pipe("treeboost_textcat", learner=boost, rounds_per_update=0, initial_rounds=0)
    add_pipe("treeboost_textcat", learner=boost, rounds_per_update=0, initial_rounds=5)
    add_pipe("treeboost_textcat", rounds_per_update=0, initial_rounds=0)


@pytest.mark.parametrize("name,settings,loc", [
    ("spacy_treeboost.DocTrees.v1", {"tree_mode": "foo"}, "tree_mode"),
    ("spacy_treeboost.JsonlCorpus.v1", {"path": "nope.jsonl"}, "path"),
    ("spacy_treeboost.JsonlCorpus.v1", {"path": str(ROOT / "corpora/reviews/dev.jsonl"), "limit": -1}, "limit"),
    ("spacy_treeboost.HuLiuLexicon.v1", {"path": "nope"}, "path"),
    ("spacy_treeboost.JsonlLexicon.v1", {"path": "nope.jsonl"}, "path"),
])
def test_registered_functions_locate_the_bad_setting(name, settings, loc):
    group = "tree_builders" if "DocTrees" in name else "readers"
    with pytest.raises(ConfigValidationError) as err:
        registry.resolve({"x": {f"@{group}": name, **settings}})
    assert err.value.errors[0]["loc"] == [name, loc]


def test_a_message_naming_no_setting_is_located_at_its_block():
    err = setting_error(ValueError("the labels repeat"), ["corpora", "train"], ["labels"])
    assert err.errors == [{"loc": ["corpora", "train"], "msg": "the labels repeat"}]
    err = setting_error(TypeError("must be real number, not str"), ["x"], ["y"])
    assert err.errors[0]["msg"].startswith("a setting has the wrong type (must be real number, not str)")


def test_a_corpus_error_is_still_a_corpus_format_error(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": "a"}\n')
    with pytest.raises(CorpusFormatError) as err:
        list(JsonlCorpus(path)(spacy.blank("en")))
    assert isinstance(err.value, DataError)
    assert str(err.value).startswith(f"{path}, line 1: the record has neither 'label' nor 'labels'")


def test_initialize_names_the_training_corpus(tmp_path):
    path = tmp_path / "train.jsonl"
    path.write_bytes(lines([r for r in GOOD if r["label"] == "POS"]))
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat")
    nlp.config["corpora"] = {"train": {"@readers": "spacy_treeboost.JsonlCorpus.v1", "path": str(path)}}
    nlp.config["training"]["train_corpus"] = "corpora.train"
    corpus = JsonlCorpus(path)
    with pytest.raises(DataError) as err:
        nlp.initialize(lambda: corpus(nlp))
    assert str(err.value).startswith(f"{path}: 'treeboost_textcat' has only one label ('POS')")
