"""The public API as a type checker sees it: mypy passes on the package (configured in pyproject.toml, with
disallow_untyped_defs), and the top-level names resolve to their real classes, not `Any`."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
pytestmark = pytest.mark.slow


def run_mypy(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *args], cwd=ROOT, capture_output=True,
                          text=True)


def test_mypy_passes_on_the_package():
    result = run_mypy()
    assert result.returncode == 0, result.stdout + result.stderr


def test_top_level_names_have_their_real_types(tmp_path):
    script = tmp_path / "use_api.py"
    script.write_text(
        "import spacy_treeboost\n"
        "reveal_type(spacy_treeboost.TreeBoostClassifier(n_rounds=3))\n"
        "reveal_type(spacy_treeboost.SSMFLK(alpha=0.3))\n"
        "reveal_type(spacy_treeboost.NotFittedError)\n"
        "spacy_treeboost.TreeBoostClassifier(n_rounds='many')\n", encoding="utf-8")
    result = run_mypy("--config-file", str(ROOT / "pyproject.toml"), str(script))
    out = result.stdout
    assert "spacy_treeboost.learning.learner.TreeBoostClassifier" in out, out
    assert "spacy_treeboost.nmtf.semi_supervised.SSMFLK" in out, out
    assert "spacy_treeboost.exceptions.NotFittedError" in out, out
    assert 'Argument "n_rounds" to "TreeBoostClassifier" has incompatible type "str"' in out, out
