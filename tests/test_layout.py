"""The layout of the test suites: a test module holds tests, and what tests share lives in a helper module."""
import ast
from pathlib import Path
from typing import List

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEST_MODULES = sorted([*(ROOT / "tests").glob("test_*.py"), *(ROOT / "bench" / "tests").glob("test_*.py")])


def imported_test_modules(source: str) -> List[str]:
    """The `test_*` modules that `source` imports, at any depth, in any import form."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names if a.name.rpartition(".")[2].startswith("test_"))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if module.rpartition(".")[2].startswith("test_"):
                found.append("." * node.level + module)
            elif not module or module.rpartition(".")[2] == "tests":
                found.extend(a.name for a in node.names if a.name.startswith("test_"))
    return found


@pytest.mark.parametrize("source,expected", [
    ("from test_nmtf import T8_F0", ["test_nmtf"]),
    ("import tests.test_cli", ["tests.test_cli"]),
    ("def f():\n    from .test_harness import run", [".test_harness"]),
    ("from . import test_harness", ["test_harness"]),
    ("from tests import test_cli", ["test_cli"]),
    ("from textcat_data import TRAIN\nfrom spacy_treeboost.testing import test_helper", []),
])
def test_the_import_finder_sees_every_form(source, expected):
    assert imported_test_modules(source) == expected


def test_no_test_module_imports_another():
    assert len(TEST_MODULES) > 10
    offenders = {str(p.relative_to(ROOT)): found for p in TEST_MODULES
                 if (found := imported_test_modules(p.read_text(encoding="utf8")))}
    assert offenders == {}, ("test modules import other test modules; move what they share into a helper module "
                             f"under tests/ whose name does not start with test_: {offenders}")
