"""Rules learned today equal the rules committed in tests/data/reference_rules, bit for bit.

The reference files were written before the package was reorganized (and must only be
rewritten on purpose, when a change of behaviour is intended):

    python tests/test_reference_rules.py

Each case fits one learner on a committed corpus (a small synthetic BACT file, and the
embedded review corpus as chain trees) and compares `rules_.to_dict()` exactly.
"""
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
import srsly

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
REFERENCE = DATA / "reference_rules"


def _synthetic() -> Tuple[Any, List[str]]:
    from spacy_treeboost import read_bact

    return read_bact(DATA / "synthetic_small.tree")


def _reviews() -> Tuple[Any, List[str]]:
    import spacy

    from spacy_treeboost import TreeSpec, docs_to_forest

    nlp = spacy.blank("en")
    rows = list(srsly.read_jsonl(ROOT / "corpora" / "reviews" / "train.jsonl"))
    docs = [nlp.make_doc(row["text"]) for row in rows]
    labels = [row["label"] for row in rows]
    return docs_to_forest(docs, TreeSpec("chain", ["LOWER"], ["IS_SPACE"])), labels


def _boost(algorithm: str, **params: Any) -> Callable[[], Any]:
    from spacy_treeboost import TreeBoostClassifier

    return lambda: TreeBoostClassifier(algorithm, **params)


def _linear(**params: Any) -> Callable[[], Any]:
    from spacy_treeboost import SubtreeLinearClassifier

    return lambda: SubtreeLinearClassifier(**params)


def _corrective(**params: Any) -> Callable[[], Any]:
    from spacy_treeboost import CorrectiveBoostClassifier, TreeBoostClassifier

    return lambda: CorrectiveBoostClassifier(TreeBoostClassifier("presence", n_rounds=60), **params)


CORPORA = {"synthetic": _synthetic, "reviews": _reviews}
CASES: Dict[str, Tuple[str, Callable[[], Any]]] = {
    "bact_adaboost": ("synthetic", _boost("bact", n_rounds=60)),
    "bact_arcgv": ("synthetic", _boost("bact", n_rounds=60, boosting="arcgv")),
    "frequency_iwakura": ("synthetic", _boost("frequency", n_rounds=60)),
    "frequency_z_roots": ("synthetic", _boost("frequency", n_rounds=60, criterion="z", include_root_patterns=True)),
    "presence_size2": ("synthetic", _boost("presence", n_rounds=60, max_pattern_size=2)),
    "linear_nb": ("synthetic", _linear(min_support=2, features="nb")),
    "linear_auto": ("synthetic", _linear()),
    "corrective": ("synthetic", _corrective(C=1.0)),
    "reviews_frequency": ("reviews", _boost("frequency", n_rounds=80)),
    "reviews_linear": ("reviews", _linear(max_pattern_size=3, min_support=2, C=1.0, features="nb")),
}


def _fit(case: str) -> Dict[str, Any]:
    corpus, make = CASES[case]
    X, y = CORPORA[corpus]()
    return make().fit(X, y).rules_.to_dict()


@pytest.mark.parametrize("case", sorted(CASES))
def test_rules_match_reference(case: str) -> None:
    path = REFERENCE / f"{case}.msgpack"
    assert path.exists(), f"{path} is missing: run `python tests/test_reference_rules.py` only on purpose"
    assert _fit(case) == srsly.read_msgpack(path)


if __name__ == "__main__":
    REFERENCE.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[1:] or sorted(CASES):
        srsly.write_msgpack(REFERENCE / f"{name}.msgpack", _fit(name))
        print("wrote", name)
