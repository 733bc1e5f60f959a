"""Pruning prunes: the branch-and-bound weak learner visits fewer patterns than exhaustive search
wherever the bounds of docs/algorithms.md (section 3.7, and 2.3 for BACT) rule subtrees out."""
import numpy
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from reference import (
    all_subtrees,
    dense_counts,
    exhaustive_best_rule,
    forest_docs,
    forests,
    reference_bound,
    weight_sums,
    weights_and_labels,
)
from spacy_treeboost.learning._mine import SearchSpace
from spacy_treeboost.learning.classifier import _label_rank
from spacy_treeboost.trees.forest import Forest

CRITERIA = ["iwakura", "z", "bact"]
# two positive and two negative chains; 'n' and 'p' alone separate the classes
SEPARABLE = [[["p", "a", "b", "c", "d"]], [["p"]], [["n", "a", "b", "c", "d"]], [["n"]]]
SEPARABLE_Y = [1, 1, -1, -1]


def space(forest: Forest, **kw) -> SearchSpace:
    return SearchSpace(forest.labels, forest.parents, forest.offsets, _label_rank(forest.vocab.to_list()), **kw)


@pytest.mark.parametrize("criterion", CRITERIA)
def test_a_perfect_stump_prunes_every_other_subtree(criterion):
    """Uniform weights 1/4. The n-grams of the chains up to size 3 are 15 patterns (p a b c d: 5 + 4 +
    3 = 12, and n, n a, n a b), all of which exhaustive search evaluates. 'n' and 'p' are perfect
    stumps (iwakura gain sqrt(1/2) + sqrt(1/2) = 1.4142, 1 - Z* = 1, BACT gain 1). Every other
    pattern lies in one document of each class, A+ = A- = 1/4, so its bound is below those values:
    u_joint = 2 sqrt(3/8) - 1/2 = 0.7247, T - Z_low = 1 - 2 sqrt(1/16) = 0.5, mu = 2/4 - 0 = 0.5.
    So the search evaluates 'n' and 'p' (a tie, never pruned) and nothing else."""
    f = Forest.from_sentences(SEPARABLE)
    exhaustive = space(f, max_pattern_size=3)
    exhaustive.expand_all()
    assert exhaustive.n_patterns == len(all_subtrees(forest_docs(f), 3)) == 15
    sp = space(f, max_pattern_size=3)
    got = sp.best_rule(numpy.full(4, 0.25), numpy.array(SEPARABLE_Y, dtype=numpy.int8), criterion)
    assert sp.pattern_code(got["node"]) == ((0, f.vocab.get("n")),)
    assert got["value"] == pytest.approx({"iwakura": 2 ** 0.5, "z": 1.0, "bact": 1.0}[criterion], abs=1e-12)
    assert got["nodes_visited"] == sp.nodes_visited == 2 < exhaustive.n_patterns


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(forests(st, max_nodes=8), st.integers(1, 3), st.booleans(), st.sampled_from(CRITERIA), st.data())
def test_no_subtree_below_a_root_whose_bound_is_below_the_optimum_is_visited(data, k, include_root, criterion, draw):
    """Roots are searched in descending bound order, so by the time a root whose bound (computed by
    the reference) is below the optimum comes up, the optimum has been found and the root's whole
    enumeration subtree is skipped: the count of visited patterns is at most the exhaustive count
    minus the sizes of those subtrees."""
    f = Forest.from_trees(data[0])
    m = len(f)
    w, y = draw.draw(weights_and_labels(st, m))
    patterns = all_subtrees(forest_docs(f), k, include_root=include_root)
    assume(patterns)
    best = exhaustive_best_rule(patterns, w, y, criterion, vocab=f.vocab.to_list())["value"]
    skipped = 0
    for code, per_doc in patterns.items():
        if len(code) > 1:
            continue
        s = weight_sums(dense_counts(per_doc, m), w, y, 1)
        if reference_bound(criterion, s["Ap"], s["An"], s["Tp"], s["Tn"]) < best - 1e-6:
            skipped += sum(1 for other in patterns if other[0] == code[0])
    event(f"root subtrees skipped: {'yes' if skipped else 'no'}")
    sp = space(f, max_pattern_size=k, include_root=include_root)
    got = sp.best_rule(numpy.array(w), numpy.array(y, dtype=numpy.int8), criterion)
    assert got["value"] == pytest.approx(best, abs=1e-9)
    assert 1 <= got["nodes_visited"] <= len(patterns) - skipped

