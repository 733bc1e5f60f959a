"""The generated opinion corpus of the NMTF quick start: reproducible byte for byte, plain opinions (no negation),
half of its opinion words from the shipped lexicon."""
import importlib.util
import json
from pathlib import Path

from spacy_treeboost.nmtf.lexicons import read_jsonl_lexicon

CORPORA = Path(__file__).resolve().parents[1] / "corpora"


def _generator():
    spec = importlib.util.spec_from_file_location("make_opinions", CORPORA / "make_opinions.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _records(split):
    return [json.loads(line) for line in (CORPORA / "opinions" / f"{split}.jsonl").open(encoding="utf-8")]


def test_generator_rewrites_the_committed_files_byte_for_byte(tmp_path):
    _generator().main(tmp_path)
    for split in ("train", "dev", "test"):
        assert (tmp_path / f"{split}.jsonl").read_bytes() == (CORPORA / "opinions" / f"{split}.jsonl").read_bytes()


def test_splits_sizes_labels_and_no_shared_text():
    splits = {split: _records(split) for split in ("train", "dev", "test")}
    assert {k: len(v) for k, v in splits.items()} == {"train": 600, "dev": 200, "test": 200}
    assert sum("label" in r for r in splits["train"]) == 150
    for split in ("dev", "test"):
        labels = [r["label"] for r in splits[split]]
        assert labels.count("POS") == labels.count("NEG") == 100
    texts = [r["text"] for records in splits.values() for r in records]
    assert len(set(texts)) == len(texts)


def test_opinions_are_plain_and_half_of_their_words_are_in_the_lexicon():
    module = _generator()
    lexicon = read_jsonl_lexicon(CORPORA / "lexicons" / "sentiment_small.jsonl")
    sides = (("POS", lexicon.positive, lexicon.negative), ("NEG", lexicon.negative, lexicon.positive))
    for polarity, own, other in sides:
        assert set(module.LEXICON_WORDS[polarity]) <= set(own)
        assert not set(module.OTHER_WORDS[polarity]) & (set(own) | set(other))
    words = {w.strip(".,!?").lower() for r in _records("train") for w in r["text"].split()}
    assert not words & {"not", "never", "hardly", "n't", "but", "although", "don't", "can't", "nobody"}
