"""Shipping a trained pipeline with the plugin (docs/shipping.md): the page's commands, run as written, build a
folder of wheels that installs the packaged pipeline into a fresh virtual environment with no site packages and
no package index, and the installed pipeline classifies as the trained one does."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
import spacy

from clone_env import fresh_clone
from textcat_data import TRAIN, make_examples

ROOT = Path(__file__).resolve().parents[1]


def page_blocks() -> List[List[str]]:
    """The commands of each `bash` block of docs/shipping.md, in order."""
    text = (ROOT / "docs" / "shipping.md").read_text(encoding="utf8")
    blocks = re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M)
    return [[line for line in block.splitlines() if line.strip()] for block in blocks]


def run(command: str, cwd: Path, env: dict) -> str:
    result = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, command + "\n" + result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.mark.slow
def test_the_shipping_recipe_installs_the_pipeline_without_an_index(tmp_path):
    pytest.importorskip("build", reason="spacy package --build wheel needs the build package (the test extra)")
    build, target = page_blocks()
    clone = fresh_clone(tmp_path / "clone")
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat", config={"learner": {"@learners": "spacy_treeboost.SubtreeLinear.v1",
                                                          "min_support": 1}})
    nlp.initialize(lambda: make_examples(nlp))
    (clone / "training" / "chain").mkdir(parents=True)
    nlp.to_disk(clone / "training" / "chain" / "model-best")
    here = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    here.pop("PYTHONPATH", None)
    here["PYTHONSAFEPATH"] = "1"  # the clone holds no compiled kernels: its commands import the installed plugin
    for command in build:
        run(command, clone, here)
    wheels = sorted(p.name for p in (clone / "wheels").glob("*.whl"))
    assert any(name.startswith("spacy_treeboost-") for name in wheels), wheels
    assert any(name.startswith("en_treeboost_demo-") for name in wheels), wheels
    # the target machine: no pip configuration, no index, no site packages, only the folder
    target_env = {k: v for k, v in here.items() if not k.startswith(("PIP_", "PYTHON"))}
    target_env["PIP_CONFIG_FILE"] = os.devnull
    machine = tmp_path / "target"
    shutil.copytree(clone / "wheels", machine / "wheels")
    *install, classify = target
    for command in install:
        run(command, machine, target_env)
    where = run("env/bin/python -c 'import spacy_treeboost; print(spacy_treeboost.__file__)'", machine, target_env)
    assert str(machine / "env") in where, where
    assert "include-system-site-packages = false" in (machine / "env" / "pyvenv.cfg").read_text()
    assert "Not bad at all." in classify
    cats = run(classify.replace("print(", "import json; print(json.dumps(", 1).replace(".cats)", ".cats))", 1),
               machine, target_env)
    assert json.loads(cats.splitlines()[-1]) == nlp("Not bad at all.").cats
    texts = [t for t, _ in TRAIN]
    code = f"import json, spacy; nlp = spacy.load('en_treeboost_demo'); print(json.dumps([nlp(t).cats for t in {texts!r}]))"
    installed = run(f"env/bin/python -c {shlex.quote(code)}", machine, target_env)
    assert json.loads(installed.splitlines()[-1]) == [nlp(t).cats for t in texts]
