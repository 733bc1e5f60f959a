"""The nmtf_sentiment component: training from Examples, annotations, serialization, pickling."""
import pickle

import numpy as np
import pytest
import spacy
import srsly
from spacy.training import Example
from spacy.util import registry

from spacy_treeboost.nmtf.lexicons import Lexicon, read_hu_liu_lexicon, read_jsonl_lexicon
from spacy_treeboost.nmtf import MFLK, SSMFLK, build_vocabulary, lexicon_prior, document_term_matrix, word_weights
from spacy_treeboost.files import ModelFormatError
from spacy_treeboost.pipeline.nmtf_factory import DEFAULT_CONFIG
from spacy_treeboost.pipeline.nmtf_sentiment import NMTFSentiment
from spacy_treeboost.nmtf.calibration import Calibration
from spacy_treeboost.pipeline.scoring import score_nmtf_cats
from nmtf_pipes import LEXICON, TEXTS, make_examples, make_nlp, train

def test_training_from_examples_matches_the_estimator():
    nlp = make_nlp(use_labels=False, tol=0.0)
    examples, losses = train(nlp, steps=4)
    pipe = nlp.get_pipe("nmtf_sentiment")
    tokens = [[t.lower_ for t in eg.predicted] for eg in examples]
    vocabulary = build_vocabulary(tokens)
    weights = word_weights(document_term_matrix(tokens, vocabulary))
    X = document_term_matrix(tokens, vocabulary, word_weights=weights)
    reference = MFLK(lexicon_prior(vocabulary, LEXICON.positive, LEXICON.negative), tol=0.0).fit(X)
    assert pipe.vocabulary == vocabulary
    assert losses["nmtf_sentiment"] == pytest.approx(reference.objective_[-1])
    docs = list(nlp.pipe(["great fun", "awful dull plot"]))
    new = document_term_matrix([["great", "fun"], ["awful", "dull", "plot"]], vocabulary, word_weights=weights)
    gold = np.array([-1 if label is None else int(label == "neg") for _, label in TEXTS])
    p = Calibration.fit(reference.decision_function(X), gold).positive_probability(reference.decision_function(new))
    np.testing.assert_allclose([[d.cats["pos"], d.cats["neg"]] for d in docs], np.stack([p, 1 - p], axis=1))
    assert docs[0].cats["pos"] > 0.5 > docs[1].cats["pos"]


def test_labelled_training_and_scores():
    nlp = make_nlp()
    examples, losses = train(nlp, steps=3)
    assert set(losses) == {"nmtf_sentiment"}
    scores = nlp.evaluate(examples[:6])
    assert scores["cats_score"] == 1.0 and "nmtf_cats_score" not in scores
    assert 0 < scores["cats_log_loss"] < np.log(2) and 0 <= scores["cats_ece"] < 0.5
    doc = nlp("nothing known here")
    no_evidence = nlp.get_pipe("nmtf_sentiment").calibration.positive_probability(np.zeros(1))[0]
    assert doc.cats == {"pos": pytest.approx(no_evidence), "neg": pytest.approx(1 - no_evidence)}


def test_update_stops_at_max_iter_and_always_reports_a_loss():
    nlp = make_nlp(max_iter=7, tol=0.0)
    examples, _ = train(nlp, steps=3)
    pipe = nlp.get_pipe("nmtf_sentiment")
    assert pipe._estimator.n_iter_ == 7
    losses = {}
    pipe.update(examples, losses=losses)
    assert losses["nmtf_sentiment"] == pytest.approx(pipe._estimator.objective_[-1])


def test_unlabeled_reader_adds_documents():
    nlp = make_nlp()
    examples = make_examples(nlp)
    unlabeled = lambda nlp_: ["an extra unseenword document", "another unseenword"]  # noqa: E731
    nlp.get_pipe("nmtf_sentiment").initialize(lambda: examples, nlp=nlp, lexicon=LEXICON, unlabeled=unlabeled)
    assert "unseenword" in nlp.get_pipe("nmtf_sentiment").vocabulary


