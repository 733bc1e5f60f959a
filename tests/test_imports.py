"""What a user pays for installing the plugin (spaCy imports every factory when a Language is created), and the
layering of the package's imports."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_blank_pipeline_imports_neither_scipy_nor_the_nmtf_package():
    code = ("import sys, spacy; nlp = spacy.blank('en'); "
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith(('scipy.', 'sklearn', "
            "'spacy_treeboost.nmtf'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


@pytest.mark.slow
def test_adding_the_components_still_imports_no_scipy():
    code = ("import sys, spacy; nlp = spacy.blank('en'); nlp.add_pipe('treeboost_textcat'); "
            "nlp.add_pipe('nmtf_sentiment'); print('scipy' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_use_params_works_through_the_pipeline():
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat")
    nlp.add_pipe("nmtf_sentiment")
    with nlp.use_params({"averaged": 1.0}):
        assert nlp.pipe_names == ["treeboost_textcat", "nmtf_sentiment"]


def test_the_imports_keep_the_layers_and_have_no_cycles(capsys, monkeypatch):
    """import-linter's contracts in pyproject.toml ([tool.importlinter]): the layers of docs/design.md and no
    cycle among the modules or packages of one package (the package and the benchmarks), run in this process
    (the use case behind `lint-imports`, which leaves the logging configuration alone)."""
    pytest.importorskip("importlinter", reason="import-linter is in the test extra: pip install -e '.[test]'")
    from importlinter import configuration
    from importlinter.application.use_cases import lint_imports

    configuration.configure()
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))
    passed = lint_imports(config_filename=str(ROOT / "pyproject.toml"), cache_dir=None, no_logo=True)
    out = capsys.readouterr().out
    assert passed, out
    assert "Imports point down KEPT" in out and "No import cycles" in out, out
