"""The document view and the model report, checked in their HTML (the browser tests load them in Chromium)."""
import itertools
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Dict, List, Tuple

import numpy
import pytest
import spacy
import srsly
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from reference import random_tree_arrays
from spacy_treeboost.models.explain import EmbeddingTable
from spacy_treeboost.models.rules import RuleSet
from spacy_treeboost.trees.bact import code_to_sexpr
from spacy_treeboost.visualize import explanation_view, render
from spacy_treeboost.visualize.document import head_bias
from spacy_treeboost.visualize.report import read_examples, report_page, rule_report, top_subtrees

ROOT = Path(__file__).resolve().parents[1]
REVIEWS = ROOT / "corpora" / "reviews"
TRAIN = [(r["text"], r["label"]) for r in srsly.read_jsonl(REVIEWS / "train.jsonl")]
TEXT = "I would not recommend it. The plot was dull, but the acting was superb, not bad at all."
LINEAR = {"@learners": "spacy_treeboost.SubtreeLinear.v1", "C": 1.0, "min_support": 1}
BOOST = {"@learners": "spacy_treeboost.SubtreeBoost.v1", "algorithm": "frequency", "n_rounds": 300}


class Elements(HTMLParser):
    """Every start tag's name and attributes."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.found: List[Tuple[str, Dict[str, str]]] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    def with_attr(self, name: str) -> List[Tuple[str, Dict[str, str]]]:
        return [(tag, attrs) for tag, attrs in self.found if name in attrs]


@Language.component("tb_view_test_parser", assigns=["token.dep", "token.head"])
def next_word_parser(doc: Doc) -> Doc:
    """Parse each doc as one chain headed by its last word, each word the dependent of the next (a stand-in
    for a real parser)."""
    n = len(doc)
    return Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               heads=[min(i + 1, n - 1) for i in range(n)], deps=["dep"] * (n - 1) + ["ROOT"] if n else [])


def trained(learner=None, tree_mode="chain", data=TRAIN[:160], rounds=300):
    nlp = spacy.blank("en")
    if tree_mode == "chain":
        nlp.add_pipe("sentencizer")
    else:
        nlp.add_pipe("tb_view_test_parser")
    pipe = nlp.add_pipe("treeboost_textcat", config={
        "learner": learner or BOOST, "rounds_per_update": rounds, "parse_source": "pipeline",
        "trees": {"@tree_builders": "spacy_treeboost.DocTrees.v1", "tree_mode": tree_mode,
                  "skip_flags": ["IS_SPACE", "IS_PUNCT"]}})
    examples = [Example.from_dict(nlp.make_doc(t), {"cats": {"NEG": float(l == "NEG"), "POS": float(l == "POS")}})
                for t, l in data]
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    return nlp, pipe


@pytest.fixture(scope="module")
def reviews_linear():
    """The quick-start model's learner (C fixed instead of chosen by cross-validation) on the embedded reviews."""
    return trained({**LINEAR, "min_support": 2}, data=TRAIN)


@pytest.mark.parametrize("learner,tree_mode", [
    (BOOST, "chain"), (LINEAR, "chain"), ({**LINEAR, "features": "tfidf"}, "chain"),
    ({**LINEAR, "features": "presence"}, "dependency"), (BOOST, "dependency"), (LINEAR, "chain+dependency"),
])
def test_view_marks_every_drawn_subtree_with_its_explain_values(learner, tree_mode):
    nlp, pipe = trained(learner, tree_mode)
    doc = nlp(TEXT)
    label = pipe._predictor().rules_.heads[0]
    grouped = [g for g in pipe.explain(doc) if g["label"] == label]
    assert len(grouped) > 3
    view = explanation_view(pipe, doc, label, max_subtrees=3)
    found = Elements(view.fragment).with_attr("data-pattern")
    for k, g in enumerate(grouped[:3]):
        drawn = [(tag, a) for tag, a in found if a["data-pattern"] == g["pattern"]]
        assert {tag for tag, _ in drawn} == {"g", "tr"}, g["pattern"]
        assert all(a["data-contribution"] == repr(g["contribution"]) and a["data-subtree"] == str(k) for _, a in drawn)
    assert {a["data-pattern"] for _, a in found} == {g["pattern"] for g in grouped[:3]}