def test_initialize_through_config_readers(tmp_path):
    folder = tmp_path / "lex"
    folder.mkdir()
    (folder / "positive-words.txt").write_text(";header\n" + "\n".join(sorted(LEXICON.positive)) + "\n", encoding="utf-8")
    (folder / "negative-words.txt").write_text(";header\n" + "\n".join(sorted(LEXICON.negative)) + "\n", encoding="utf-8")
    assert registry.readers.get("spacy_treeboost.HuLiuLexicon.v1").__wrapped__ is read_hu_liu_lexicon
    assert registry.readers.get("spacy_treeboost.JsonlLexicon.v1").__wrapped__ is read_jsonl_lexicon
    nlp = make_nlp()
    nlp.config["initialize"]["components"]["nmtf_sentiment"] = {
        "lexicon": {"@readers": "spacy_treeboost.HuLiuLexicon.v1", "path": str(folder)}
    }
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    assert nlp("great fun").cats["pos"] > 0.5


@pytest.mark.parametrize("trained", [False, True])
def test_serialization_round_trip(tmp_path, trained):
    nlp = make_nlp(alpha=0.7)
    if trained:
        train(nlp)
    texts = ["great fun", "awful dull plot", "film"]
    from_bytes = make_nlp().from_bytes(nlp.to_bytes())
    nlp.to_disk(tmp_path / "pipeline")
    from_disk = spacy.load(tmp_path / "pipeline")
    for loaded in (from_bytes, from_disk):
        pipe = loaded.get_pipe("nmtf_sentiment")
        assert pipe.cfg == nlp.get_pipe("nmtf_sentiment").cfg and pipe.cfg["learner"]["alpha"] == 0.7
        assert pipe.labels == ("pos", "neg")
        if trained:
            assert [d.cats for d in loaded.pipe(texts)] == [d.cats for d in nlp.pipe(texts)]
        else:
            assert not pipe.is_fitted
            with pytest.raises(ValueError, match="not trained"):
                loaded("great fun")


def test_loaded_component_cannot_be_updated_without_initialize(tmp_path):
    nlp = make_nlp()
    examples, _ = train(nlp)
    loaded = make_nlp().from_bytes(nlp.to_bytes())
    with pytest.raises(ValueError, match="frozen_components"):
        loaded.update(examples)


def test_printed_algorithm_settings_train_like_the_estimator():
    nlp = make_nlp(use_labels=False, tol=0.0, update="sqrt", init="kmeans", prior_scale="one", word_norm=False)
    examples, losses = train(nlp, steps=2)
    tokens = [[t.lower_ for t in eg.predicted] for eg in examples]
    vocabulary = build_vocabulary(tokens)
    X = document_term_matrix(tokens, vocabulary)
    reference = MFLK(lexicon_prior(vocabulary, LEXICON.positive, LEXICON.negative), tol=0.0,
                     update="sqrt", init="kmeans", prior_scale="one")
    reference.fit(X)
    assert losses["nmtf_sentiment"] == pytest.approx(reference.objective_[-1])
    assert nlp.get_pipe("nmtf_sentiment")._word_weights is None


def test_stemming_maps_documents_and_lexicon_alike():
    nlp = make_nlp(stem=True, use_labels=False)
    examples = make_examples(nlp, TEXTS + [("loved it , lovely and loving", None), ("the boringness of it", None)])
    lexicon = Lexicon(["good", "great", "superb", "fun", "loving"], ["bad", "awful", "boring", "dull"])
    pipe = nlp.get_pipe("nmtf_sentiment")
    pipe.initialize(lambda: examples, nlp=nlp, lexicon=lexicon)
    assert "love" in pipe.vocabulary and "loving" not in pipe.vocabulary and "bore" in pipe.vocabulary
    F0 = pipe._estimator._F0
    assert F0[pipe.vocabulary.index("love"), 0] > 0 and F0[pipe.vocabulary.index("bore"), 1] > 0
    nlp.update(examples)
    assert nlp("superb fun , loved").cats["pos"] > 0.5


