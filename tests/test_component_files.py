"""The components' files on disk: damaged, edited, missing or old files each have one exact outcome."""
import gc

import pytest
import spacy
import srsly

from textcat_pipes import trained_nlp
from spacy_treeboost.files import seal
from spacy_treeboost.learning.classifier_files import classifier_to_dict
from spacy_treeboost.models.rules import ModelFormatError

TEXTS = ["good movie", "not good at all", "bad film"]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    nlp, pipe = trained_nlp(rounds=5)
    path = tmp_path_factory.mktemp("component") / "p"
    pipe.to_disk(path)
    return pipe, path, [d.cats for d in nlp.pipe(TEXTS)]


def fresh():
    return spacy.blank("en").add_pipe("treeboost_textcat")


def cats(pipe):
    return [d.cats for d in pipe.pipe(spacy.blank("en").make_doc(t) for t in TEXTS)]


def copy_with(tmp_path, saved, name, content):
    _, path, _ = saved
    out = tmp_path / "p"
    out.mkdir()
    for field in ("cfg", "model"):
        (out / field).write_bytes((path / field).read_bytes())
    if content is None:
        (out / name).unlink()
    else:
        (out / name).write_bytes(content)
    return out


def test_to_disk_writes_two_files_and_no_temporary_file(saved):
    _, path, _ = saved
    assert sorted(p.name for p in path.iterdir()) == ["cfg", "model"]


@pytest.mark.parametrize("cut", [1, 10, -2])
def test_a_truncated_cfg_names_its_path(tmp_path, saved, cut):
    data = (saved[1] / "cfg").read_bytes()
    path = copy_with(tmp_path, saved, "cfg", data[:cut])
    other = fresh()
    before = dict(other.cfg)
    with pytest.raises(ModelFormatError, match=f"^{path / 'cfg'}: the settings file is not valid JSON \\(truncated "
                                               "or damaged: .*\\); restore it from a copy or save the pipeline again.$"):
        other.from_disk(path)
    assert other.cfg == before


def test_a_cfg_nested_too_deeply_names_its_path(tmp_path, saved):
    path = copy_with(tmp_path, saved, "cfg", b"[" * 100_000 + b"]" * 100_000)
    other = fresh()
    before = dict(other.cfg)
    with pytest.raises(ModelFormatError) as err:
        other.from_disk(path)
    assert str(err.value) == (f"{path / 'cfg'}: the settings file nests lists or objects too deeply to be a "
                              "spacy-treeboost cfg (damaged or not one); restore it from a copy or save the pipeline "
                              "again.")
    assert other.cfg == before


def test_an_undecodable_cfg_names_its_path(tmp_path, saved):
    path = copy_with(tmp_path, saved, "cfg", b'{"algorithm": "\xff"}')
    with pytest.raises(ModelFormatError) as err:
        fresh().from_disk(path)
    assert str(err.value) == (f"{path / 'cfg'}: the settings file is not UTF-8 (byte 15); restore it from a copy or "
                              "save the pipeline again.")


def test_a_cfg_with_a_bom_loads(tmp_path, saved):
    path = copy_with(tmp_path, saved, "cfg", b"\xef\xbb\xbf" + (saved[1] / "cfg").read_bytes())
    assert cats(fresh().from_disk(path)) == saved[2]


@pytest.mark.parametrize("content,expected", [
    (None, "cannot read {model}: it does not exist."),
    (b"", "{model} is not a 'treeboost_textcat' model file (it is empty)."),
    (b"[1, 2]", "{model} is not a 'treeboost_textcat' model file (it does not start as one does)."),
])
def test_a_missing_or_foreign_model_file(tmp_path, saved, content, expected):
    path = copy_with(tmp_path, saved, "model", content)
    with pytest.raises(ModelFormatError) as err:
        fresh().from_disk(path)
    assert str(err.value) == expected.format(model=path / "model")


