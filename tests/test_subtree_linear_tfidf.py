"""Sublinear tf-idf features: the rule list against a brute-force tf-idf model, and against scikit-learn on n-grams."""
import math

import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reference import all_subtrees, forest_docs, forests, random_binary_classes, reference_tfidf
from spacy_treeboost.files import ModelFormatError
from one_shard import fit_linear
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.models.explain import fired_rules
from spacy_treeboost.models.rules import RuleSet
from spacy_treeboost.trees.forest import Forest

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@SETTINGS
@given(forests(st, min_docs=4), forests(st, min_docs=1, max_docs=4), st.integers(0, 10**6), st.integers(1, 3),
       st.integers(1, 2), st.sampled_from(["logistic", "squared_hinge"]))
def test_tfidf_rules_score_exactly_the_brute_force_model(data, other, seed, k, min_support, loss):
    f = Forest.from_trees(data[0])
    g = Forest.from_trees(other[0])
    assume(f.n_nodes > len(f))
    y = random_binary_classes(len(f), seed, ("pos", "neg"))
    t = numpy.array([1 if v == "pos" else -1 for v in y])
    codes, idf, X, Xg = reference_tfidf(f, g, k, min_support)
    assume(codes)
    clf = SubtreeLinearClassifier(max_rules=None, calibrate=False, keep_rare_up_to=0, max_pattern_size=k, min_support=min_support, features="tfidf", loss=loss,
                                  C=1.0).fit(f, y)
    rules = clf.rules_.rules(0)
    assert sorted(code for code, *_ in rules) == codes
    assert all(z == 1 and b == pytest.approx(idf[code], rel=1e-12) for code, z, _, b in rules)
    w, c = fit_linear(X, t, C=1.0, loss=loss)
    numpy.testing.assert_allclose(clf.decision_function(f), (X @ w + c) / 2, atol=1e-6)
    weights = {code: 2 * a for code, _, a, _ in rules}
    w_rules = numpy.array([weights[code] for code in codes])
    intercept = 2 * clf.rules_.intercepts[0]
    numpy.testing.assert_allclose(clf.rules_.margins(f)[:, 0], (X @ w_rules + intercept) / 2, atol=1e-12)
    numpy.testing.assert_allclose(clf.rules_.margins(g)[:, 0], (Xg @ w_rules + intercept) / 2, atol=1e-12)
    again = RuleSet.from_bytes(clf.rules_.to_bytes())
    numpy.testing.assert_array_equal(again.margins(g), clf.rules_.margins(g))
    for i in range(len(g)):
        explained = sum(e["contribution"] for e in fired_rules(clf.rules_, g, i))
        assert explained + clf.rules_.intercepts[0] == pytest.approx(clf.rules_.margins(g)[i, 0], abs=1e-9)


@SETTINGS
@given(forests(st, min_docs=4), st.integers(0, 10**6), st.integers(1, 5))
def test_tfidf_max_rules_renormalizes_over_the_kept_subtrees(data, seed, keep):
    f = Forest.from_trees(data[0])
    assume(f.n_nodes > len(f))
    y = random_binary_classes(len(f), seed, ("pos", "neg"))
    t = numpy.array([1 if v == "pos" else -1 for v in y])
    full = SubtreeLinearClassifier(max_rules=None, calibrate=False, keep_rare_up_to=0, max_pattern_size=2, min_support=1, features="tfidf", C=1.0).fit(f, y)
    assume(len(full.rules_) > keep)
    clf = SubtreeLinearClassifier(calibrate=False, keep_rare_up_to=0, max_pattern_size=2, min_support=1, features="tfidf", C=1.0, max_rules=keep).fit(f, y)
    assert clf.rules_.n_rules(0) == keep
    kept = [code for code, *_ in clf.rules_.rules(0)]
    vocab = f.vocab.to_list()
    table = {tuple((d, vocab[l]) for d, l in code): docs for code, docs in all_subtrees(forest_docs(f), 2).items()}
    X = numpy.zeros((len(f), keep))
    for j, code in enumerate(kept):
        idf = math.log((1 + len(f)) / (1 + len(table[code]))) + 1
        for i, count in table[code].items():
            X[i, j] = (1 + math.log(count)) * idf
    norms = numpy.linalg.norm(X, axis=1)
    X[norms > 0] /= norms[norms > 0, None]
    w, c = fit_linear(X, t, C=1.0)
    numpy.testing.assert_allclose(clf.decision_function(f), (X @ w + c) / 2, atol=1e-6)


def chain_forest(docs):
    def chain(tokens):
        node = []
        for token in reversed(tokens):
            node = [(token, node)]
        return node
    return Forest.from_trees([("ROOT", chain(tokens)) for tokens in docs])


def bigrams(tokens):
    return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]