@pytest.mark.parametrize("learner", [BOOST, LINEAR, {**LINEAR, "features": "tfidf"}])
def test_margin_decomposition_adds_up_to_the_score_and_the_cats(learner):
    nlp, pipe = trained(learner)
    doc = nlp(TEXT)
    rules = pipe._predictor().rules_
    label = rules.heads[0]
    margin = float(pipe.predict([doc])[0, 0])
    contributions = sum(g["contribution"] for g in pipe.explain(doc) if g["label"] == label)
    assert abs(head_bias(rules, 0) + contributions - margin) < 1e-9
    found = Elements(explanation_view(pipe, doc, label, max_subtrees=2).fragment).found
    score = [a for _, a in found if "data-score" in a]
    probability = [a for _, a in found if "data-probability" in a]
    assert float(score[0]["data-score"]) == margin
    assert float(probability[0]["data-probability"]) == doc.cats[label]


def test_dependency_view_draws_one_arc_per_parse_arc_and_the_matched_arcs():
    nlp, pipe = trained(LINEAR, "dependency")
    doc = nlp(TEXT)
    view = explanation_view(pipe, doc, pipe._predictor().rules_.heads[0], max_subtrees=50)
    arcs = set(re.findall(r'<path class="tb-arc" data-arc="([^"]+)"', view.fragment))
    assert len(arcs) == len([t for t in doc if not t.is_punct]) - 1
    assert view.fragment.count('<svg class="tb-tree"') == 2, "the sentence wraps into two rows"
    hits = {(g, arc) for g, body in re.findall(r'<g class="tb-match" data-subtree="(\d+)"(.*?)</g>', view.fragment)
            for arc in re.findall(r'<path class="tb-hit-arc" data-arc="([^"]+)"', body)}
    table_arcs = sum(len(EmbeddingTable(g["code"], *pipe._spec.node_labels(doc)[:2]).covered_arcs())
                     for g in pipe.explain(doc) if g["label"] == pipe._predictor().rules_.heads[0])
    assert len(hits) == table_arcs > 0


def test_the_other_label_of_a_binary_task_is_the_same_view_with_opposite_signs():
    nlp, pipe = trained()
    doc = nlp(TEXT)
    heads = pipe._predictor().rules_.heads
    other = [label for label in pipe.labels if label not in heads]
    assert len(heads) == 1 and len(other) == 1
    first, second = explanation_view(pipe, doc, heads[0]).fragment, explanation_view(pipe, doc, other[0]).fragment
    contributions = lambda page: [float(c) for c in re.findall(r'data-contribution="([^"]+)"', page)]
    assert contributions(first) and contributions(second) == [-c for c in contributions(first)]
    score = lambda page: float(re.search(r'data-score="([^"]+)"', page).group(1))
    assert score(second) == -score(first)
    probability = lambda page: float(re.search(r'data-probability="([^"]+)"', page).group(1))
    assert probability(second) == pytest.approx(doc.cats[other[0]]) and probability(first) == pytest.approx(
        doc.cats[heads[0]])


def test_sentences_without_a_drawn_subtree_are_text_unless_all_are_asked_for():
    nlp, pipe = trained()
    doc = nlp("zzz qqq. I would not recommend it.")
    view = explanation_view(pipe, doc)
    assert view.fragment.count('<svg class="tb-tree"') == 1 and '<p class="tb-plain">zzz qqq.</p>' in view.fragment
    assert explanation_view(pipe, doc, all_sentences=True).fragment.count('<svg class="tb-tree"') == 2


def test_view_pages_are_deterministic_self_contained_and_render_like_displacy(tmp_path):
    nlp, pipe = trained()
    doc = nlp(TEXT)
    page = explanation_view(pipe, doc).page()
    assert page == explanation_view(pipe, doc).page()
    assert render(doc, nlp, page=True, jupyter=False) == page
    fragment = render(doc, pipe, jupyter=False)
    assert fragment.startswith("<style>") and fragment.endswith("</script>") and "<html" not in fragment
    assert explanation_view(pipe, doc)._repr_html_() == fragment == pipe.explain_view(doc)._repr_html_()
    assert_offline(page)
    explanation_view(pipe, doc).to_disk(tmp_path / "v.html")
    assert (tmp_path / "v.html").read_text(encoding="utf8") == page