def test_a_truncated_model_names_its_path_and_keeps_the_settings(tmp_path, saved):
    data = (saved[1] / "model").read_bytes()
    path = copy_with(tmp_path, saved, "model", data[: len(data) // 2])
    other = fresh()
    before = dict(other.cfg)
    with pytest.raises(ModelFormatError) as err:
        other.from_disk(path)
    assert str(err.value) == (f"{path}: The 'treeboost_textcat' model file is unreadable msgpack (truncated, damaged, "
                              "or not a spacy-treeboost model: ValueError); restore it from a copy or retrain the "
                              "model.")
    assert other.cfg == before and gc.isenabled()


def test_a_cfg_edited_to_other_valid_settings_is_refused(tmp_path, saved):
    cfg = srsly.json_loads((saved[1] / "cfg").read_text(encoding="utf8"))
    cfg["threshold"] = 0.4
    path = copy_with(tmp_path, saved, "cfg", srsly.json_dumps(cfg).encode("utf8"))
    other = fresh()
    before = dict(other.cfg)
    with pytest.raises(ModelFormatError) as err:
        other.from_disk(path)
    assert str(err.value) == (f"{path}: 'treeboost_textcat': the cfg does not hold the settings the model was saved "
                              "with (it was edited or damaged, or belongs to another model); restore both files from "
                              "the same save.")
    assert other.cfg == before


def test_a_reformatted_cfg_loads(tmp_path, saved):
    cfg = srsly.json_loads((saved[1] / "cfg").read_text(encoding="utf8"))
    reordered = dict(reversed(list(cfg.items())))
    path = copy_with(tmp_path, saved, "cfg", srsly.json_dumps(reordered, indent=4).encode("utf8"))
    assert cats(fresh().from_disk(path)) == saved[2]


@pytest.mark.parametrize("content", ["classifier", "nil", "version 2"])
def test_a_model_file_of_another_format_version_is_refused(tmp_path, saved, content):
    """The component's model file is format version 1, sealed; an unsealed or other-version file is refused."""
    from spacy_treeboost.pipeline.treeboost_textcat import MODEL_FORMAT

    pipe = saved[0]
    data = {"classifier": srsly.msgpack_dumps(classifier_to_dict(pipe._predictor())), "nil": srsly.msgpack_dumps(None),
            "version 2": seal({"classifier": None, "cfg_sha256": ""}, MODEL_FORMAT, 2)}[content]
    path = copy_with(tmp_path, saved, "model", data)
    with pytest.raises(ModelFormatError, match="not a 'treeboost_textcat' model file|not a spacy-treeboost "
                                               "'treeboost_textcat' model file|format version 2 was written by a "
                                               "newer spacy-treeboost \\(this one reads version 1\\)"):
        fresh().from_disk(path)


def test_a_model_from_bytes_is_checked_like_a_file(saved):
    pipe = saved[0]
    data = pipe.to_bytes()
    assert cats(fresh().from_bytes(data)) == saved[2]
    with pytest.raises(ModelFormatError):
        fresh().from_bytes(data[: len(data) - 5])
    assert gc.isenabled()


def test_nmtf_cfg_and_model_errors_name_the_path(tmp_path):
    from nmtf_pipes import make_nlp, train

    nlp = make_nlp()
    train(nlp)
    nlp.get_pipe("nmtf_sentiment").to_disk(tmp_path / "n")
    cfg_path, model_path = tmp_path / "n" / "cfg", tmp_path / "n" / "model"
    assert sorted(p.name for p in (tmp_path / "n").iterdir()) == ["cfg", "model"]
    good_cfg = cfg_path.read_bytes()
    cfg_path.write_bytes(good_cfg[:20])
    with pytest.raises(ValueError, match=f"{cfg_path}: the settings file is not valid JSON"):
        make_nlp().get_pipe("nmtf_sentiment").from_disk(tmp_path / "n")
    cfg = srsly.json_loads(good_cfg.decode("utf8"))
    cfg["learner"]["max_iter"] = cfg["learner"]["max_iter"] + 1
    cfg_path.write_text(srsly.json_dumps(cfg), encoding="utf8")
    with pytest.raises(ValueError, match=f"{model_path.parent}: .*the cfg does not hold the "
                                         "settings the model was saved with"):
        make_nlp().get_pipe("nmtf_sentiment").from_disk(tmp_path / "n")
    cfg_path.write_bytes(good_cfg)
    data = model_path.read_bytes()
    model_path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(ValueError, match=f"{model_path.parent}: .*The 'nmtf_sentiment' model "
                                         "file is damaged: its content does not match its SHA-256 checksum"):
        make_nlp().get_pipe("nmtf_sentiment").from_disk(tmp_path / "n")


@pytest.fixture(scope="module")
def both_components():
    from nmtf_pipes import make_nlp, train

    tb_nlp, _ = trained_nlp(config={"threshold": 0.12345678901234567}, rounds=5)
    nmtf_nlp = make_nlp(alpha=0.12345678901234567)
    train(nmtf_nlp)
    return [(tb_nlp, "treeboost_textcat"), (nmtf_nlp, "nmtf_sentiment")]


def test_settings_with_many_digits_survive_bytes_and_disk_exactly(tmp_path, both_components):
    """The cfg is written with every digit (a cfg rounded to 10 digits no longer matched its model's digest)."""
    for nlp, name in both_components:
        pipe = nlp.get_pipe(name)
        for round_trip in ("bytes", "disk"):
            other = nlp.create_pipe(name)
            if round_trip == "bytes":
                other.from_bytes(pipe.to_bytes())
            else:
                pipe.to_disk(tmp_path / f"{name}_{round_trip}")
                other.from_disk(tmp_path / f"{name}_{round_trip}")
            assert other.cfg == pipe.cfg
            assert 0.12345678901234567 in (other.cfg.get("threshold"), other.cfg["learner"].get("alpha"))
            assert [d.cats for d in other.pipe(nlp.make_doc(t) for t in TEXTS)] == [d.cats for d in nlp.pipe(TEXTS)]


def test_a_foreign_map_is_not_loaded_as_an_empty_state(both_components):
    for nlp, name in both_components:
        pipe = nlp.get_pipe(name)
        before = pipe.to_bytes()
        for data in (srsly.msgpack_dumps({"something": 1}), srsly.msgpack_dumps({"cfg": srsly.json_dumps(pipe.cfg)}),
                     srsly.msgpack_dumps([1, 2])):
            with pytest.raises(ModelFormatError, match=f"'{name}': not a serialized {name} component"):
                pipe.from_bytes(data)
            assert pipe.to_bytes() == before
