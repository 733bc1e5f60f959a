"""The package as a type checker sees it: mypy passes on the package (configured in pyproject.toml, with
disallow_untyped_defs and no per-module exceptions), and the top-level names resolve to their real classes, not
`Any`. mypy runs once, in this process, on the package and a script that uses the API."""
from pathlib import Path
from typing import Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]

mypy_api = pytest.importorskip("mypy.api", reason="mypy is in the test extra: pip install -e '.[test]'")

USE_API = ("import spacy_treeboost\n"
           "reveal_type(spacy_treeboost.TreeBoostClassifier(n_rounds=3))\n"
           "reveal_type(spacy_treeboost.SSMFLK(alpha=0.3))\n"
           "reveal_type(spacy_treeboost.NotFittedError)\n"
           "spacy_treeboost.TreeBoostClassifier(n_rounds='many')\n")


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory: pytest.TempPathFactory) -> Tuple[str, Path]:
    """mypy's report on the package and on a script using its API (one deliberate error in it), and the script."""
    script = tmp_path_factory.mktemp("api") / "use_api.py"
    script.write_text(USE_API, encoding="utf-8")
    stdout, stderr, _ = mypy_api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                      "--cache-dir", str(tmp_path_factory.mktemp("mypy_cache")),
                                      str(ROOT / "spacy_treeboost"), str(script)])
    return stdout + stderr, script


def test_mypy_passes_on_the_package(mypy_run):
    out, script = mypy_run
    errors = [line for line in out.splitlines() if ": error:" in line and script.name not in line]
    assert errors == [], out
    assert "Found 1 error in 1 file" in out, out


def test_top_level_names_have_their_real_types(mypy_run):
    out, _ = mypy_run
    assert "spacy_treeboost.learning.learner.TreeBoostClassifier" in out, out
    assert "spacy_treeboost.nmtf.factorization.SSMFLK" in out, out
    assert "spacy_treeboost.exceptions.NotFittedError" in out, out
    assert 'Argument "n_rounds" to "TreeBoostClassifier" has incompatible type "str"' in out, out