def assert_offline(page: str) -> None:
    """Nothing in the page refers to another file or to the network."""
    without_namespace = page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    for needle in ("http:", "https:", "src=", "href=", "url(", "@import", "//cdn"):
        assert needle not in without_namespace, needle


@pytest.mark.parametrize("call,message", [
    (lambda pipe, doc: explanation_view(pipe, doc, "MAYBE"), "no rules for label 'MAYBE'"),
    (lambda pipe, doc: explanation_view(pipe, doc, max_subtrees=0), "max_subtrees=0 is invalid"),
    (lambda pipe, doc: render(doc, spacy.blank("en"), jupyter=False), "has no treeboost_textcat"),
])
def test_bad_view_requests_say_what_to_do(call, message):
    nlp, pipe = trained()
    with pytest.raises(ValueError, match=message):
        call(pipe, nlp("good"))


def test_untrained_component_has_nothing_to_explain_or_report():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat")
    with pytest.raises(ValueError, match="not trained yet"):
        explanation_view(pipe, nlp.make_doc("good"))
    with pytest.raises(ValueError, match="not trained yet"):
        report_page(nlp)


def report_data(page: str) -> dict:
    text = re.search(r'<script type="application/json" id="tb-report-data">(.*?)</script>', page, re.S).group(1)
    return json.loads(text)


def listing_lines(pipe, head: int) -> List[str]:
    """The rule lines of one head in `rules_listing()`, without their numbers."""
    blocks = re.split(r"^# ", pipe.rules_listing(), flags=re.M)[1:]
    return [re.sub(r"^\s*\d+\s+", "", line) for line in blocks[head].splitlines()[1:] if not line.lstrip().startswith("bias")]


def test_report_lists_the_top_subtrees_of_rules_listing_in_its_order(reviews_linear):
    nlp, pipe = reviews_linear
    heads = report_data(report_page(nlp, top=40))["heads"]
    assert [h["label"] for h in heads] == pipe._predictor().rules_.heads
    for h, head in enumerate(heads):
        assert len(head["rows"]) == 40
        assert [row["rules"] for row in head["rows"]] == [[line] for line in listing_lines(pipe, h)[:40]]
        assert [row["rank"] for row in head["rows"]] == list(range(1, 41))


@pytest.fixture(scope="module")
def reviews_tfidf():
    """A tf-idf model of the embedded reviews."""
    return trained({**LINEAR, "min_support": 2, "features": "tfidf", "loss": "squared_hinge"}, data=TRAIN)


@pytest.mark.parametrize("model", ["reviews_linear", "reviews_tfidf"])
def test_report_counts_and_snippets_agree_with_explain_on_every_doc(model, request):
    nlp, pipe = request.getfixturevalue(model)
    tfidf = pipe._predictor().rules_.value == "tfidf"
    examples = read_examples(nlp, REVIEWS / "dev.jsonl")[:40]
    page = report_page(nlp, examples, top=30)
    head = report_data(page)["heads"][0]
    docs = [nlp(eg.reference.text) for eg in examples]
    fired = [{g["pattern"]: g["contribution"] for g in pipe.explain(doc) if g["label"] == head["label"]}
             for doc in docs]
    seen = 0
    for row in head["rows"]:
        in_docs = [d for d, f in enumerate(fired) if row["pattern"] in f]
        assert row["docs"] == len(in_docs)
        assert row["data_contribution"] == pytest.approx(sum(fired[d][row["pattern"]] for d in in_docs), abs=1e-9)
        if tfidf and in_docs:
            seen += 1
            assert row["weight"] == pytest.approx(row["data_contribution"] / len(in_docs), abs=1e-9)
        assert [s["doc"] for s in row["snippets"]] == in_docs[:3]
        words = re.findall(r"\(([^()]+)", row["pattern"])
        for snippet in row["snippets"]:
            marked = " ".join(text for text, is_marked in snippet["segments"] if is_marked).lower().split()
            assert set(words) <= set(marked), (row["pattern"], snippet)
            assert snippet["gold"] == ", ".join(l for l, v in examples[snippet["doc"]].reference.cats.items() if v)
    assert seen > 10 or not tfidf
    assert "Scores on the data (40 docs)" in page and "Scores of the training run" not in page


