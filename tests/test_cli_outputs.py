"""Outputs that destroy nothing and inputs that fail in one line, run in this process through the command line's
functions: no command replaces a device, a named pipe, a socket or a directory, writes over one of its inputs or
into a pipeline it reads; bad or empty input is one line naming the file and the fix."""
import errno
import gzip
import os
import socket
import stat
import tempfile

import pytest
import spacy
from spacy.tokens import DocBin
from typer.testing import CliRunner

from spacy_treeboost import cli
from spacy_treeboost.datasets.jsonl import CorpusFormatError, iter_jsonl
from spacy_treeboost.datasets.readers import CorpusReadError, JsonlCorpus
from spacy_treeboost.files import OutputError, check_output, write_bytes_atomic

LINES = b'{"text": "good fun", "label": "POS"}\n{"text": "dull", "label": "NEG"}\n'
TREES = "+1 (ROOT(good(fun)))\n-1 (ROOT(dull))\n+1 (ROOT(fun))\n-1 (ROOT(so(dull)))\n"


def invoke(*args):
    return CliRunner().invoke(cli.app, [str(a) for a in args])


def one_line_error(result, expected: str) -> None:
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"error: {expected}\n"), result.output


def node(path):
    st = os.stat(path)
    return st.st_ino, st.st_dev, st.st_mode, st.st_rdev


@pytest.fixture
def inputs(tmp_path):
    (tmp_path / "c.jsonl").write_bytes(LINES)
    (tmp_path / "t.tree").write_text(TREES, encoding="utf8")
    return tmp_path


def commands(tmp):
    """Each command with an output, as a function of the output path (a missing pipeline is named last, so only
    the output check can refuse first)."""
    return {
        "learn": lambda out: ["learn", tmp / "t.tree", out, "--algorithm", "frequency", "--rounds", "2"],
        "convert": lambda out: ["convert", tmp / "c.jsonl", out],
        "init-config": lambda out: ["init-config", out],
        "apply": lambda out: ["apply", "no_such_pipeline_xyz", tmp / "c.jsonl", out],
        "explain": lambda out: ["explain", "no_such_pipeline_xyz", "--text", "good", "--output", out],
        "report": lambda out: ["report", "no_such_pipeline_xyz", "--output", out],
    }


NAMES = ["learn", "convert", "init-config", "apply", "explain", "report"]
REPLACE = ("not a regular file, and writing the output would replace it; give the path of a new or regular file")


@pytest.mark.parametrize("name", NAMES)
def test_no_command_replaces_dev_null(inputs, name):
    before = node("/dev/null")
    one_line_error(invoke(*commands(inputs)[name]("/dev/null")),
                   f"cannot write /dev/null: it is a character device, {REPLACE}")
    assert node("/dev/null") == before and stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("name", NAMES)
def test_no_command_replaces_a_named_pipe_or_a_socket(inputs, name):
    fifo = inputs / "fifo"
    os.mkfifo(fifo)
    before = node(fifo)
    one_line_error(invoke(*commands(inputs)[name](fifo)), f"cannot write {fifo}: it is a named pipe (FIFO), {REPLACE}")
    assert node(fifo) == before and stat.S_ISFIFO(os.stat(fifo).st_mode)
    with tempfile.TemporaryDirectory(dir="/tmp") as short:  # a socket's path must be short
        sock_path = os.path.join(short, "s")
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(sock_path)
            before = node(sock_path)
            one_line_error(invoke(*commands(inputs)[name](sock_path)),
                           f"cannot write {sock_path}: it is a socket, {REPLACE}")
            assert node(sock_path) == before


def test_a_link_to_a_device_and_a_link_loop_are_refused(inputs):
    link, loop = inputs / "null", inputs / "loop"
    link.symlink_to("/dev/null")
    loop.symlink_to(loop)
    for name in NAMES:
        one_line_error(invoke(*commands(inputs)[name](link)), f"cannot write {link}: it is a character device, {REPLACE}")
        one_line_error(invoke(*commands(inputs)[name](loop)), f"cannot write {loop}: it is a symbolic link loop; "
                                                              "remove the link or give another path")
    assert link.is_symlink() and os.readlink(link) == "/dev/null"