def test_model_file_without_word_weights_loads():
    nlp = make_nlp()
    train(nlp)
    pipe = nlp.get_pipe("nmtf_sentiment")
    data = pipe._model_data()
    assert len(data["word_weights"]) == len(pipe.vocabulary)
    del data["word_weights"]
    other = make_nlp().get_pipe("nmtf_sentiment")
    other._load_model_bytes(pipe._sealed(data), cfg_loaded=False)
    assert other.is_fitted and other._word_weights is None
    data["word_weights"] = [1.0]
    with pytest.raises(ValueError, match="word_weights"):
        other._load_model_bytes(pipe._sealed(data), cfg_loaded=False)
    with pytest.raises(ValueError, match="format version 1\\) is damaged: its payload or checksum entry is missing"):
        other._load_model_bytes(srsly.msgpack_dumps(pipe._model_data()))


def test_pickle():
    nlp = make_nlp()
    train(nlp)
    scorer = nlp.get_pipe("nmtf_sentiment").scorer
    assert scorer.func is score_nmtf_cats and scorer.keywords == {"prefix": ""}
    texts = ["great fun", "awful dull plot", "superb", "boring"]
    expected = [d.cats for d in nlp.pipe(texts)]
    assert [d.cats for d in pickle.loads(pickle.dumps(nlp)).pipe(texts)] == expected


@pytest.mark.slow
def test_multiprocessing():
    nlp = make_nlp()
    train(nlp)
    texts = ["great fun", "awful dull plot", "superb", "boring"]
    assert [d.cats for d in nlp.pipe(texts, n_process=2, batch_size=2)] == [d.cats for d in nlp.pipe(texts)]


def test_corrupt_or_foreign_files(tmp_path):
    nlp = make_nlp()
    train(nlp)
    pipe = make_nlp().get_pipe("nmtf_sentiment")
    with pytest.raises(ValueError, match="not a serialized nmtf_sentiment"):
        pipe.from_bytes(b"\x00garbage")
    with pytest.raises(ValueError, match="not a serialized nmtf_sentiment"):
        pipe.from_bytes(srsly.msgpack_dumps({"something": 1}))
    nlp.to_disk(tmp_path / "p")
    model_file = tmp_path / "p" / "nmtf_sentiment" / "model"
    model_file.write_bytes(srsly.msgpack_dumps({"format": "other", "format_version": 1}))
    with pytest.raises(ValueError, match="not a spacy-treeboost 'nmtf_sentiment' model file"):
        pipe.from_disk(tmp_path / "p" / "nmtf_sentiment")
    model_file.write_bytes(srsly.msgpack_dumps({"format": "spacy_treeboost.nmtf_sentiment", "format_version": 99}))
    with pytest.raises(ValueError, match="newer"):
        pipe.from_disk(tmp_path / "p" / "nmtf_sentiment")
    model_file.write_bytes(b"\xc1\xc1")
    with pytest.raises(ModelFormatError, match="model is not a 'nmtf_sentiment' model file"):
        pipe.from_disk(tmp_path / "p" / "nmtf_sentiment")
    model_file.write_bytes(b"\x81\xc1")
    with pytest.raises(ModelFormatError, match="unreadable msgpack"):
        pipe.from_disk(tmp_path / "p" / "nmtf_sentiment")
    model_file.unlink()
    with pytest.raises(ModelFormatError, match="model.*does not exist"):
        pipe.from_disk(tmp_path / "p" / "nmtf_sentiment")


# ---- bad input -------------------------------------------------------------------------------