def test_a_tfidf_report_is_on_the_scale_of_explain(reviews_tfidf):
    """Every listed subtree's contribution when present is within the range explain gives it on the data (its
    largest is no bigger than the largest explain gives any subtree), not the weight times idf."""
    nlp, pipe = reviews_tfidf
    examples = read_examples(nlp, REVIEWS / "dev.jsonl")
    head = report_data(report_page(nlp, examples, top=50))["heads"][0]
    explained = [abs(g["contribution"]) for eg in examples for g in pipe.explain(nlp(eg.reference.text))]
    assert max(abs(row["weight"]) for row in head["rows"]) <= max(explained)
    page = report_page(nlp, top=50)
    assert "weight × idf" in page and "give data (--data) for the scale of explain" in page


@pytest.mark.parametrize("learner", [BOOST, LINEAR, {**LINEAR, "features": "tfidf"}])
def test_fired_rules_sum_to_the_margins_of_each_document(learner):
    nlp, pipe = trained(learner)
    rules = pipe._predictor().rules_
    docs = [nlp(t) for t, _ in TRAIN[160:200]]
    from spacy_treeboost.trees.doc_trees import docs_to_forest

    forest = docs_to_forest(docs, pipe._spec)
    margins = rules.margins(forest)
    for h in range(len(rules.heads)):
        doc, rule, _, _, _, contribution = rules.fired_rules(forest, h)
        assert len(set(zip(doc.tolist(), rule.tolist()))) == len(rule)
        summed = numpy.bincount(doc, weights=contribution, minlength=len(docs)) + head_bias(rules, h)
        numpy.testing.assert_allclose(summed, margins[:, h], rtol=1e-9, atol=1e-9)
        for i in range(len(docs)):
            explained = rules.contributions(forest, i, h)
            assert [e["rule"] for e in explained] == sorted(rule[doc == i].tolist())
            assert sum(e["contribution"] for e in explained) == pytest.approx(summed[i] - head_bias(rules, h))


def random_rules(draw, n_patterns: int, n_rules: int, value: str) -> RuleSet:
    rules = RuleSet(["A", "B"], algorithm="frequency", value=value)
    codes = [((0, f"w{i}"),) for i in range(n_patterns)]
    for _ in range(n_rules):
        head = draw(st.integers(0, 1))
        code = codes[draw(st.integers(0, n_patterns - 1))]
        weight = draw(st.sampled_from([-1.0, -0.5, 0.25, 0.5, 1.0]))
        z = draw(st.integers(1, 3)) if value == "stump" else 1
        b = draw(st.sampled_from([0.0, -0.25, 0.5])) if value == "stump" else 1.5
        rules.add(head, code, z, weight, b)
    return rules


@settings(max_examples=60)
@given(st.data(), st.integers(1, 8), st.integers(0, 25), st.sampled_from(["stump", "tfidf"]),
       st.integers(1, 10))
def test_top_subtrees_equal_sorting_every_subtree_by_hand(data, n_patterns, n_rules, value, top):
    rules = random_rules(data.draw, n_patterns, n_rules, value)
    for h in range(2):
        totals: Dict[int, List[float]] = {}
        first: Dict[int, int] = {}
        for r, (code, z, a, b) in enumerate(rules.rules(h)):
            p = rules.patterns.index(code)
            once = {"stump": (a if 1 >= z else -a) - b, "tfidf": a * b}[value]
            totals.setdefault(p, []).append(once)
            first.setdefault(p, r)
        expected = sorted(totals, key=lambda p: (-abs(sum(totals[p])), first[p]))[:top]
        got = top_subtrees(rules, h, top)[0]
        assert [p for p, _, _ in got] == expected
        for p, total, members in got:
            assert total == pytest.approx(sum(totals[p]), abs=1e-12)
            assert members == [r for r, (code, _, _, _) in enumerate(rules.rules(h)) if rules.patterns.index(code) == p]


def synthetic_rules(n: int) -> RuleSet:
    rules = RuleSet(["POS"], algorithm="linear-nb")
    for i in range(n):
        rules.add(0, ((0, f"w{i % 997}"), (1, f"v{i // 997}")), 1, (-1) ** i / (1 + i), 0.0)
    return rules