def test_the_atomic_write_refuses_what_it_would_replace(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in ("/dev/null", fifo, tmp_path):
        before = node(target)
        with pytest.raises(OutputError, match=f"^cannot write {target}: it is a"):
            write_bytes_atomic(target, b"x")
        assert node(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]


def own_input(tmp, source, output):
    return f"cannot write {output}: it is the input {source}, and writing it would destroy the input; give another " \
           "output path"


def test_learn_refuses_its_learner_config_and_its_training_file(inputs):
    cfg = inputs / "l.cfg"
    cfg.write_text('[learner]\n@learners = "spacy_treeboost.SubtreeBoost.v1"\nn_rounds = 2\n', encoding="utf8")
    content = cfg.read_bytes()
    one_line_error(invoke("learn", inputs / "t.tree", cfg, "--learner-config", cfg), own_input(inputs, cfg, cfg))
    assert cfg.read_bytes() == content
    hard = inputs / "hard.tree"
    os.link(inputs / "t.tree", hard)
    one_line_error(invoke("learn", inputs / "t.tree", hard), own_input(inputs, inputs / "t.tree", hard))
    soft = inputs / "soft.tree"
    soft.symlink_to(inputs / "t.tree")
    for output in (soft, inputs / "sub" / ".." / "t.tree"):
        (inputs / "sub").mkdir(exist_ok=True)
        one_line_error(invoke("learn", inputs / "t.tree", output, "--algorithm", "frequency"),
                       own_input(inputs, inputs / "t.tree", output))
    assert (inputs / "t.tree").read_text(encoding="utf8") == TREES


@pytest.mark.parametrize("alias", ["same", "symlink", "hardlink", "dotted"])
@pytest.mark.parametrize("name", ["convert", "apply"])
def test_convert_and_apply_refuse_their_input(inputs, name, alias):
    source = inputs / "c.jsonl"
    (inputs / "sub").mkdir()
    output = {"same": source, "symlink": inputs / "link", "hardlink": inputs / "hard",
              "dotted": inputs / "sub" / ".." / "c.jsonl"}[alias]
    if alias == "symlink":
        output.symlink_to(source)
    if alias == "hardlink":
        os.link(source, output)
    command = commands(inputs)[name](output)
    one_line_error(invoke(*command), own_input(inputs, source, output))
    assert source.read_bytes() == LINES


def fake_pipeline(tmp):
    """A directory that looks like a pipeline: the commands refuse outputs inside it before loading it."""
    pipeline = tmp / "P"
    pipeline.mkdir()
    (pipeline / "config.cfg").write_text("[nlp]\n", encoding="utf8")
    (pipeline / "meta.json").write_text("{}", encoding="utf8")
    return pipeline


INSIDE = "it lies in the directory {} that this command reads (a pipeline), and writing there would change it; " \
         "give a path outside it"


def test_no_command_writes_into_the_pipeline_it_reads(inputs):
    pipeline = fake_pipeline(inputs)
    linked = inputs / "linked"
    linked.symlink_to(pipeline)
    cases = [
        (["apply", pipeline, inputs / "c.jsonl", pipeline / "config.cfg"], pipeline / "config.cfg", pipeline),
        (["explain", pipeline, "--text", "good", "--output", pipeline / "config.cfg"], pipeline / "config.cfg", pipeline),
        (["report", pipeline, "--output", pipeline / "meta.json"], pipeline / "meta.json", pipeline),
        (["report", linked, "--output", pipeline / "page.html"], pipeline / "page.html", linked),
        (["explain", pipeline, "--text", "good", "--output", linked / "new.html"], linked / "new.html", pipeline),
        (["convert", inputs / "c.jsonl", pipeline / "c.spacy", "--model", pipeline], pipeline / "c.spacy", pipeline),
    ]
    for command, output, read in cases:
        one_line_error(invoke(*command), f"cannot write {output}: {INSIDE.format(read)}")
    assert sorted(p.name for p in pipeline.iterdir()) == ["config.cfg", "meta.json"]
    assert (pipeline / "config.cfg").read_text(encoding="utf8") == "[nlp]\n"


def test_report_refuses_to_write_over_its_data(inputs):
    pipeline = fake_pipeline(inputs)
    data = inputs / "c.jsonl"
    one_line_error(invoke("report", pipeline, "--data", data, "--output", data), own_input(inputs, data, data))
    assert data.read_bytes() == LINES


def test_an_installed_package_is_an_input_directory(tmp_path):
    import numpy

    inside = os.path.join(os.path.dirname(numpy.__file__), "page.html")
    with pytest.raises(OutputError, match="lies in the directory"):
        check_output(inside, [os.path.dirname(numpy.__file__)])
    one_line_error(invoke("report", "numpy", "--output", inside),
                   f"cannot write {inside}: {INSIDE.format(os.path.dirname(numpy.__file__))}")
    assert not os.path.exists(inside)


@pytest.fixture(scope="module")
def blank_pipeline(tmp_path_factory):
    path = tmp_path_factory.mktemp("pipe") / "blank"
    spacy.blank("en").to_disk(path)
    return path


def test_apply_into_a_missing_folder_names_the_folder(inputs, blank_pipeline):
    missing = inputs / "missing"
    one_line_error(invoke("apply", blank_pipeline, inputs / "c.jsonl", missing / "out.jsonl"),
                   f"cannot write {missing / 'out.jsonl'}: the directory {missing} does not exist (create it first)")
    assert not missing.exists()


def test_init_config_into_an_unwritable_directory_is_one_line(tmp_path, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", os.path.join(kwargs["dir"], ".x.tmp"))

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    one_line_error(invoke("init-config", tmp_path / "c.cfg"),
                   f"cannot write {tmp_path / 'c.cfg'}: Permission denied in the directory {tmp_path} (make it "
                   "writable or give a path in another directory)")
    assert list(tmp_path.iterdir()) == []


def test_init_config_refuses_a_language_spacy_lacks(tmp_path):
    one_line_error(invoke("init-config", tmp_path / "c.cfg", "--lang", "qq"),
                   "--lang 'qq' is not a language of spaCy: give a code of spacy.lang, e.g. en, de, fr, or xx for a "
                   "multi-language pipeline")
    assert not (tmp_path / "c.cfg").exists()


NOT_A_PIPELINE = ("cannot load the pipeline 'numpy': it is an installed Python package but not a spaCy pipeline "
                  "(TypeError: ")


@pytest.mark.parametrize("command", [
    lambda tmp: ["convert", tmp / "c.jsonl", tmp / "o.spacy", "--model", "numpy"],
    lambda tmp: ["explain", "numpy", "--text", "good", "--output", tmp / "e.html"],
    lambda tmp: ["report", "numpy", "--output", tmp / "r.html"],
    lambda tmp: ["apply", "numpy", tmp / "c.jsonl", tmp / "o.jsonl"],
])
def test_a_package_that_is_no_pipeline_is_one_line(inputs, command):
    result = invoke(*command(inputs))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
    assert result.stderr.startswith(f"error: {NOT_A_PIPELINE}")
    assert sorted(p.name for p in inputs.iterdir()) == ["c.jsonl", "t.tree"]


@pytest.mark.parametrize("name", ["convert", "apply"])
def test_a_symbolic_link_loop_as_input_is_one_line(inputs, name, blank_pipeline):
    loop = inputs / "loop.jsonl"
    loop.symlink_to(loop)
    command = {"convert": ["convert", loop, inputs / "o.spacy"],
               "apply": ["apply", blank_pipeline, loop, inputs / "o.jsonl"]}[name]
    one_line_error(invoke(*command), f"cannot read {loop}: Too many levels of symbolic links; give the path of a "
                                     ".jsonl or .jsonl.gz file.")


@pytest.mark.parametrize("content", [b"", b"\n  \n\r\n"])
def test_convert_refuses_an_empty_or_blank_corpus(tmp_path, content):
    path = tmp_path / "c.jsonl"
    path.write_bytes(content)
    one_line_error(invoke("convert", path, tmp_path / "o.spacy"),
                   f"{path}: the corpus has no document to read (the file is empty or blank). Give a file with one "
                   "JSON object per line, e.g. {\"text\": \"...\", \"label\": \"POS\"}.")
    assert not (tmp_path / "o.spacy").exists()


def gz_line(path, n_bytes):
    """A gzip file whose first line inflates to `n_bytes` bytes before its line break."""
    text = b"a" * (n_bytes - len(b'{"text": ""}'))
    path.write_bytes(gzip.compress(b'{"text": "' + text + b'"}\n{"text": "b"}\n'))
    return path


def test_a_gzip_line_is_bounded_after_inflation(tmp_path, monkeypatch, blank_pipeline):
    monkeypatch.setenv("SPACY_TREEBOOST_MAX_LINE_MB", "1")
    fits = gz_line(tmp_path / "fits.jsonl.gz", 1 << 20)
    assert [n for n, _ in iter_jsonl(fits)] == [1, 2]
    big = gz_line(tmp_path / "big.jsonl.gz", (1 << 20) + 1)
    assert big.stat().st_size < 10_000
    message = (f"{big}, line 1: the line inflates to more than 1 MiB, longer than any record this reader takes; "
               "split the record, or raise the limit by setting SPACY_TREEBOOST_MAX_LINE_MB (now 1).")
    with pytest.raises(CorpusFormatError) as err:
        list(iter_jsonl(big))
    assert str(err.value) == message
    with pytest.raises(CorpusReadError) as err:
        list(JsonlCorpus(big, labels=["POS"], unlabeled=True)(spacy.blank("en")))
    assert str(err.value) == message
    one_line_error(invoke("convert", big, tmp_path / "o.spacy"), message)
    one_line_error(invoke("apply", blank_pipeline, big, tmp_path / "o.jsonl"), message)
    assert not (tmp_path / "o.spacy").exists() and not (tmp_path / "o.jsonl").exists()


def test_a_docbin_given_to_the_jsonl_reader_names_spacys_reader(tmp_path):
    path = tmp_path / "train.spacy"
    doc = spacy.blank("en")("good fun")
    doc.cats = {"POS": 1.0}
    DocBin(docs=[doc]).to_disk(path)
    message = (f"{path} is a spaCy DocBin (a .spacy file), not JSON lines: read it with spaCy's reader "
               "(@readers = \"spacy.Corpus.v1\") or give the .jsonl file it was made from.")
    with pytest.raises(CorpusFormatError) as err:
        list(JsonlCorpus(path).iter_cats())
    assert str(err.value) == message
    one_line_error(invoke("convert", path, tmp_path / "o.spacy"), message)


def test_a_number_beyond_pythons_digits_names_the_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(LINES + b'{"text": "x", "label": "POS", "id": ' + b"7" * 5000 + b"}\n")
    one_line_error(invoke("convert", path, tmp_path / "o.spacy"),
                   f"{path}, line 3: a number has more than 4300 digits, more than Python reads from JSON; write it "
                   "as a string (in quotes) or drop the field.")


@pytest.mark.parametrize("label", ["", "  "])
def test_a_blank_label_is_refused(tmp_path, label):
    path = tmp_path / "c.jsonl"
    path.write_bytes(LINES + b'{"text": "x", "label": "%s"}\n' % label.encode())
    with pytest.raises(CorpusFormatError, match=f"^{path}, line 3: a label is empty or blank"):
        list(JsonlCorpus(path).iter_cats())
    path.write_bytes(b'{"text": "x", "labels": ["A", "%s"]}\n' % label.encode())
    with pytest.raises(CorpusFormatError, match=f"^{path}, line 1: a label is empty or blank"):
        list(JsonlCorpus(path).iter_cats())


@pytest.mark.parametrize("settings,message", [
    ({"label_map": {"POS": 1}}, "label_map={'POS': 1} is invalid"),
    ({"label_map": {"POS": ""}}, "label_map={'POS': ''} is invalid"),
    ({"label_map": ["POS"]}, "label_map=['POS'] is invalid"),
    ({"fold_field": 1}, "fold_field=1 is invalid"),
    ({"text_field": ""}, "text_field='' is invalid"),
    ({"label_field": 3}, "label_field=3 is invalid"),
    ({"skip_unlabeled": "maybe"}, "skip_unlabeled='maybe' is invalid: use true or false"),
    ({"unlabeled": 1}, "unlabeled=1 is invalid: use true or false"),
    ({"folds": "0"}, "folds='0' is invalid"),
    ({"folds": [True]}, "folds=[True] is invalid"),
    ({"labels": ["POS", ""]}, "labels=['POS', ''] is invalid"),
    ({"labels": "POS"}, "labels='POS' is invalid"),
    ({"limit": -1}, "limit=-1 is invalid"),
])
def test_reader_settings_are_checked_before_reading(tmp_path, settings, message):
    path = tmp_path / "c.jsonl"
    path.write_bytes(LINES)
    with pytest.raises(ValueError) as err:
        JsonlCorpus(path, **settings)
    assert str(err.value).startswith(message)


def test_an_empty_corpus_is_refused_in_training_as_one_line(tmp_path):
    """An empty dev (or train) corpus: the reader's error is a click error, which spaCy's command line prints as one
    line even where its training loop reads the corpus."""
    from spacy_treeboost.files import CLICK_EXCEPTION

    path = tmp_path / "dev.jsonl"
    path.write_bytes(b"")
    with pytest.raises(CorpusReadError) as err:
        list(JsonlCorpus(path)(spacy.blank("en")))
    assert isinstance(err.value, CLICK_EXCEPTION)
    assert err.value.format_message() == str(err.value) == (
        f"{path}: the corpus has no document to read (the file is empty or blank). Give a file with one JSON object "
        "per line, e.g. {\"text\": \"...\", \"label\": \"POS\"}.")


def test_learn_refuses_a_bact_label_with_a_stray_percent(tmp_path):
    path = tmp_path / "t.tree"
    path.write_text("+1 (ROOT(good))\n-1 (ROOT(50%(off)))\n", encoding="utf8")
    one_line_error(invoke("learn", path, tmp_path / "m.bin", "--algorithm", "frequency"),
                   f"{path}: line 2: the label '50%' has a '%' not followed by two hex digits (at character 3); write "
                   "a literal % as %25")
    assert not (tmp_path / "m.bin").exists()


def test_spacy_evaluate_on_a_damaged_model_file_is_one_line(tmp_path):
    """spaCy's command line prints a `ModelFormatError` (a `CommandLineError`) as one line, without a traceback."""
    from spacy.cli._util import app
    from textcat_pipes import trained_nlp

    nlp, pipe = trained_nlp()
    nlp.to_disk(tmp_path / "p")
    doc = nlp.make_doc("good fun")
    doc.cats = {label: 0.0 for label in pipe.labels}
    DocBin(docs=[doc]).to_disk(tmp_path / "dev.spacy")
    model = tmp_path / "p" / "treeboost_textcat" / "model"
    data = bytearray(model.read_bytes())
    data[-3] ^= 1
    model.write_bytes(bytes(data))
    result = CliRunner().invoke(app, ["evaluate", str(tmp_path / "p"), str(tmp_path / "dev.spacy")])
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)
    assert result.stderr == (f"Error: {tmp_path / 'p' / 'treeboost_textcat'}: The 'treeboost_textcat' model file is "
                             "damaged: its content does not match its SHA-256 checksum. Restore it from a copy or "
                             "retrain the model.\n")
