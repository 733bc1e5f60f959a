"""The same model file under any hash seed: Python's string hashing (the iteration order of sets and dicts of
strings) is seeded per process, so a model that depended on it would differ from one run to the next."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FIT = """
import hashlib, sys
sys.path.insert(0, "tests")
from test_reference_rules import CASES, CORPORA
from spacy_treeboost.learning.classifier_files import classifier_to_bytes
for case in sorted(CASES):
    corpus, make = CASES[case]
    X, y = CORPORA[corpus]()
    print(case, hashlib.sha256(classifier_to_bytes(make().fit(X, y))).hexdigest())
"""


@pytest.mark.slow
@pytest.mark.determinism
def test_every_reference_case_fits_the_same_model_file_under_any_hash_seed():
    """The model file of every case of test_reference_rules, fitted in three processes of different hash seeds
    (with the package this test imports)."""
    import spacy_treeboost

    code = str(Path(spacy_treeboost.__file__).resolve().parents[1])
    runs = []
    for seed in ("0", "1", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": code}
        done = subprocess.run([sys.executable, "-c", FIT], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        runs.append(done.stdout)
    assert len(runs[0].splitlines()) >= 10
    assert runs[1] == runs[0] and runs[2] == runs[0]