def random_corpus(seed: int, n: int = 60):
    rng = numpy.random.default_rng(seed)
    words = ["good", "bad", "film", "plot", "not", "very", "dull", "fun", "actor", "story"]
    docs, y = [], []
    for i in range(n):
        label = i % 2
        tokens = list(rng.choice(words, size=int(rng.integers(2, 12))))
        tokens += ["good" if label else "bad"] * int(rng.integers(0, 3))
        rng.shuffle(tokens)
        docs.append([str(t) for t in tokens])
        y.append("pos" if label else "neg")
    return docs, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_tfidf_chains_of_two_give_sklearns_logistic_regression(seed):
    sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
    from sklearn.linear_model import LogisticRegression

    docs, y = random_corpus(seed)
    vec = sklearn_text.TfidfVectorizer(analyzer=bigrams, sublinear_tf=True)
    X = vec.fit_transform(docs)
    ref = LogisticRegression(C=3.0, tol=1e-10, max_iter=10000).fit(X, y)
    f = chain_forest(docs)
    clf = SubtreeLinearClassifier(max_rules=None, calibrate=False, keep_rare_up_to=0, max_pattern_size=2, min_support=1, features="tfidf", C=3.0, tol=1e-8).fit(f, y)
    assert clf.n_features_ == len(vec.vocabulary_)
    numpy.testing.assert_allclose(2 * clf.decision_function(f), ref.decision_function(X), atol=1e-4)
    test_docs, _ = random_corpus(seed + 100, 20)
    numpy.testing.assert_allclose(2 * clf.decision_function(chain_forest(test_docs)),
                                  ref.decision_function(vec.transform(test_docs)), atol=1e-4)


@pytest.mark.parametrize("seed", [0, 1])
def test_tfidf_chains_of_two_give_sklearns_linear_svc(seed):
    sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
    from sklearn.svm import LinearSVC

    docs, y = random_corpus(seed)
    vec = sklearn_text.TfidfVectorizer(analyzer=bigrams, sublinear_tf=True)
    X = vec.fit_transform(docs)
    ref = LinearSVC(C=1.0, dual=False, intercept_scaling=1000.0, tol=1e-12, max_iter=100000).fit(X, y)
    clf = SubtreeLinearClassifier(max_rules=None, calibrate=False, keep_rare_up_to=0, max_pattern_size=2, min_support=1, features="tfidf", loss="squared_hinge", C=1.0,
                                  tol=1e-9).fit(chain_forest(docs), y)
    test_docs, _ = random_corpus(seed + 100, 20)
    numpy.testing.assert_allclose(2 * clf.decision_function(chain_forest(test_docs)),
                                  ref.decision_function(vec.transform(test_docs)), atol=1e-3)


def test_tfidf_rules_list_and_explain_by_their_idf():
    docs, y = random_corpus(0, 20)
    clf = SubtreeLinearClassifier(max_rules=None, calibrate=False, keep_rare_up_to=0, max_pattern_size=2, min_support=2, features="tfidf", C=1.0).fit(chain_forest(docs), y)
    assert "× tf-idf (idf " in clf.rules_.listing()
    data = clf.rules_.to_dict()
    assert data["value"] == "tfidf"
    data["value"] = "bm25"
    with pytest.raises(ModelFormatError, match="unknown rule value 'bm25'.*upgrade"):
        RuleSet.from_dict(data)
    data["value"] = "tfidf"
    data["rules"][0][3][0] = 0.0
    with pytest.raises(ModelFormatError, match="idf"):
        RuleSet.from_dict(data)


def test_tfidf_in_the_component_predicts_like_the_estimator_and_round_trips(tmp_path):
    spacy = pytest.importorskip("spacy")
    from textcat_pipes import TEXTS, trained
    from textcat_data import TRAIN
    from spacy_treeboost.trees.doc_trees import TreeSpec, docs_to_forest

    nlp, pipe = trained("linear", C=3.0, features="tfidf", loss="squared_hinge")
    forest = docs_to_forest([nlp.make_doc(t) for t in TEXTS], TreeSpec("chain", ["LOWER"], ["IS_SPACE", "IS_PUNCT"]))
    y = [label for _, label in TRAIN]
    ref = SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=3.0, features="tfidf", loss="squared_hinge",
                                  cv=2).fit(forest, y)
    numpy.testing.assert_allclose(pipe.predict([nlp.make_doc(t) for t in TEXTS])[:, 0], ref.decision_function(forest),
                                  atol=1e-12)
    docs = list(nlp.pipe(TEXTS))
    nlp.to_disk(tmp_path)
    again = spacy.load(tmp_path)
    assert [d.cats for d in again.pipe(TEXTS)] == [d.cats for d in docs]
    assert "tf-idf (idf" in again.get_pipe("treeboost_textcat").rules_listing()
    assert pipe.explain(docs[0])
