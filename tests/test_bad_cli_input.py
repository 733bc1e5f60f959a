"""Careless or hostile input to the command line and the JSONL reader: each case has one exact outcome, a
result or a one-line error naming the file, never a traceback."""
import gzip
import json
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
import spacy
from spacy.tokens import DocBin

from spacy_treeboost.datasets.jsonl import CorpusFormatError, iter_jsonl
from spacy_treeboost.files import seal
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.learning.classifier_files import CLASSIFIER_FORMAT, classifier_to_dict
from spacy_treeboost.datasets.readers import JsonlCorpus
from spacy_treeboost.trees import Forest

LINES = [b'{"text": "good fun", "label": "POS"}', b'{"text": "dull", "label": "NEG"}']


def run(*args):
    return subprocess.run([sys.executable, "-m", "spacy_treeboost", *map(str, args)], capture_output=True, text=True)


def one_line_error(result, expected: str) -> None:
    assert result.returncode == 2 and not result.stdout
    assert result.stderr == f"error: {expected}\n"


@pytest.mark.parametrize("content", [
    b"\xef\xbb\xbf" + b"\r\n".join(LINES) + b"\r\n",
    b"\xef\xbb\xbf" + b"\n".join(LINES),
    b"\r\n".join(LINES) + b"\r\n\r\n",
])
def test_bom_and_crlf_are_read_as_plain_utf8(tmp_path, content):
    path = tmp_path / "c.jsonl"
    path.write_bytes(content)
    assert [r for _, r in iter_jsonl(path)] == [{"text": "good fun", "label": "POS"}, {"text": "dull", "label": "NEG"}]
    assert JsonlCorpus(path).labels is None and list(JsonlCorpus(path).iter_cats()) == [
        ("good fun", {"NEG": 0.0, "POS": 1.0}), ("dull", {"NEG": 1.0, "POS": 0.0})]


@pytest.mark.slow
def test_convert_with_bom_and_crlf_keeps_two_labels(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(LINES) + b"\r\n")
    result = run("convert", path, tmp_path / "out.spacy")
    assert result.returncode == 0 and result.stderr == f"wrote 2 docs -> {tmp_path / 'out.spacy'}\n"
    docs = list(DocBin().from_disk(tmp_path / "out.spacy").get_docs(spacy.blank("en").vocab))
    assert [d.cats for d in docs] == [{"NEG": 0.0, "POS": 1.0}, {"NEG": 1.0, "POS": 0.0}]


@pytest.mark.slow
def test_undecodable_bytes_name_the_file_and_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(LINES[0] + b'\n{"text": "b\xffd", "label": "NEG"}\n')
    message = f"{path}, line 2: the bytes are not UTF-8 (invalid start byte at byte 11 of the line). Save the file as UTF-8."
    with pytest.raises(CorpusFormatError) as err:
        list(JsonlCorpus(path, labels=["NEG", "POS"]).iter_cats())
    assert str(err.value) == message
    one_line_error(run("convert", path, tmp_path / "out.spacy"), message)
    assert not (tmp_path / "out.spacy").exists()


@pytest.mark.slow
def test_truncated_gzip_names_the_file(tmp_path):
    path = tmp_path / "c.jsonl.gz"
    data = gzip.compress(b"".join(b'{"text": "review %d", "label": "POS"}\n' % i for i in range(5000)))
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusFormatError, match=f"^{path}: the gzip file is truncated or damaged after line \\d+ "
                                                "\\(EOFError: .*\\). Copy or download it again.$"):
        list(iter_jsonl(path))
    result = run("convert", path, tmp_path / "out.spacy")
    assert result.returncode == 2 and result.stderr.startswith(f"error: {path}: the gzip file is truncated")
    assert result.stderr.count("\n") == 1


@pytest.mark.slow
def test_convert_refuses_a_device_and_a_directory(tmp_path):
    one_line_error(run("convert", "/dev/zero", tmp_path / "out.spacy"),
                   "/dev/zero is not a regular file; give the path of a .jsonl or .jsonl.gz file.")
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\n".join(LINES))
    one_line_error(run("convert", path, tmp_path),
                   f"{tmp_path} is a directory; give the DocBin a file name, e.g. {tmp_path / 'train.spacy'}")
    one_line_error(run("convert", tmp_path / "missing.jsonl", tmp_path / "out.spacy"),
                   f"JSONL file not found: {tmp_path / 'missing.jsonl'}")


@pytest.mark.slow
def test_convert_with_a_missing_pipeline_is_one_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\n".join(LINES))
    result = run("convert", path, tmp_path / "out.spacy", "--model", "no_such_pipeline_xyz")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: cannot load the pipeline 'no_such_pipeline_xyz' to parse the docs: it "
                                    "is not an installed pipeline package or a pipeline directory.")