def test_report_page_size_does_not_grow_with_the_number_of_rules():
    small = rule_report(synthetic_rules(2_000), title="small", top=100)
    large = rule_report(synthetic_rules(40_000), title="large", top=100)
    assert len(report_data(large)["heads"][0]["rows"]) == 100
    assert len(large) < 1.05 * len(small)
    head = report_data(large)["heads"][0]
    assert head["rules"] == head["subtrees"] == 40_000
    weights = sorted((abs(a) for _, _, a, _ in synthetic_rules(40_000).rules(0)), reverse=True)
    assert head["shown_share"] == pytest.approx(sum(weights[:100]) / sum(weights))
    assert rule_report(synthetic_rules(2_000), title="small", top=100) == small
    assert_offline(small)


def test_report_strings_cannot_close_the_data_script():
    rules = RuleSet(["</script><b>x"], algorithm="linear-nb")
    rules.add(0, ((0, "</script><script>alert(1)</script>"),), 1, 1.0, 0.0)
    page = rule_report(rules, title="<b>t</b>", settings=[("<i>", "</script>")])
    assert page.count("</script>") == 2 and "<b>t</b>" not in page
    assert report_data(page)["heads"][0]["rows"][0]["pattern"] == code_to_sexpr(rules.patterns[0])


@pytest.mark.parametrize("top", [0, -1, 2.5, True])
def test_bad_top_is_rejected(top):
    with pytest.raises(ValueError, match=f"top={top!r} is invalid"):
        rule_report(synthetic_rules(10), title="t", top=top)


def naive_embeddings(code, labels, parents):
    """Every embedding by trying all maps (Definition 1: injective, label-, parent- and sibling-order-preserving)."""
    p_parents, path = [], []
    for q, (depth, _) in enumerate(code):
        del path[depth:]
        p_parents.append(path[-1] if path else -1)
        path.append(q)
    out = []
    for phi in itertools.product(range(len(labels)), repeat=len(code)):
        if len(set(phi)) != len(phi) or any(labels[phi[q]] != code[q][1] for q in range(len(code))):
            continue
        if any(p >= 0 and parents[phi[q]] != phi[p] for q, p in enumerate(p_parents)):
            continue
        siblings = [(q, r) for q in range(len(code)) for r in range(q + 1, len(code)) if p_parents[q] == p_parents[r] >= 0]
        if all(phi[q] < phi[r] for q, r in siblings):
            out.append(phi)
    return out


@settings(max_examples=150)
@given(st.data(), st.integers(1, 8), st.sampled_from(["random", "flat", "chain", "sentences"]), st.integers(1, 4))
def test_matched_nodes_and_arcs_equal_those_of_every_embedding(data, n, shape, size):
    parents = random_tree_arrays(data.draw, st, n, shape)
    labels = [data.draw(st.sampled_from("ab")) for _ in range(n)]
    code = [(0, data.draw(st.sampled_from("ab")))]
    for _ in range(size - 1):
        code.append((data.draw(st.integers(1, code[-1][0] + 1)), data.draw(st.sampled_from("ab"))))
    every = naive_embeddings(code, labels, parents)
    table = EmbeddingTable(code, labels, numpy.array(parents))
    assert table.covered_nodes() == {v for phi in every for v in phi}
    arcs = {(parents[phi[q]], phi[q]) for phi in every for q in range(1, len(code))}
    assert table.covered_arcs() == arcs
    assert table.images() == [{phi[q] for phi in every} for q in range(len(code))]


def test_render_displays_in_jupyter(monkeypatch):
    import sys
    import types

    shown = []
    display = types.ModuleType("IPython.display")
    display.HTML = lambda text: ("HTML", text)
    display.display = shown.append
    monkeypatch.setitem(sys.modules, "IPython", types.ModuleType("IPython"))
    monkeypatch.setitem(sys.modules, "IPython.display", display)
    nlp, pipe = trained()
    doc = nlp(TEXT)
    assert render(doc, nlp, jupyter=True) is None
    assert shown == [("HTML", explanation_view(pipe, doc)._repr_html_())]


@pytest.fixture(scope="module")
def saved_pipeline(tmp_path_factory):
    nlp, _ = trained()
    path = tmp_path_factory.mktemp("pipeline") / "model"
    nlp.to_disk(path)
    return path


