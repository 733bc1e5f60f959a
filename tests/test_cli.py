import subprocess
import sys

import pytest
import srsly

from spacy_treeboost.learning.classifier_files import classifier_from_dict
from spacy_treeboost.trees.forest import Forest
from spacy_treeboost.trees.bact import decode_label, read_bact
from bact_text import TRAIN

def run(*args, input=None):
    return subprocess.run([sys.executable, "-m", "spacy_treeboost", *map(str, args)], capture_output=True, text=True,
                          input=input)


@pytest.fixture
def files(tmp_path):
    train = tmp_path / "train.tree"
    train.write_text(TRAIN, encoding="utf8")
    return tmp_path, train


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["bact", "frequency", "presence"])
def test_learn_classify_rules(files, algorithm):
    tmp, train = files
    model = tmp / "model.bin"
    result = run("learn", train, model, "--algorithm", algorithm, "--rounds", 5, "--max-pattern-size", 2)
    assert result.returncode == 0, result.stderr
    assert "learned" in result.stderr and not result.stdout
    clf = classifier_from_dict(srsly.msgpack_loads(model.read_bytes()))
    forest, gold = read_bact(train)
    expected = clf.decision_function(forest)
    result = run("classify", train, model)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(gold)
    for line, f in zip(lines, expected):
        label, score = line.split()
        assert float(score) == pytest.approx(f, abs=1e-6)
        assert label == ("+1" if f > 0 else "-1")
    correct = sum(l.split()[0] == g for l, g in zip(lines, gold))
    assert f"accuracy {correct / len(gold):.4f} ({correct}/{len(gold)})" in result.stderr
    listing = run("rules", model).stdout
    assert listing.startswith("# +1: ") and len(listing.splitlines()) == 1 + clf.rules_.n_rules(0)


@pytest.mark.slow
def test_classify_keeps_input_order_and_unknown_labels(files):
    tmp, train = files
    model = tmp / "model.bin"
    assert run("learn", train, model, "--rounds", 3).returncode == 0
    test = tmp / "test.tree"
    test.write_text("-1 (ROOT(zzz))\n+1 (ROOT(a(b)))\n", encoding="utf8")
    lines = run("classify", test, model).stdout.splitlines()
    clf = classifier_from_dict(srsly.msgpack_loads(model.read_bytes()))
    forest = Forest.from_trees([("ROOT", (("zzz", ()),)), ("ROOT", (("a", (("b", ()),)),))])
    assert [float(l.split()[1]) for l in lines] == pytest.approx(list(clf.decision_function(forest)), abs=1e-6)