@pytest.mark.slow
def test_rules_on_a_device_fails_without_reading_it():
    one_line_error(run("rules", "/dev/zero"),
                   "cannot read /dev/zero: it is not a regular file, so it cannot be a spacy-treeboost model file.")


@pytest.mark.slow
@pytest.mark.parametrize("content,reason", [(b"", "it is empty"), (b"+1 (ROOT(a))\n" * 1000, "it does not start as one does")])
def test_rules_on_a_file_that_is_not_a_model(tmp_path, content, reason):
    path = tmp_path / "model.bin"
    path.write_bytes(content)
    one_line_error(run("rules", path), f"{path} is not a spacy-treeboost model file ({reason}).")
    one_line_error(run("rules", tmp_path), f"cannot read {tmp_path}: it is a directory, not a spacy-treeboost model "
                                           "file.")


def sealed_model(edit) -> bytes:
    f = Forest.from_sentences([[["not", "good"]], [["very", "good"]], [["not", "bad"]], [["so", "bad"]]])
    data = classifier_to_dict(TreeBoostClassifier("frequency", n_rounds=2, max_pattern_size=2).fit(
        f, ["NEG", "POS", "POS", "NEG"]))
    edit(data)
    return seal(data, CLASSIFIER_FORMAT, 1)


@pytest.mark.parametrize("edit,expected", [
    (lambda d: d.update(classes=[]), "The classifier file's classes [] (multilabel=False) do not fit its rule heads "
     "['POS']: two classes need one head naming the positive class, more classes one head per class in order. The "
     "file is damaged or was edited; retrain the model."),
    (lambda d: d.update(classes=["NEG", "NEG"]), "The classifier file lists a class twice: ['NEG', 'NEG']; the file "
     "is damaged."),
    (lambda d: d.update(classes=["NEG", "OTHER"]), "The classifier file's classes ['NEG', 'OTHER'] (multilabel=False) "
     "do not fit its rule heads ['POS']: two classes need one head naming the positive class, more classes one head "
     "per class in order. The file is damaged or was edited; retrain the model."),
    (lambda d: d["rules"].update(heads=[]), "The rule file's heads must be a non-empty list of distinct strings, "
     "found []."),
    (lambda d: d.update(n_rounds="many"), "The classifier file is corrupt: ValueError(\"invalid literal for int() "
     "with base 10: 'many'\")"),
])
@pytest.mark.slow
def test_malformed_model_content_is_a_clear_error(tmp_path, edit, expected):
    path = tmp_path / "model.bin"
    path.write_bytes(sealed_model(edit))
    for command in (["rules", path], ["classify", "/dev/null", path]):
        one_line_error(run(*command), f"{path}: {expected}")


@pytest.mark.slow
def test_a_future_model_names_the_installed_versions(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(seal({}, CLASSIFIER_FORMAT, 3))
    one_line_error(run("rules", path), f"{path}: The classifier file's format version 3 was written by a newer "
                                       "spacy-treeboost (this one reads version 1); upgrade spacy-treeboost "
                                       "or retrain the model.")


records = st.lists(st.dictionaries(st.sampled_from(["text", "label", "fold"]), st.text(max_size=10) | st.integers(),
                                   min_size=1), min_size=1, max_size=6)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=records, bom=st.booleans(), crlf=st.booleans(), gzipped=st.booleans())
def test_iter_jsonl_reads_what_json_wrote(tmp_path, rows, bom, crlf, gzipped):
    end = "\r\n" if crlf else "\n"
    data = ("\ufeff" if bom else "") + end.join(json.dumps(r, ensure_ascii=False) for r in rows) + end
    raw = data.encode("utf-8")
    path = tmp_path / ("c.jsonl.gz" if gzipped else "c.jsonl")
    path.write_bytes(gzip.compress(raw) if gzipped else raw)
    assert [r for _, r in iter_jsonl(path)] == rows


def model_bytes() -> bytes:
    return sealed_model(lambda d: None)


def test_a_planted_symlink_is_never_written_through(tmp_path):
    from spacy_treeboost.files import write_bytes_atomic

    victim = tmp_path / "victim"
    victim.write_bytes(b"keep")
    target = tmp_path / "model.bin"
    for name in (f".model.bin.{os.getpid()}.tmp", "model.bin.part", "out.jsonl.part"):
        (tmp_path / name).symlink_to(victim)
    write_bytes_atomic(target, b"new")
    assert target.read_bytes() == b"new" and victim.read_bytes() == b"keep"
    assert not target.is_symlink() and sorted(p.name for p in tmp_path.glob(".*.tmp")) == [
        f".model.bin.{os.getpid()}.tmp"]
    assert oct(target.stat().st_mode & 0o777) == oct(0o666 & ~current_umask())


