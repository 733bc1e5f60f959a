"""Shipping a trained pipeline with the plugin: the plugin's wheel and a `spacy package` wheel that requires it
install into a fresh environment from a folder, without a package index (docs/shipping.md)."""
import json
import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest
import spacy

from textcat_data import TRAIN, make_examples

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str, cwd: Path, env=None) -> subprocess.CompletedProcess:
    result = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, " ".join(args) + "\n" + result.stdout[-3000:] + result.stderr[-3000:]
    return result


@pytest.mark.slow
def test_a_packaged_pipeline_and_the_plugin_wheel_install_without_an_index(tmp_path):
    pytest.importorskip("build", reason="spacy package --build wheel needs the build package (the test extra)")
    wheels = tmp_path / "wheels"
    run(sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-w", str(wheels), cwd=tmp_path)
    plugin = list(wheels.glob("spacy_treeboost-*.whl"))
    assert len(plugin) == 1
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat", config={"learner": {"@learners": "spacy_treeboost.SubtreeLinear.v1",
                                                          "min_support": 1}})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.to_disk(tmp_path / "model")
    expected = [nlp(text).cats for text, _ in TRAIN]
    (tmp_path / "packages").mkdir()
    run(sys.executable, "-m", "spacy", "package", str(tmp_path / "model"), str(tmp_path / "packages"), "--name",
        "treeboost_ship", "--version", "0.0.1", "--build", "wheel", cwd=tmp_path)
    pipeline = list((tmp_path / "packages").glob("*/dist/*.whl"))
    assert len(pipeline) == 1
    with zipfile.ZipFile(pipeline[0]) as wheel:
        metadata = wheel.read(next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    assert "Requires-Dist: spacy-treeboost" in metadata
    (wheels / pipeline[0].name).write_bytes(pipeline[0].read_bytes())
    # spaCy and numpy come from this interpreter's site-packages; the plugin and the pipeline only from the folder
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    run(str(python), "-m", "pip", "install", "--no-index", "--find-links", str(wheels), "--no-deps", "--ignore-installed",
        plugin[0].name.split("-")[0].replace("_", "-"), cwd=tmp_path, env=env)
    run(str(python), "-m", "pip", "install", "--no-index", "--find-links", str(wheels), "en_treeboost_ship", cwd=tmp_path,
        env=env)
    code = ("import json, spacy, spacy_treeboost; nlp = spacy.load('en_treeboost_ship'); "
            f"print(spacy_treeboost.__file__); print(json.dumps([nlp(t).cats for t in {[t for t, _ in TRAIN]!r}]))")
    result = run(str(python), "-c", code, cwd=tmp_path, env=env)
    where, cats = result.stdout.splitlines()[-2:]
    assert str(env_dir) in where, where
    assert json.loads(cats) == expected