@pytest.mark.parametrize("text,message", [
    ("+1 (ROOT(a)\n", "line 1: 1 unclosed"),
    ("+1 (ROOT(a))\n-1 ROOT(a)\n", "line 2: expected 'LABEL (tree)'"),
    ("+1 (ROOT(a))\n+1 (ROOT(b))\n", "only one class"),
    ("", "empty set of trees"),
])
@pytest.mark.slow
def test_learn_bad_files(tmp_path, text, message):
    train = tmp_path / "bad.tree"
    train.write_text(text, encoding="utf8")
    result = run("learn", train, tmp_path / "m.bin")
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("args,message", [
    (["--algorithm", "svm"], "algorithm='svm' is invalid"),
    (["--max-pattern-size", "0"], "max_pattern_size=0 is invalid"),
    (["--max-pattern-size", "1000"], "max_pattern_size=1000 is invalid"),
    (["--criterion", "gini"], "criterion='gini' is invalid"),
    (["--algorithm", "frequency", "--rounds", "-1"], "n_rounds=-1 is invalid"),
])
@pytest.mark.slow
def test_learn_bad_settings(files, args, message):
    tmp, train = files
    result = run("learn", train, tmp / "m.bin", *args)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_classify_bad_models(files):
    tmp, train = files
    model = tmp / "model.bin"
    assert run("learn", train, model, "--rounds", 3).returncode == 0
    data = model.read_bytes()
    truncated = tmp / "truncated.bin"
    truncated.write_bytes(data[: len(data) // 2])
    foreign = tmp / "foreign.bin"
    foreign.write_bytes(srsly.msgpack_dumps({"hello": "world"}))
    for path, message in [(truncated, "not a spacy-treeboost model"), (foreign, "not a spacy-treeboost classifier"),
                          (tmp / "missing.bin", "cannot read")]:
        result = run("classify", train, path)
        assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_labels_with_brackets_and_spaces_round_trip(tmp_path):
    train = tmp_path / "train.tree"
    train.write_text("good%20one (ROOT(a%28b%29(c%20d)))\nbad%25 (ROOT(e))\ngood%20one (ROOT(a%28b%29))\n", encoding="utf8")
    model = tmp_path / "m.bin"
    assert run("learn", train, model, "--algorithm", "frequency", "--rounds", 2).returncode == 0
    listing = run("rules", model).stdout
    assert "(a%28b%29" in listing
    first = run("classify", train, model).stdout.split("\n")[0].split()
    assert len(first) == 2 and decode_label(first[0]) in ("good one", "bad%")


@pytest.mark.parametrize("algorithm,extra", [
    ("linear", ["--features", "nb", "--cv", "2"]),
    ("linear", ["--features", "presence", "--C", "1.0", "--loss", "squared_hinge"]),
    ("corrective", ["--booster", "frequency", "--rounds", "5", "--C", "2.0"]),
])
@pytest.mark.slow
def test_learn_classify_rules_with_linear_learners(files, algorithm, extra):
    tmp, train = files
    model = tmp / "model.bin"
    result = run("learn", train, model, "--algorithm", algorithm, "--max-pattern-size", 2, *extra)
    assert result.returncode == 0, result.stderr
    assert "learned" in result.stderr and "C=" in result.stderr
    clf = classifier_from_dict(srsly.msgpack_loads(model.read_bytes()))
    forest, gold = read_bact(train)
    expected = clf.decision_function(forest)
    result = run("classify", train, model)
    assert result.returncode == 0, result.stderr
    for line, f in zip(result.stdout.splitlines(), expected):
        assert float(line.split()[1]) == pytest.approx(f, abs=1e-6)
    listing = run("rules", model).stdout
    assert listing.startswith("# +1: ") and "bias" in listing


@pytest.mark.parametrize("args,message", [
    (["--algorithm", "linear", "--C", "-1"], "C=-1.0 is invalid"),
    (["--algorithm", "linear", "--features", "bm25"], "features='bm25' is invalid"),
    (["--algorithm", "corrective", "--l1-ratio", "3"], "l1_ratio=3.0 is invalid"),
    (["--algorithm", "corrective", "--cv", "1"], "cv=1 is invalid"),
])
@pytest.mark.slow
def test_bad_linear_settings_are_clear_errors(files, args, message):
    tmp, train = files
    result = run("learn", train, tmp / "m.bin", *args)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp / "m.bin").exists()


@pytest.mark.slow
def test_unwritable_model_paths_fail_before_training(files):
    tmp, train = files
    for target, message in ((tmp, "is a directory"), (tmp / "missing" / "m.bin", "does not exist")):
        result = run("learn", train, target, "--rounds", 2)
        assert result.returncode == 2 and message in result.stderr and "learned" not in result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_model_is_replaced_whole(files):
    tmp, train = files
    model = tmp / "m.bin"
    assert run("learn", train, model, "--algorithm", "frequency", "--rounds", 2).returncode == 0
    first = model.read_bytes()
    assert run("learn", train, model, "--algorithm", "frequency", "--rounds", 4).returncode == 0
    assert model.read_bytes() != first and not list(tmp.glob(".m.bin.*"))


@pytest.mark.parametrize("algorithm", ["frequency", "linear"])
def test_learn_caps_the_cache_at_the_machine_default_unless_told(files, monkeypatch, algorithm):
    """Without --max-cache-mb the cap is `default_max_cache_mb()` (half of the machine's memory): made absurdly
    small here, it is the cap that learn reports; --max-cache-mb overrides it."""
    from typer.testing import CliRunner

    from spacy_treeboost import cli
    from spacy_treeboost.learning import learner

    tmp_path, train = files
    monkeypatch.setattr(learner, "default_max_cache_mb", lambda: 0)
    result = CliRunner().invoke(cli.app, ["learn", str(train), str(tmp_path / "m.model"), "--algorithm", algorithm])
    assert result.exit_code == 2 and "max_cache_mb" in result.output and "0" in result.output, result.output
    result = CliRunner().invoke(cli.app, ["learn", str(train), str(tmp_path / "m.model"), "--algorithm", algorithm,
                                          "--max-cache-mb", "64"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("algorithm,args,saved", [
    ("linear", [], None), ("linear", ["--max-pattern-size", "2"], 2), ("frequency", ["--rounds", "3"], 3),
])
def test_learn_leaves_the_linear_pattern_size_to_the_learner_unless_told(files, algorithm, args, saved):
    """Without --max-pattern-size, linear saves None (the learner chose by the documents' length, as its default
    does) and boosting its 3; given, both save the value."""
    from typer.testing import CliRunner

    from spacy_treeboost import SubtreeLinearClassifier, cli

    tmp_path, train = files
    model = tmp_path / "m.model"
    result = CliRunner().invoke(cli.app, ["learn", str(train), str(model), "--algorithm", algorithm, *args])
    assert result.exit_code == 0, result.output
    clf = classifier_from_dict(srsly.msgpack_loads(model.read_bytes()))
    assert clf.get_params()["max_pattern_size"] == saved
    if algorithm == "linear" and saved is None:
        forest, gold = read_bact(train)
        assert clf.rules_.to_dict() == SubtreeLinearClassifier().fit(forest, gold).rules_.to_dict()


LEARNER_BLOCKS = {
    "linear": '[learner]\n@learners = "spacy_treeboost.SubtreeLinear.v1"\nC = 0.25\nmax_pattern_size = 2\n',
    "boosting": '[components]\n\n[components.treeboost_textcat]\nfactory = "treeboost_textcat"\n\n'
                '[components.treeboost_textcat.learner]\n@learners = "spacy_treeboost.SubtreeBoost.v1"\n'
                'algorithm = "frequency"\nn_rounds = 4\n',
}


@pytest.mark.parametrize("kind", sorted(LEARNER_BLOCKS))
def test_learn_reads_the_learner_block_of_a_config(files, kind):
    """`learn --learner-config` builds the estimator from the same registered block as a training config, and
    writes the model that estimator fits in Python."""
    from thinc.api import Config
    from spacy.util import registry
    from typer.testing import CliRunner

    from spacy_treeboost import cli
    from spacy_treeboost.learning.classifier_files import classifier_to_bytes

    tmp_path, train = files
    cfg = tmp_path / "learner.cfg"
    cfg.write_text(LEARNER_BLOCKS[kind], encoding="utf8")
    result = CliRunner().invoke(cli.app, ["learn", str(train), str(tmp_path / "m.model"), "--learner-config", str(cfg)])
    assert result.exit_code == 0, result.output
    estimator = registry.resolve(Config(cli.learner_block(Config().from_str(LEARNER_BLOCKS[kind]))))["learner"]
    X, y = read_bact(train)
    assert (tmp_path / "m.model").read_bytes() == classifier_to_bytes(estimator.fit(X, y))


def test_learn_refuses_a_learner_config_beside_learner_options_or_a_bad_block(files):
    from typer.testing import CliRunner

    from spacy_treeboost import cli

    tmp_path, train = files
    cfg = tmp_path / "learner.cfg"
    cfg.write_text(LEARNER_BLOCKS["linear"], encoding="utf8")
    out = tmp_path / "m.model"
    result = CliRunner().invoke(cli.app, ["learn", str(train), str(out), "--learner-config", str(cfg), "--rounds", "5"])
    assert result.exit_code == 2 and "--rounds was given too" in result.output, result.output
    cfg.write_text('[learner]\n@learners = "spacy_treeboost.SubtreeLinear.v1"\nC = -1\n', encoding="utf8")
    result = CliRunner().invoke(cli.app, ["learn", str(train), str(out), "--learner-config", str(cfg)])
    assert result.exit_code == 2 and "C=-1 is invalid" in result.output, result.output
    cfg.write_text("[training]\nseed = 1\n", encoding="utf8")
    result = CliRunner().invoke(cli.app, ["learn", str(train), str(out), "--learner-config", str(cfg)])
    assert result.exit_code == 2 and "no [learner] block" in result.output, result.output
    assert not out.exists()


def test_help_prints_bracketed_config_sections_as_written():
    # rich markup would read "[learner]" as a style tag and drop it from the help
    from typer.testing import CliRunner

    from spacy_treeboost.cli import app

    out = CliRunner().invoke(app, ["learn", "--help"], terminal_width=100)
    assert out.exit_code == 0, out.output
    assert "[learner]" in out.output and "[components.NAME.learner]" in " ".join(out.output.split())
