"""Tests for the `spacy_treeboost.JsonlCorpus.v1` reader."""
import gzip
import json
from pathlib import Path

import pytest
import spacy
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from spacy_treeboost.datasets.jsonl import CorpusFormatError
from spacy_treeboost.datasets.readers import JsonlCorpus

SINGLE = [
    {"text": "Not good at all.", "label": "NEG", "fold": 0},
    {"text": "Never boring, truly.", "label": "POS", "fold": 1},
    {"text": "Hardly worth it.", "label": "NEG", "fold": 2},
    {"text": "A small gem.", "label": "MIXED", "fold": 1},
]
MULTI = [
    {"text": "The minister opened a clinic.", "labels": ["POLITICS", "HEALTH"], "split": "train"},
    {"text": "The team won.", "labels": ["SPORT"], "split": "train"},
    {"text": "Nothing to see.", "labels": [], "split": "dev"},
]


@pytest.fixture(scope="module")
def nlp():
    return spacy.blank("en")


def _jsonl(path: Path, records, *, gz: bool = False) -> Path:
    data = "".join(json.dumps(r) + "\n" for r in records).encode("utf-8")
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


def _expected_cats(record, label_set):
    gold = [record["label"]] if "label" in record else record["labels"]
    return {label: float(label in gold) for label in label_set}


@pytest.mark.parametrize("records", [SINGLE, MULTI])
@pytest.mark.parametrize("gz", [False, True])
def test_examples_have_all_labels_and_tokenizer_only_predicted(tmp_path, nlp, records, gz):
    path = _jsonl(tmp_path / ("c.jsonl.gz" if gz else "c.jsonl"), records, gz=gz)
    corpus = JsonlCorpus(path)
    examples = list(corpus(nlp))
    label_set = sorted({l for r in records for l in ([r["label"]] if "label" in r else r["labels"])})
    assert corpus.labels == label_set
    assert len(examples) == len(records)
    for eg, record in zip(examples, records):
        assert isinstance(eg, Example)
        assert eg.reference.text == record["text"]
        assert eg.reference.cats == _expected_cats(record, label_set)
        assert isinstance(eg.predicted, Doc)
        assert [t.text for t in eg.predicted] == [t.text for t in nlp.make_doc(record["text"])]
        assert eg.predicted.cats == {}
        assert not eg.predicted.has_annotation("DEP")


def test_reader_is_re_iterable_and_rereads_the_file(tmp_path, nlp):
    path = _jsonl(tmp_path / "c.jsonl", SINGLE)
    corpus = JsonlCorpus(path, labels=["MIXED", "NEG", "POS"])
    first = [(eg.reference.text, eg.reference.cats) for eg in corpus(nlp)]
    second = [(eg.reference.text, eg.reference.cats) for eg in corpus(nlp)]
    assert first == second and len(first) == 4
    _jsonl(path, SINGLE[:2])
    assert [eg.reference.text for eg in corpus(nlp)] == [r["text"] for r in SINGLE[:2]]


def test_given_labels_keep_their_order_and_collected_labels_come_from_the_whole_file(tmp_path, nlp):
    path = _jsonl(tmp_path / "c.jsonl", SINGLE)
    corpus = JsonlCorpus(path, labels=["POS", "NEG", "MIXED", "UNUSED"])
    eg = next(corpus(nlp))
    assert list(eg.reference.cats) == ["POS", "NEG", "MIXED", "UNUSED"]
    assert eg.reference.cats == {"POS": 0.0, "NEG": 1.0, "MIXED": 0.0, "UNUSED": 0.0}
    collected = JsonlCorpus(path, folds=[0], limit=1)
    assert [eg.reference.cats for eg in collected(nlp)] == [{"MIXED": 0.0, "NEG": 1.0, "POS": 0.0}]


def test_fold_filter_limit_and_field_mapping(tmp_path, nlp):
    path = _jsonl(tmp_path / "c.jsonl", SINGLE)
    picked = JsonlCorpus(path, folds=[1, 2])
    assert [eg.reference.text for eg in picked(nlp)] == [SINGLE[1]["text"], SINGLE[2]["text"], SINGLE[3]["text"]]
    assert len(list(JsonlCorpus(path, folds=[1, 2], limit=2)(nlp))) == 2
    with pytest.raises(CorpusFormatError, match=r"no line has 'fold' in \['1'\].*0 is not \"0\""):
        list(JsonlCorpus(path, folds=["1"])(nlp))
    renamed = [
        {"body": "Oil prices rose.", "r8_label": "crude", "r10": ["crude"], "modapte": "train"},
        {"body": "Two topics here.", "r8_label": None, "r10": ["grain", "wheat"], "modapte": "train"},
        {"body": "Other topic.", "r8_label": None, "r10": [], "modapte": "test"},
        {"body": "Earnings up.", "r8_label": "earn", "r10": ["earn"], "modapte": "test"},
    ]
    path = _jsonl(tmp_path / "r.jsonl", renamed)
    r8 = JsonlCorpus(path, text_field="body", label_field="r8_label", labels_field=None,
                             fold_field="modapte", folds=["test"], skip_unlabeled=True)
    assert [(eg.reference.text, eg.reference.cats) for eg in r8(nlp)] == [
        ("Earnings up.", {"crude": 0.0, "earn": 1.0}),
    ]
    r10 = JsonlCorpus(path, text_field="body", label_field=None, labels_field="r10", skip_unlabeled=True)
    assert [eg.reference.text for eg in r10(nlp)] == ["Oil prices rose.", "Two topics here.", "Earnings up."]
    assert r10.labels == ["crude", "earn", "grain", "wheat"]
    with pytest.raises(CorpusFormatError, match=r"r\.jsonl, line 2: the record has neither 'r8_label' nor 'labels'"):
        list(JsonlCorpus(path, text_field="body", label_field="r8_label")(nlp))