def current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_temporary_names_are_new_each_time(tmp_path, monkeypatch):
    from spacy_treeboost import files

    names = []
    real = files.create_temp_beside

    def spy(path):
        fd, tmp = real(path)
        names.append(tmp.name)
        return fd, tmp

    monkeypatch.setattr(files, "create_temp_beside", spy)
    for _ in range(3):
        files.write_bytes_atomic(tmp_path / "m.bin", b"x")
    assert len(set(names)) == 3 and all(n.startswith(".m.bin.") and n.endswith(".tmp") for n in names)


@pytest.mark.slow
def test_a_line_that_never_ends_on_a_device_is_refused(tmp_path):
    env = dict(os.environ, SPACY_TREEBOOST_MAX_LINE_MB="2")
    result = subprocess.run([sys.executable, "-m", "spacy_treeboost", "learn", "/dev/zero", str(tmp_path / "m.bin")],
                            capture_output=True, text=True, env=env)
    one_line_error(result, "/dev/zero, line 1: no line break in the first 2 MiB of the line, and /dev/zero is not a "
                           "regular file (a pipe or a device), so the line may never end. Save the input to a file "
                           "first, or raise the limit by setting SPACY_TREEBOOST_MAX_LINE_MB (now 2).")
    assert not (tmp_path / "m.bin").exists()


def read_through_fifo(tmp_path, data: bytes):
    import threading

    from spacy_treeboost.trees.bact import read_bact

    fifo = tmp_path / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)

    def feed() -> None:
        try:
            with open(fifo, "wb") as f:
                f.write(data)
        except BrokenPipeError:
            pass

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        return read_bact(fifo)
    finally:
        writer.join()


def test_the_line_limit_applies_to_pipes_only(tmp_path, monkeypatch):
    from spacy_treeboost.trees.bact import BactFormatError, read_bact

    long_line = b"+1 (ROOT" + b"(a)" * 700_000 + b")\n-1 (ROOT(b))\n"
    monkeypatch.setenv("SPACY_TREEBOOST_MAX_LINE_MB", "3")
    forest, classes = read_through_fifo(tmp_path, long_line)
    assert classes == ["+1", "-1"] and len(forest) == 2
    monkeypatch.setenv("SPACY_TREEBOOST_MAX_LINE_MB", "1")
    with pytest.raises(BactFormatError, match="fifo, line 1: no line break in the first 1 MiB of the line"):
        read_through_fifo(tmp_path, long_line)
    (tmp_path / "file.tree").write_bytes(long_line)
    assert read_bact(tmp_path / "file.tree")[1] == ["+1", "-1"]
    monkeypatch.setenv("SPACY_TREEBOOST_MAX_LINE_MB", "lots")
    with pytest.raises(BactFormatError, match="SPACY_TREEBOOST_MAX_LINE_MB='lots' is invalid: use a whole number"):
        read_through_fifo(tmp_path, long_line)


def test_a_cfg_nested_too_deeply_is_a_format_error(tmp_path):
    from spacy_treeboost.files import ModelFormatError, load_cfg_json

    with pytest.raises(ModelFormatError, match="nests lists or objects too deeply"):
        load_cfg_json(b"[" * 100_000 + b"]" * 100_000, "cfg")
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"text": ' + b"[" * 100_000 + b"]" * 100_000 + b', "label": "A"}\n')
    with pytest.raises(CorpusFormatError, match="line 1: the JSON nests lists or objects too deeply"):
        list(iter_jsonl(path))


@pytest.mark.slow
def test_convert_errors_are_one_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\n".join(LINES))
    one_line_error(run("convert", path, tmp_path / "o.spacy", "--n-process", "0"),
                   "--n-process, --batch-size, --max-length and --shard-documents must be at least 1, got 0, 64, "
                   "None and None")
    one_line_error(run("convert", path, tmp_path / "o.spacy", "--max-length", "5"),
                   f"{path}: document 1 has 8 characters, more than the pipeline's max_length of 5 (spaCy's limit per "
                   "text). Split the text into shorter documents, or raise the limit with max_length (--max-length); "
                   "a parser needs about 1 GB of memory per 100,000 characters.")
    assert run("convert", path, tmp_path / "o.spacy", "--max-length", "8").returncode == 0
    blocker = tmp_path / "file"
    blocker.write_bytes(b"")
    result = run("convert", path, blocker / "o.spacy")
    assert result.returncode == 2 and result.stderr.startswith(f"error: cannot write {blocker / 'o.spacy'}: ")
    assert result.stderr.count("\n") == 1
