"""The search space's memory report counts what it holds."""
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reference import random_trees
from spacy_treeboost.learning._mine import SearchSpace
from spacy_treeboost.learning.classifier import _label_rank
from spacy_treeboost.trees import Forest


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 2), st.booleans())
def test_memory_report_counts_patterns_and_their_documents(seed, size, min_support, expand):
    trees, _ = random_trees(seed)
    f = Forest.from_trees(trees)
    sp = SearchSpace(f.labels, f.parents, f.offsets, _label_rank(f.vocab.to_list()), max_pattern_size=size,
                     min_support=min_support)
    if expand:
        sp.expand_all()
    report = sp.memory_report()
    assert report["patterns"] == sp.n_patterns
    assert report["pattern_document_entries"] == sum(len(sp.pattern_docs(i)[0]) for i in range(sp.n_patterns))
    assert report["child_scan"] >= 8 * sp.n_patterns
    assert report["pattern_documents"] >= 8 * report["pattern_document_entries"]
    # a root lists its occurrences from its documents when it is extended, and expand_all releases every list
    assert report["occurrence_lists_held"] == 0 and report["occurrence_lists"] == 0