def test_label_map(tmp_path, nlp):
    path = _jsonl(tmp_path / "c.jsonl", [{"text": "a", "label": "pos"}, {"text": "b", "label": "neg"}])
    corpus = JsonlCorpus(path, label_map={"pos": "POS", "neg": "NEG"})
    assert [eg.reference.cats for eg in corpus(nlp)] == [{"NEG": 0.0, "POS": 1.0}, {"NEG": 1.0, "POS": 0.0}]


@pytest.mark.parametrize(
    "lines,kwargs,message",
    [
        (['{"text": "a", "label": "POS"}', '{"text": "b", "label": POS}'], {}, r"c\.jsonl, line 2: invalid JSON"),
        (['{"label": "POS"}'], {}, r"c\.jsonl, line 1: the record has no 'text' field"),
        (['{"text": 3, "label": "POS"}'], {}, r"line 1: the record has a non-string 'text' field"),
        (['{"text": "a", "label": "POS", "labels": ["POS"]}'], {}, r"line 1: the record has both 'label' and 'labels'"),
        (['{"text": "a"}'], {}, r"line 1: the record has neither 'label' nor 'labels'.*skip_unlabeled"),
        (['{"text": "a", "label": "POS"}', '{"text": "b", "label": "MEH"}'], {"labels": ["POS", "NEG"]},
         r"line 2: label 'MEH' is not in the label set \['POS', 'NEG'\]"),
        (['{"text": "a", "label": "POS"}', '{"text": "b", "labels": ["POS"]}'], {}, r"line 2: the file mixes"),
        (['{"text": "a", "labels": "POS"}'], {}, r"line 1: labels must be a string .* found 'POS'"),
    ],
)
def test_errors_name_the_file_and_line(tmp_path, nlp, lines, kwargs, message):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(CorpusFormatError, match=message):
        list(JsonlCorpus(path, **kwargs)(nlp))


def test_bad_arguments(tmp_path, nlp):
    with pytest.raises(ValueError, match="needs a path"):
        JsonlCorpus(None)
    with pytest.raises(ValueError, match="cannot both be None"):
        JsonlCorpus(tmp_path / "c.jsonl", label_field=None, labels_field=None)
    with pytest.raises(ValueError, match="a label is repeated"):
        JsonlCorpus(tmp_path / "c.jsonl", labels=["A", "A"])
    with pytest.raises(FileNotFoundError, match="nowhere.jsonl"):
        list(JsonlCorpus(tmp_path / "nowhere.jsonl")(nlp))


def test_resolves_from_a_config_block(tmp_path, nlp):
    path = _jsonl(tmp_path / "c.jsonl", SINGLE)
    config = {"train": {"@readers": "spacy_treeboost.JsonlCorpus.v1", "path": str(path), "folds": [0, 2]}}
    corpus = registry.resolve(config)["train"]
    assert isinstance(corpus, JsonlCorpus)
    assert [eg.reference.text for eg in corpus(nlp)] == [SINGLE[0]["text"], SINGLE[2]["text"]]


def test_embedded_corpora_read(nlp):
    root = Path(__file__).resolve().parents[1] / "corpora"
    reviews = JsonlCorpus(root / "reviews" / "dev.jsonl")
    assert sum(1 for _ in reviews(nlp)) > 0 and reviews.labels == ["NEG", "POS"]
    topics = JsonlCorpus(root / "topics" / "dev.jsonl")
    examples = list(topics(nlp))
    assert examples and all(set(eg.reference.cats) == set(topics.labels) for eg in examples)
    assert all(1 <= sum(eg.reference.cats.values()) <= 2 for eg in examples)


R8 = ["acq", "crude", "earn", "grain", "interest", "money-fx", "ship", "trade"]


@pytest.mark.parametrize(
    "relpath,kwargs",
    [
        ("movie_review_polarity_v2/movie_review_polarity_v2.jsonl", {"folds": [9], "labels": ["neg", "pos"]}),
        ("sentence_polarity_v1/sentence_polarity_v1.jsonl", {"labels": ["neg", "pos"]}),
        ("reuters21578/reuters21578.jsonl.gz", {"label_field": "r8_label", "labels_field": None, "labels": R8,
                                                "fold_field": "modapte", "folds": ["test"], "skip_unlabeled": True}),
        ("reuters21578/reuters21578.jsonl.gz", {"labels_field": "r10", "skip_unlabeled": True, "fold_field": "modapte",
                                                "folds": ["train"], "labels": ["acq", "corn", "crude", "earn", "grain",
                                                "interest", "money-fx", "ship", "trade", "wheat"]}),
    ],
)
def test_reads_the_shared_jsonl_corpora(shared_data, nlp, relpath, kwargs):
    path = shared_data / relpath
    if not path.is_file():
        pytest.skip(f"{path} not present")
    examples = list(JsonlCorpus(path, limit=20, **kwargs)(nlp))
    assert len(examples) == 20
    for eg in examples:
        assert list(eg.reference.cats) == kwargs["labels"]
        assert sum(eg.reference.cats.values()) >= 1.0
        assert len(eg.predicted) > 0
