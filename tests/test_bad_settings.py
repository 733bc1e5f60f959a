"""Settings that cannot finish are refused before any work, with the largest value that is accepted."""
import subprocess
import sys

import pytest
import spacy

from spacy_treeboost.learning.corrective import CorrectiveBoostClassifier
from spacy_treeboost.learning.learner import BYTES_PER_RULE, MAX_ROUNDS_LIMIT, TreeBoostClassifier, check_rounds
from spacy_treeboost.trees import Forest


def forest():
    return Forest.from_sentences([[["not", "good"]], [["very", "good"]], [["not", "bad"]], [["so", "bad"]]])


@pytest.mark.parametrize("n_rounds,max_cache_mb,n_heads,message", [
    (10 ** 12, 4096, 1, "n_rounds=1000000000000 is invalid: .* at most 1,000,000 rounds"),
    (MAX_ROUNDS_LIMIT + 1, 10 ** 6, 1, "at most 1,000,000 rounds"),
    (2000, 1, 1, "n_rounds=2000 is invalid: .*max_cache_mb=1 .*use at most 1024 rounds or raise max_cache_mb"),
    (400, 1, 3, "for 3 classes .*use at most 341 rounds"),
])
def test_check_rounds_refuses(n_rounds, max_cache_mb, n_heads, message):
    with pytest.raises(ValueError, match=message):
        check_rounds(n_rounds, max_cache_mb, n_heads=n_heads)


@pytest.mark.parametrize("n_rounds,max_cache_mb,n_heads", [
    (MAX_ROUNDS_LIMIT, 10 ** 6, 1), (1024, 1, 1), (341, 1, 3), (0, 1, 100)])
def test_check_rounds_accepts_the_limit(n_rounds, max_cache_mb, n_heads):
    check_rounds(n_rounds, max_cache_mb, n_heads=n_heads)
    assert n_rounds * n_heads * BYTES_PER_RULE <= max_cache_mb << 20


def test_fit_refuses_runaway_rounds_before_indexing():
    with pytest.raises(ValueError, match="n_rounds=1000000000000 is invalid"):
        TreeBoostClassifier("frequency", n_rounds=10 ** 12).fit(forest(), ["NEG", "POS", "POS", "NEG"])


def test_fit_counts_the_heads_of_multiclass_training():
    y = ["A", "B", "C", "A"]
    with pytest.raises(ValueError, match="n_rounds=400 is invalid: .*for 3 classes"):
        TreeBoostClassifier("frequency", n_rounds=400, max_cache_mb=1).fit(forest(), y)
    assert TreeBoostClassifier("frequency", n_rounds=341, max_cache_mb=1).start(forest(), y).n_rounds_ == 0


def test_corrective_refuses_its_boosters_runaway_rounds():
    with pytest.raises(ValueError, match="n_rounds=1000000000000 is invalid"):
        CorrectiveBoostClassifier(TreeBoostClassifier("presence", n_rounds=10 ** 12), C=1.0).fit(
            forest(), ["NEG", "POS", "POS", "NEG"])


def test_component_refuses_its_boosters_runaway_rounds():
    boost = {"@learners": "spacy_treeboost.SubtreeBoost.v1"}
    with pytest.raises(ValueError, match="n_rounds=1000000000000 is invalid"):
        spacy.blank("en").add_pipe("treeboost_textcat", config={"learner": {**boost, "n_rounds": 10 ** 12}})
    with pytest.raises(ValueError, match="n_rounds=5000 is invalid: .*max_cache_mb=1 .*at most 1024 rounds"):
        spacy.blank("en").add_pipe("treeboost_textcat", config={"learner": {**boost, "n_rounds": 5000,
                                                                            "max_cache_mb": 1}})
    corrective = {"@learners": "spacy_treeboost.CorrectiveBoost.v1", "estimator": {**boost, "n_rounds": 10 ** 12}}
    with pytest.raises(ValueError, match="n_rounds=1000000000000 is invalid"):
        spacy.blank("en").add_pipe("treeboost_textcat", config={"learner": corrective})


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["frequency", "corrective"])
def test_cli_learn_refuses_runaway_rounds_at_once(tmp_path, algorithm):
    train = tmp_path / "train.tree"
    train.write_text("+1 (ROOT(a(b)))\n-1 (ROOT(b))\n+1 (ROOT(a))\n-1 (ROOT(c))\n", encoding="utf8")
    result = subprocess.run([sys.executable, "-m", "spacy_treeboost", "learn", str(train), str(tmp_path / "m.bin"),
                             "--algorithm", algorithm, "--rounds", str(10 ** 12)], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: n_rounds=1000000000000 is invalid: boosting adds one rule per round and "
                                     "class, so use at most 1,000,000 rounds (a few hundred to a few thousand are "
                                     "usual).")
    assert not (tmp_path / "m.bin").exists()