def test_label_outside_the_two_polarities():
    nlp = make_nlp()
    examples = make_examples(nlp) + [Example.from_dict(nlp.make_doc("so so"), {"cats": {"neutral": 1.0}})]
    with pytest.raises(ValueError, match="label 'neutral'.*positive_label and negative_label"):
        nlp.get_pipe("nmtf_sentiment").initialize(lambda: examples, nlp=nlp, lexicon=LEXICON)
    tie = [Example.from_dict(nlp.make_doc("so so"), {"cats": {"pos": 1.0, "neg": 1.0}})]
    with pytest.raises(ValueError, match="exactly one of 'pos' and 'neg'"):
        nlp.get_pipe("nmtf_sentiment").initialize(lambda: make_examples(nlp) + tie, nlp=nlp, lexicon=LEXICON)
    ignored = make_nlp(use_labels=False)
    ignored.get_pipe("nmtf_sentiment").initialize(lambda: make_examples(ignored) + tie, nlp=ignored, lexicon=LEXICON)


def test_missing_lexicon_or_no_lexicon_word():
    nlp = make_nlp()
    with pytest.raises(ValueError, match="needs a sentiment lexicon"):
        nlp.get_pipe("nmtf_sentiment").initialize(lambda: make_examples(nlp), nlp=nlp)
    with pytest.raises(ValueError, match="No lexicon word is in the vocabulary"):
        nlp.get_pipe("nmtf_sentiment").initialize(lambda: make_examples(nlp), nlp=nlp, lexicon=Lexicon(["zesty"], ["drab"]))


def test_empty_corpus():
    nlp = make_nlp()
    with pytest.raises(ValueError, match="training corpus is empty"):
        nlp.get_pipe("nmtf_sentiment").initialize(lambda: [], nlp=nlp, lexicon=LEXICON)


@pytest.mark.parametrize(
    "config,message",
    [
        ({"negative_label": "pos"}, "two different"),
        ({"alpha": -1.0}, "alpha=-1.0 is invalid: use a number >= 0"),
        ({"iterations_per_update": 0}, "iterations_per_update"),
        ({"n_words": 0}, "n_words"),
        ({"init": "random"}, "init"),
        ({"update": "fast"}, "update"),
    ],
)
def test_absurd_settings(config, message):
    with pytest.raises(ValueError, match=message):
        make_nlp(**config)


def test_lemma_tokens_need_a_lemmatizer():
    nlp = make_nlp(token_attr="LEMMA")
    with pytest.raises(ValueError, match="no lemmas"):
        nlp.get_pipe("nmtf_sentiment").initialize(lambda: make_examples(nlp), nlp=nlp, lexicon=LEXICON)


# ---- the shipped config, lexicon and corpus; unlabeled lines from the JSONL reader ------

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from spacy_treeboost.datasets.jsonl import CorpusFormatError  # noqa: E402
from spacy_treeboost.datasets.readers import JsonlCorpus  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "nmtf_sentiment.cfg"


def _config(**overrides):
    from spacy.util import load_config

    return load_config(CONFIG, overrides=overrides, interpolate=False)


