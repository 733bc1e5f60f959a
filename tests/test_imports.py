"""What a user pays for installing the plugin: spaCy imports every factory when a Language is created."""
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_blank_pipeline_imports_neither_scipy_nor_the_learners():
    code = ("import sys, spacy; nlp = spacy.blank('en'); "
            "print(sorted(m for m in sys.modules if m == 'scipy' or m.startswith(('scipy.', 'sklearn'))))")
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
    with nlp.use_params({}):
        assert nlp.pipe_names == ["treeboost_textcat", "nmtf_sentiment"]
