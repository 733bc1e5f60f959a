"""Streaming inference: the `apply` command."""
import gzip
import json
import subprocess
import sys

import pytest

from spacy_treeboost.streaming import apply_stream, count_records
from textcat_pipes import saved_boosting_pipeline

TEXTS = ["good fun", "boring plot", "", "not good , not fun", "a film — with “quotes” and ünïcode"] * 7


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipeline") / "model"
    nlp = saved_boosting_pipeline(path)
    return path, {t: nlp(t).cats for t in TEXTS}


def write_input(path, records):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf8") as f:
        for record in records:
            f.write(json.dumps(record) + "\n")


def read_output(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf8") as f:
        return [json.loads(line) for line in f]


def run(*args):
    return subprocess.run([sys.executable, "-m", "spacy_treeboost", *map(str, args)], capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz"])
def test_apply_writes_each_line_with_its_cats_in_order(tmp_path, pipeline, suffix):
    model, expected = pipeline
    source, target = tmp_path / f"in{suffix}", tmp_path / f"out{suffix}"
    write_input(source, [{"id": i, "text": t} for i, t in enumerate(TEXTS)])
    result = run("apply", model, source, target, "--batch-size", 4)
    assert result.returncode == 0, result.stderr
    assert f"classified {len(TEXTS)} texts" in result.stderr
    rows = read_output(target)
    assert [r["id"] for r in rows] == list(range(len(TEXTS))) and [r["text"] for r in rows] == TEXTS
    assert all(r["cats"] == expected[r["text"]] for r in rows)
    assert not list(tmp_path.glob(".*.tmp"))


@pytest.mark.slow
def test_apply_on_two_processes_gives_the_same_output(tmp_path, pipeline):
    model, _ = pipeline
    source = tmp_path / "in.jsonl"
    write_input(source, [{"text": t} for t in TEXTS])
    assert apply_stream(str(model), source, tmp_path / "one.jsonl", batch_size=3) == len(TEXTS)
    assert apply_stream(str(model), source, tmp_path / "two.jsonl", batch_size=3, n_workers=2) == len(TEXTS)
    assert (tmp_path / "one.jsonl").read_bytes() == (tmp_path / "two.jsonl").read_bytes()


@pytest.mark.parametrize("line, message", [
    ('{"txt": "x"}', 'line 2: each line needs a "text" string'),
    ("not json", "line 2: invalid JSON"),
])
@pytest.mark.slow
def test_apply_names_the_bad_line_and_keeps_no_partial_output(tmp_path, pipeline, line, message):
    model, _ = pipeline
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text('{"text": "good"}\n' + line + "\n", encoding="utf8")
    result = run("apply", model, source, target)
    assert result.returncode == 2 and message in result.stderr
    assert not target.exists() and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.slow
def test_apply_rejects_a_missing_input(tmp_path, pipeline):
    model, _ = pipeline
    result = run("apply", model, tmp_path / "missing.jsonl", tmp_path / "out.jsonl")
    assert result.returncode == 2 and "JSONL file not found" in result.stderr


def test_the_progress_bar_knows_the_total_of_a_plain_file_only(tmp_path, pipeline, capsys):
    model, _ = pipeline
    records = [{"id": i, "text": t} for i, t in enumerate(TEXTS)]
    write_input(tmp_path / "in.jsonl", records)
    (tmp_path / "in.jsonl").write_text((tmp_path / "in.jsonl").read_text() + "\n\n", encoding="utf8")
    assert count_records(tmp_path / "in.jsonl") == len(TEXTS)
    apply_stream(str(model), tmp_path / "in.jsonl", tmp_path / "out.jsonl", progress=True)
    bar = capsys.readouterr().err
    assert f"{len(TEXTS)}/{len(TEXTS)}" in bar and "<00:00" in bar
    write_input(tmp_path / "in.jsonl.gz", records)
    assert count_records(tmp_path / "in.jsonl.gz") is None
    apply_stream(str(model), tmp_path / "in.jsonl.gz", tmp_path / "out.jsonl", progress=True)
    assert f"{len(TEXTS)}/{len(TEXTS)}" not in capsys.readouterr().err
