"""The spacy project template (project.yml) runs offline from the repository's own files."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from clone_env import fresh_clone, installed_env

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_spacy_project_run_all_reproduces_the_quick_start_and_the_paper_table(tmp_path):
    clone = fresh_clone(tmp_path / "clone")
    env = installed_env()
    command = [sys.executable, "-m", "spacy", "project", "run", "all"]
    result = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (clone / "training" / "chain" / "model-best" / "treeboost_textcat").is_dir()
    metrics = json.loads((clone / "metrics" / "chain.json").read_text(encoding="utf8"))
    assert 0.7 < metrics["cats_score"] <= 1.0
    table = (clone / "metrics" / "paper_table.md").read_text(encoding="utf8")
    rows = re.findall(r"^\| (BACT|\+FQ|subtree-linear)[^|]*\| (\d+\.\d\d) \| (\d+\.\d\d) \| (\d+) \|", table, flags=re.M)
    assert [row[0] for row in rows] == ["BACT", "+FQ", "subtree-linear"]
    assert all(50.0 < float(dev) <= 100.0 and 50.0 < float(test) <= 100.0 for _, dev, test, _ in rows)
    again = subprocess.run(command, cwd=clone, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and again.stdout.count("nothing changed") == 4, again.stdout