def run_cli(*args):
    from typer.testing import CliRunner

    from spacy_treeboost import cli

    return CliRunner().invoke(cli.app, [str(a) for a in args])


def test_cli_writes_the_explanation_and_the_report(saved_pipeline, tmp_path):
    result = run_cli("explain", saved_pipeline, "--text", TEXT, "--output", tmp_path / "view.html", "--max-subtrees", 4)
    assert result.exit_code == 0, result.output
    nlp = spacy.load(saved_pipeline)
    expected = explanation_view(nlp.get_pipe("treeboost_textcat"), nlp(TEXT), max_subtrees=4).page()
    assert (tmp_path / "view.html").read_text(encoding="utf8") == expected
    result = run_cli("report", saved_pipeline, "--data", REVIEWS / "dev.jsonl", "--top", 7, "--output", tmp_path / "r.html")
    assert result.exit_code == 0, result.output
    head = report_data((tmp_path / "r.html").read_text(encoding="utf8"))["heads"][0]
    assert len(head["rows"]) == 7 and all(row["docs"] is not None for row in head["rows"])


@pytest.mark.parametrize("args,message", [
    (["explain", "{model}", "--text", "good", "--label", "MAYBE", "--output", "{tmp}/v.html"], "no rules for label 'MAYBE'"),
    (["explain", "{model}", "--text", "good", "--component", "textcat", "--output", "{tmp}/v.html"],
     "no treeboost_textcat component named 'textcat'"),
    (["explain", "{tmp}/none", "--text", "good", "--output", "{tmp}/v.html"], "cannot load the pipeline"),
    (["explain", "{model}", "--text", "good", "--output", "{tmp}/no/v.html"], "the directory .* does not exist"),
    (["report", "{model}", "--data", "{tmp}/dev.spacy", "--output", "{tmp}/r.html"], "cannot read .*dev.spacy"),
    (["report", "{model}", "--data", "{model}/meta.json", "--output", "{tmp}/r.html"], "use a .spacy DocBin"),
    (["report", "{model}", "--top", "0", "--output", "{tmp}/r.html"], "top=0 is invalid"),
    (["report", "{model}", "--output", "{tmp}"], "is a directory"),
])
def test_cli_bad_input_says_what_to_do(saved_pipeline, tmp_path, args, message):
    result = run_cli(*[a.format(model=saved_pipeline, tmp=tmp_path) for a in args])
    assert result.exit_code == 2
    assert re.search(message, result.output), result.output


@settings(max_examples=60, deadline=None)
@given(st.data(), st.lists(st.text(alphabet="ab", min_size=1, max_size=30), min_size=1, max_size=40),
       st.integers(40, 900))
def test_rows_hold_every_word_once_within_the_width_and_every_arc(data, texts, row_width):
    from spacy_treeboost.visualize.trees import Overlay, Word, sentence_svg

    n = len(texts)
    edges = sorted({(data.draw(st.integers(0, n - 1)), i, data.draw(st.booleans())) for i in range(n)
                    if n > 1} - {(i, i, b) for i in range(n) for b in (False, True)})
    overlay = Overlay(0, "(a)", 1.0, 1.0, nodes=set(range(n)), edges=set(edges))
    rows = re.findall(r"<svg .*?</svg>", sentence_svg([Word(t, t) for t in texts], edges, [overlay],
                                                      row_width=row_width))
    words = [re.findall(r'<text class="tb-word"[^>]*>([^<]*)</text>', row) for row in rows]
    assert sum(words, []) == texts
    for row, in_row in zip(rows, words):
        width = float(re.search(r'width="([\d.]+)"', row).group(1))
        assert len(in_row) == 1 or width <= row_width + 17
        assert row.count('<rect class="tb-hit-node"') == len(in_row)
    row_of = [r for r, in_row in enumerate(words) for _ in in_row]
    for kind in ("tb-arc", "tb-hit-arc"):
        pieces = [re.findall(rf'<path class="{kind}" data-arc="([^"]+)"', row) for row in rows]
        for head, dep, _ in edges:
            left, right = sorted((row_of[head], row_of[dep]))
            where = [r for r, found in enumerate(pieces) for arc in found if arc == f"{head}-{dep}"]
            assert where == ([left] if left == right else [left, right]), (head, dep, where)
