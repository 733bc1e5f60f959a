"""Rules learned today equal the rules committed in tests/data/reference_rules: exactly where the
algorithm is exact, within a stated tolerance for floats.

The reference files were written before the package was reorganized (and must only be
rewritten on purpose, when a change of behaviour is intended):

    python tests/test_reference_rules.py

Each case fits one learner on a committed corpus (a small synthetic BACT file, and the
embedded review corpus as chain trees) and compares `rules_.to_dict()` with `first_difference`:

- exact: the format, algorithm and heads; every pattern (its depths and labels) in its order;
  every rule's pattern index (so the rules' order) and threshold z. These are discrete choices,
  which the learners make robust to last-bit differences: the subtree search counts criterion
  values within 1e-12 of each other (relative, absolute below 1) as a tie and breaks it by the
  fixed order of size, code, z and sign; cross-validation counts costs within 1e-12 as equal and
  takes the earlier (smaller) C; the linear rules are ordered by |weight|, ties in mined order,
  and equal columns get bit-identical weights (`test_logistic.py`).
- within `RTOL` of the largest magnitude of their list: the floats (each rule's a and b, the
  intercepts). numpy and OpenBLAS pick their kernels by CPU (SIMD exp and log, blocked dot products),
  so a float written on one machine differs from the same fit on another in its last bits.
"""
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import pytest
import srsly
from hypothesis import given, settings
from hypothesis import strategies as st

from differences import first_difference

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"
REFERENCE = DATA / "reference_rules"
# The floats' tolerance, relative to the largest magnitude of each list. A weight comes out of at most
# R = 80 boosting rounds (or trust-region Newton steps), each of which sums at most n = 400 document
# terms; rounding a sum of n terms errs by at most n * u of the sum of their magnitudes (u = 2**-53),
# and a CPU's SIMD exp and log differ from the scalar ones by a few ulps. To first order a weight is
# then off by at most R * n * u = 80 * 400 * 1.1e-16 = 3.6e-12 of the scale; 1e-10 leaves a factor of
# about 30 for the logs of ratios and the solver's conditioning. Measured with numpy's dispatch
# turned down to its baseline and OpenBLAS on Sandybridge kernels: at most 8.1e-15 (47 ulps of the
# scale). A change of behaviour (another rule, threshold or C, another formula) moves weights by
# 1e-4 and more.
RTOL = 1e-10


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


@pytest.mark.reference
@pytest.mark.parametrize("case", sorted(CASES))
def test_rules_match_reference(case: str) -> None:
    path = REFERENCE / f"{case}.msgpack"
    assert path.exists(), f"{path} is missing: run `python tests/test_reference_rules.py` only on purpose"
    difference = first_difference(_fit(case), srsly.read_msgpack(path), RTOL)
    assert difference is None, f"{case} differs from its reference at {difference}"


def test_first_difference_is_exact_but_for_float_arrays_and_names_the_first_differing_path() -> None:
    ref = {"format": "x", "patterns": [[[0, 1], ["a", "b"]]], "rules": [[[0], [2], [1.0, -0.5], [0.0, 1e-3]]],
           "intercepts": [0.25]}
    assert first_difference(ref, ref, 0.0) is None
    assert first_difference({**ref, "rules": [[[0], [2], [1.0 + 1e-11, -0.5], [1e-14, 1e-3]]]}, ref, 1e-10) is None
    cases = {
        "/format: 'y'": {**ref, "format": "y"},
        "/patterns[0][1][1]: 'c'": {**ref, "patterns": [[[0, 1], ["a", "c"]]]},
        "/patterns[0][0]: 3 entries": {**ref, "patterns": [[[0, 1, 1], ["a", "b"]]]},
        "/rules[0][0][0]: 1,": {**ref, "rules": [[[1], [2], [1.0, -0.5], [0.0, 1e-3]]]},
        "/rules[0][1][0]: 2.0 (float)": {**ref, "rules": [[[0], [2.0], [1.0, -0.5], [0.0, 1e-3]]]},
        "/rules[0][2][1]: -0.5000000002": {**ref, "rules": [[[0], [2], [1.0, -0.5000000002], [0.0, 1e-3]]]},
        "/intercepts[0]: 0.2500000001": {**ref, "intercepts": [0.2500000001]},
        "(top): keys": {k: v for k, v in ref.items() if k != "intercepts"},
    }
    for start, got in cases.items():
        found = first_difference(got, ref, 1e-10)
        assert found is not None and found.startswith(start), (start, found)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=20), st.data())
def test_float_arrays_agree_within_rtol_of_their_largest_magnitude(values: List[float], data: Any) -> None:
    import numpy

    ref = numpy.array(values)
    scale = float(numpy.abs(ref).max())
    at = data.draw(st.integers(0, len(values) - 1))
    inside, outside = ref.copy(), ref.copy()
    inside[at] += 0.5e-9 * scale
    outside[at] += 2e-9 * scale
    assert first_difference(inside.tolist(), values, 1e-9) is None
    assert first_difference(ref.reshape(1, -1), ref.reshape(1, -1), 0.0) is None
    if scale > 0 and outside[at] != ref[at]:
        found = first_difference(outside.tolist(), values, 1e-9, "/w")
        assert found is not None and found.startswith(f"/w[{at}]: "), found


if __name__ == "__main__":
    REFERENCE.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[1:] or sorted(CASES):
        srsly.write_msgpack(REFERENCE / f"{name}.msgpack", _fit(name))
        print("wrote", name)