@pytest.mark.slow
def test_config_passes_spacy_debug_config():
    result = subprocess.run([sys.executable, "-m", "spacy", "debug", "config", str(CONFIG)], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Config is valid" in result.stdout


def test_config_labels_match_the_shipped_corpus():
    config = _config()
    corpus_labels = {json.loads(line).get("label") for line in (ROOT / "corpora/opinions/train.jsonl").open()} - {None}
    component = config["components"]["nmtf_sentiment"]
    assert {component["positive_label"], component["negative_label"]} == corpus_labels == {"POS", "NEG"}
    assert set(config["corpora"]["train"]["labels"]) == corpus_labels
    assert set(config["corpora"]["dev"]["labels"]) == corpus_labels
    assert (ROOT / config["paths"]["lexicon"]).is_file()


def test_shipped_lexicon_is_documented_jsonl():
    lexicon = read_jsonl_lexicon(ROOT / "corpora" / "lexicons" / "sentiment_small.jsonl")
    assert len(lexicon.positive) >= 50 and len(lexicon.negative) >= 50
    section = (ROOT / "docs" / "nmtf.md").read_text(encoding="utf-8")
    for needle in ('{"word": "good", "polarity": "positive"}', "spacy_treeboost.JsonlLexicon.v1",
                   "spacy_treeboost.HuLiuLexicon.v1", "positive-words.txt", "corpora/lexicons/sentiment_small.jsonl",
                   "unlabeled = true", "label_map", "python -m spacy train configs/nmtf_sentiment.cfg"):
        assert needle in section, needle


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_jsonl_reader_yields_unlabeled_lines_when_asked(tmp_path):
    path = _write(tmp_path / "mixed.jsonl", [
        {"text": "good film", "label": "POS"},
        {"text": "no label here"},
        {"text": "null label", "label": None},
        {"text": "empty list", "labels": []},
        {"text": "bad film", "label": "NEG"},
    ])
    nlp = spacy.blank("en")
    examples = list(JsonlCorpus(path, labels=["POS", "NEG"], unlabeled=True)(nlp))
    assert [eg.reference.text for eg in examples] == ["good film", "no label here", "null label", "empty list", "bad film"]
    assert [eg.reference.cats for eg in examples] == [{"POS": 1.0, "NEG": 0.0}, {}, {}, {}, {"POS": 0.0, "NEG": 1.0}]
    # labels collected from the file ignore the unlabeled lines
    assert JsonlCorpus(path, unlabeled=True).iter_cats() and sorted(
        set().union(*(cats for _, cats in JsonlCorpus(path, unlabeled=True).iter_cats()))) == ["NEG", "POS"]
    assert len(list(JsonlCorpus(path, labels=["POS", "NEG"], unlabeled=True, limit=2)(nlp))) == 2
    with pytest.raises(CorpusFormatError, match="unlabeled = true"):
        list(JsonlCorpus(path, labels=["POS", "NEG"])(nlp))
    assert len(list(JsonlCorpus(path, labels=["POS", "NEG"], skip_unlabeled=True)(nlp))) == 2
    with pytest.raises(ValueError, match="skip_unlabeled and unlabeled"):
        JsonlCorpus(path, skip_unlabeled=True, unlabeled=True)


def test_ssmflk_trains_from_the_config_with_unlabeled_lines(tmp_path):
    """The shipped config on a training file where 80 % of the lines lost their label: the
    component gets every document, labels only the labelled ones, and SSMFLK runs."""
    from spacy.training.initialize import init_nlp

    records = [json.loads(line) for line in (ROOT / "corpora/reviews/train.jsonl").open()]
    for i, record in enumerate(records):
        if i % 5:
            del record["label"]
    path = _write(tmp_path / "train.jsonl", records)
    config = _config(**{"paths.train": str(path)})
    import os

    cwd = os.getcwd()
    os.chdir(ROOT)  # the config's other paths are relative to the repository root
    try:
        nlp = init_nlp(config)
    finally:
        os.chdir(cwd)
    estimator = nlp.get_pipe("nmtf_sentiment")._estimator
    assert estimator.G_.shape[0] == len(records)
    assert int(estimator._c2.sum()) == len(records[::5])
    assert estimator.beta_ > estimator.beta  # beta relative to the fit (beta_scale = "fit")
    before = (estimator.n_iter_, estimator.objective_[-1])
    nlp.get_pipe("nmtf_sentiment").update([])
    assert (estimator.n_iter_, estimator.objective_[-1]) == before
    assert estimator.n_iter_ == nlp.get_pipe("nmtf_sentiment").fit_info_["iterations"]


def test_label_settings_reach_the_estimator_and_bad_ones_name_the_setting():
    nlp = make_nlp(beta_scale="one", label_start=0.0)
    estimator = nlp.get_pipe("nmtf_sentiment")._new_estimator()
    assert (estimator.beta_scale, estimator.label_start) == ("one", 0.0)
    with pytest.raises(ValueError, match="beta_scale"):  # spaCy's config check names it
        make_nlp(beta_scale="relative")
    with pytest.raises(ValueError, match="label_start=.* is invalid"):
        make_nlp(label_start=-1.0)


def test_config_and_docs_name_the_same_printed_algorithm():
    root = Path(__file__).resolve().parents[1]
    cfg = (root / "configs" / "nmtf_sentiment.cfg").read_text(encoding="utf8")
    design = (root / "docs" / "design.md").read_text(encoding="utf8")
    assert 'The printed algorithm is\n# update = "as_printed"' in cfg
    assert '`update="as_printed"` (the printed update rules' in design


def test_a_0_1_cfg_with_flat_factorization_settings_is_refused_and_changes_nothing(tmp_path):
    nlp = make_nlp(alpha=0.7)
    train(nlp)
    nlp.get_pipe("nmtf_sentiment").to_disk(tmp_path / "p")
    cfg = srsly.read_json(tmp_path / "p" / "cfg")
    cfg.update(use_labels=True, alpha=0.5)
    srsly.write_json(tmp_path / "p" / "cfg", cfg)
    other = make_nlp().get_pipe("nmtf_sentiment")
    before = dict(other.cfg)
    with pytest.raises(ValueError, match=r"unknown settings \['alpha', 'use_labels'\].*learner block"):
        other.from_disk(tmp_path / "p")
    assert other.cfg == before


def test_learner_with_a_lexicon_prior_is_refused_and_the_cfg_holds_no_prior():
    nlp = make_nlp()
    assert "lexicon_prior" not in nlp.get_pipe("nmtf_sentiment").cfg["learner"]
    with pytest.raises(ValueError, match="must not hold a lexicon_prior: the component builds it from the lexicon"):
        settings = {key: value for key, value in DEFAULT_CONFIG.items() if key not in ("learner", "scorer")}
        NMTFSentiment(nlp.vocab, None, learner=SSMFLK(lexicon_prior=np.zeros((3, 2))), scorer=None, **settings)


def test_unknown_lexicon_words_count_as_the_known_ones_when_the_lexicon_is_all_a_document_holds():
    nlp = make_nlp()
    examples = make_examples(nlp)
    lexicon = Lexicon(sorted(LEXICON.positive) + ["lovely"], sorted(LEXICON.negative) + ["horrid", "tedious"])
    pipe = nlp.get_pipe("nmtf_sentiment")
    pipe.initialize(lambda: examples, nlp=nlp, lexicon=lexicon)
    vocabulary, weights = pipe.vocabulary, pipe._word_weights
    plain = lambda tokens: document_term_matrix([tokens], vocabulary, word_weights=weights).toarray()[0]
    negative = [w for w in sorted(LEXICON.negative) if w in vocabulary]
    assert "horrid" not in vocabulary and len(negative) > 1
    expected = np.zeros(len(vocabulary))
    for w in negative:
        expected[vocabulary.index(w)] = 2.0 / len(negative)
    expected[vocabulary.index("dull")] += 1.0
    expected = expected / np.linalg.norm(expected) * weights
    rows = pipe._document_matrix([["horrid", "tedious", "dull"], ["horrid", "plot"], ["plot", "dull"], ["horrid"]])
    np.testing.assert_allclose(rows[0].toarray()[0], expected)
    np.testing.assert_allclose(rows[1].toarray()[0], plain(["horrid", "plot"]))
    np.testing.assert_allclose(rows[2].toarray()[0], plain(["plot", "dull"]))
    assert nlp("horrid tedious").cats["neg"] > 0.5 and nlp("lovely").cats["pos"] > 0.5
    loaded = make_nlp().from_bytes(nlp.to_bytes())
    assert loaded("horrid tedious").cats == nlp("horrid tedious").cats
    data = pipe._model_data()
    del data["lexicon"]
    old = make_nlp()
    old.get_pipe("nmtf_sentiment")._load_model_bytes(pipe._sealed(data))
    assert old.get_pipe("nmtf_sentiment")._document_matrix([["horrid"]]).nnz == 0
