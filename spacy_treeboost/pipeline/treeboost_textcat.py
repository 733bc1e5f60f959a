"""`treeboost_textcat`: text classification by subtree rules. The training trees are built once in `initialize`,
where a learner that does not boost is fitted; a boosting learner runs more rounds over all of them at every
`update`, so that `spacy train`'s evaluation and patience choose the number of rounds."""
import logging
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterable, Iterator, List, Literal, Optional, Sequence, Tuple, Union, get_args

import numpy
from spacy import util
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from ..config_errors import check_learner, corpus_reader_hint, data_errors, reported_at, training_corpus
from ..learning.classifier import RuleClassifier, cats_from_margins
from ..learning.classifier_files import classifier_from_dict, classifier_to_dict
from ..learning.learner import TreeBoostClassifier
from ..learning.subtree_linear import SubtreeLinearClassifier
from ..models.rules import ModelFormatError
from ..params import Boolean, Interval, Options, clone, invalid_setting, rule, validate_params
from ..trees.doc_trees import DocIndexer, TreeSpec, docs_to_forest
from .component_files import TreeboostPipe
from .learners import LEARNERS, TREE_KEYS, learner_from_settings, learner_settings, split_learner, unfitted_copy
from .learners import warn_if_constant
from .scoring import CATS_SCORE_WEIGHTS
from .training_docs import check_labels, check_parser, check_positive_label, check_whole_corpus, label_statistics
from .training_docs import targets, training_docs, under_debug_data, warn_idle_steps

DEFAULT_CONFIG: Dict[str, Any] = {
    "learner": {"@learners": "spacy_treeboost.SubtreeLinear.v1"},
    "trees": {"@tree_builders": "spacy_treeboost.DocTrees.v1", "tree_mode": "chain", "node_attrs": ["LOWER"],
              "skip_flags": ["IS_SPACE", "IS_PUNCT"]},
    "rounds_per_update": 5,
    "initial_rounds": 0,
    "exclusive_classes": True,
    "positive_label": None,
    "threshold": 0.5,
    "parse_source": "pipeline",
    "scorer": {"@scorers": "spacy_treeboost.textcat_scorer.v1"},
}
ParseSource = Literal["pipeline", "reference", "predicted"]
SETTING_CONSTRAINTS = {
    "parse_source": rule(Options(*get_args(ParseSource))),
    "rounds_per_update": rule(Interval("int", 0, None)),
    "initial_rounds": rule(Interval("int", 0, None)),
    "exclusive_classes": rule(Boolean()),
    "threshold": rule(Interval("real", 0.0, 1.0), hint="use a probability between 0 and 1"),
}
MODEL_FORMAT, MODEL_VERSION = "spacy-treeboost.treeboost_textcat", 1
logger = logging.getLogger(__name__)


@Language.factory("treeboost_textcat", assigns=["doc.cats"], default_config=DEFAULT_CONFIG,
                  default_score_weights=CATS_SCORE_WEIGHTS)
def make_treeboost_textcat(nlp: Language, name: str, learner: RuleClassifier, trees: TreeSpec,
                           rounds_per_update: int, initial_rounds: int, exclusive_classes: bool,
                           positive_label: Optional[str], threshold: float, parse_source: ParseSource,
                           scorer: Optional[Callable]) -> "TreeBoostTextCategorizer":
    """Create a TreeBoostTextCategorizer.

    learner (RuleClassifier): A registered learner (`spacy_treeboost.SubtreeLinear.v1`, `SubtreeBoost.v1` or
        `CorrectiveBoost.v1`).
    trees (TreeSpec): "spacy_treeboost.DocTrees.v1": tree_mode ("chain" or "dependency"), node_attrs, skip_flags.
    rounds_per_update (int): Boosting rounds per training step.
    initial_rounds (int): Rounds run at the end of `initialize`.
    exclusive_classes (bool): One label per doc (softmax) or several (per-label sigmoid).
    positive_label (Optional[str]): The positive label of a binary task, for scoring and margins.
    threshold (float): Cutoff for multi-label scoring.
    parse_source (str): Where training docs get their annotations: "pipeline" (the preceding components),
        "reference" (the corpus) or "predicted" (tokenizer only).
    scorer (Optional[Callable]): The scoring method.
    """
    return TreeBoostTextCategorizer(
        nlp.vocab, None, name, learner=learner, trees=trees, rounds_per_update=rounds_per_update,
        initial_rounds=initial_rounds, exclusive_classes=exclusive_classes, positive_label=positive_label,
        threshold=threshold, parse_source=parse_source, scorer=scorer)


class TreeBoostTextCategorizer(TreeboostPipe):
    """Assign `doc.cats` with rules over subtrees of each doc's sentence trees."""

    factory = "treeboost_textcat"
    model_format = (MODEL_FORMAT, MODEL_VERSION, "version")

    def __init__(self, vocab: Vocab, model: None, name: str = "treeboost_textcat", *, learner: RuleClassifier,
                 trees: TreeSpec, rounds_per_update: int, initial_rounds: int, exclusive_classes: bool,
                 positive_label: Optional[str], threshold: float, parse_source: ParseSource,
                 scorer: Optional[Callable]) -> None:
        """Initialize the component; `make_treeboost_textcat` describes the settings, `model` is unused."""
        self.name = name
        self._check_registered(learner, LEARNERS)
        cfg = {
            "labels": [], "n_rounds": 0, "learner": learner_settings(learner),
            "trees": {"tree_mode": trees.tree_mode, "node_attrs": list(trees.node_attrs),
                      "skip_flags": list(trees.skip_flags)},
            "rounds_per_update": rounds_per_update, "initial_rounds": initial_rounds,
            "exclusive_classes": exclusive_classes, "positive_label": positive_label, "threshold": threshold,
            "parse_source": parse_source,
        }
        self._setup(vocab, name, scorer, cfg, learner)

    def _validate_settings(self, block: Optional[Sequence[str]] = None, learner: Optional[Any] = None) -> None:
        """Check the settings in `cfg` and make the learner's template (a clone of `learner`, else from the cfg); with
        the config `block`, errors are `ConfigValidationError`s located at the setting."""
        cfg = self.cfg
        self._template = learner_from_settings(cfg["learner"]) if learner is None else clone(learner)
        check_learner(self._template, None if block is None else [*block, "learner"])
        with reported_at(None if block is None else [*block, "trees"], TREE_KEYS):
            self._spec = TreeSpec(**cfg["trees"])
        with reported_at(block, cfg):
            validate_params(cfg, SETTING_CONSTRAINTS)
            if cfg["rounds_per_update"] == 0 and cfg["initial_rounds"] == 0 and split_learner(self._template)[0]:
                raise invalid_setting("rounds_per_update", 0, "with initial_rounds = 0 and a boosting learner no rule "
                                      "would ever be learned; use rounds_per_update >= 1 (or initial_rounds >= 1)")

    def _reset(self, learner: Optional[RuleClassifier] = None, forest: Any = None,
               fit_loss: Optional[float] = None) -> None:
        """Hold a learner (None: untrained), the training trees a booster needs and the fitted model's loss."""
        self._learner = learner
        self._train_forest = forest
        self._fit_loss = fit_loss
        self._refit: Optional[Tuple[int, RuleClassifier]] = None
        self._indexer: Optional[Tuple[int, int, DocIndexer]] = None

    def _predictor(self) -> Optional[RuleClassifier]:
        """The fitted classifier that scores docs (a corrective learner's boosted rules refitted per number of
        rounds), or None before training."""
        learner = self._learner
        if learner is None or not learner.is_fitted():
            return None
        if split_learner(self._template)[1] and isinstance(learner, TreeBoostClassifier):
            if self._refit is None or self._refit[0] != learner.n_rounds_:
                refitted = unfitted_copy(self._template, self.cfg["positive_label"]).refit(learner, self._train_forest)
                self._refit = (learner.n_rounds_, refitted)
            return self._refit[1]
        return learner

    @property
    def n_rounds(self) -> int:
        """The boosting rounds learned so far."""
        return getattr(self._learner, "n_rounds_", 0) if self._learner is not None and self._learner.is_fitted() else 0

    def add_label(self, label: str) -> int:
        """Add a label before training. RETURNS (int): 1 if added, 0 if present."""
        if not isinstance(label, str):
            raise ValueError(f"Labels must be strings, got {label!r}")
        if label in self.labels:
            return 0
        if self.n_rounds:
            raise ValueError(f"Cannot add label {label!r} to '{self.name}' after training; re-initialize instead.")
        self.cfg["labels"].append(label)
        return 1

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   labels: Optional[Iterable[str]] = None, positive_label: Optional[str] = None,
                   shards: Optional[Union[str, Sequence[str]]] = None) -> None:
        """Build the training trees from every training example and fit the learner (a booster: 0 rounds).

        labels (Optional[Iterable[str]]): The labels; by default those in the examples' cats.
        positive_label (Optional[str]): The positive label of a binary task.
        shards (Optional[Union[str, Sequence[str]]]): Shard files or glob patterns (DocBins or BACT files) that the
            subtree-linear learner's workers read and fit on instead of the training examples.
        """
        if positive_label is not None:
            self.cfg["positive_label"] = positive_label
        if shards is not None:
            self._initialize_from_shards(shards, nlp, labels)
            return
        block = ("components", self.name)
        with reported_at(block, self.cfg):
            check_whole_corpus(nlp, self.name)
            check_parser(nlp, self.name, self._spec.tree_mode, self.cfg["parse_source"])
        examples = self._examples(get_examples, nlp)
        corpus = training_corpus(nlp)
        with data_errors(corpus):
            if not examples:
                raise ValueError(f"'{self.name}' got no training examples: the training corpus is empty. Give it "
                                 "labeled documents (or check its reader's folds and limit settings)."
                                 + corpus_reader_hint(nlp))
            if labels is None:
                labels = sorted({label for eg in examples for label in eg.reference.cats})
            self.cfg["labels"] = list(labels)
            check_labels(self.name, self.labels, self.cfg["exclusive_classes"], corpus_reader_hint(nlp))
        with reported_at(block, self.cfg):
            check_positive_label(self.labels, self.cfg["positive_label"])
        if under_debug_data():
            print("\n".join(label_statistics(self.name, examples, self.labels)))
            return
        with data_errors(corpus):
            docs = training_docs(examples, nlp, self.name, self.cfg["parse_source"])
            self._spec.check_docs(docs, self.name, self.cfg["parse_source"])
            gold = targets(examples, self.labels, self.cfg["exclusive_classes"], self.name)
            forest = docs_to_forest(docs, self._spec)
            booster, refits = split_learner(self._template)
            template = self._template if booster is None else booster
            learner = self._fit(template, f"{len(forest)} training documents", forest, gold)
        fit_loss = None if booster is not None else training_log_loss(self.name, self._template, learner, forest, gold)
        self._start(learner, forest if refits else None, fit_loss, nlp)

    def _initialize_from_shards(self, shards: Union[str, Sequence[str]], nlp: Optional[Language],
                                labels: Optional[Iterable[str]]) -> None:
        from ..learning.shard_files import TreeShards, shard_paths

        if not isinstance(self._template, SubtreeLinearClassifier):
            raise ValueError(f"'{self.name}': shards (in [initialize.components.{self.name}]) are read by the "
                             f"subtree-linear learner's workers, but the learner is {type(self._template).__name__}, "
                             "which needs every training document in this process: use "
                             "spacy_treeboost.SubtreeLinear.v1 or drop shards")
        given = None if labels is None else list(labels)
        try:
            source = TreeShards(shard_paths(shards), spec=self._spec, labels=given,
                                exclusive_classes=self.cfg["exclusive_classes"],
                                lang=(nlp.lang if nlp is not None else None) or "xx")
        except ValueError as err:
            raise ValueError(f"'{self.name}' cannot train: {err}") from None
        learner = self._fit(self._template, f"{len(source)} shard files", source)
        self.cfg["labels"] = given if given is not None else [str(c) for c in learner.classes_]
        with reported_at(("components", self.name), self.cfg):
            check_positive_label(self.labels, self.cfg["positive_label"])
        self._start(learner, None, None, nlp)

    def _fit(self, template: RuleClassifier, what: str, *data: Any) -> RuleClassifier:
        """An unfitted copy of `template` fitted on `data` (a booster: started, 0 rounds), logging `what`."""
        learner = unfitted_copy(template, self.cfg["positive_label"])
        try:
            with fit_progress():
                logger.info("'%s': fitting %s on %s", self.name, type(learner).__name__, what)
                if isinstance(learner, TreeBoostClassifier):
                    learner.start(*data)
                else:
                    learner.fit(*data)
        except ValueError as err:
            raise ValueError(f"'{self.name}' cannot train: {err}") from None
        return learner

    def _start(self, learner: RuleClassifier, forest: Any, fit_loss: Optional[float], nlp: Optional[Language]) -> None:
        self._reset(learner, forest, fit_loss)
        self._boost(self.cfg["initial_rounds"])
        if not isinstance(learner, TreeBoostClassifier):
            warn_idle_steps(nlp, self.name)

    def _loss(self) -> Optional[float]:
        """Run `rounds_per_update` more boosting rounds over all training trees; a fitted learner: its loss."""
        learner = self._learner
        if learner is not None and not isinstance(learner, TreeBoostClassifier):
            return self._fit_loss
        if learner is None or not learner.can_boost():
            raise self._not_initialized("trees")
        self._boost(self.cfg["rounds_per_update"])
        if not learner.trace_:
            return None
        return float(numpy.mean([e["loss"] for e in learner.trace_[-len(learner.heads_):]]))

    def _boost(self, n_rounds: int) -> None:
        learner = self._learner
        if not isinstance(learner, TreeBoostClassifier):
            return
        max_rounds = split_learner(self._template)[0].n_rounds
        before = learner.n_rounds_
        n = max(0, min(n_rounds, max_rounds - before))
        if n:
            learner.boost(n)
            self._indexer = None
        self.cfg["n_rounds"] = learner.n_rounds_
        if learner.n_rounds_ and not before:
            predictor = self._predictor()
            assert predictor is not None, "a learner with rounds is fitted"
            scores = (predictor.predict_proba(self._train_forest) if predictor is not learner
                      else numpy.column_stack([head.scores for head in learner.heads_]))
            warn_if_constant(self.name, self._template, scores)
        if n and learner.n_rounds_ >= max_rounds:
            util.logger.warning(
                f"'{self.name}' reached its learner's n_rounds = {max_rounds}: later training steps add no "
                "rules, so the scores stay as they are until patience or max_steps ends training. Raise n_rounds "
                "in the learner block to learn more rules, or lower max_steps.")

    def _doc_indexer(self, rules: Any) -> DocIndexer:
        if self._indexer is None or self._indexer[:2] != (id(rules), len(rules)):
            self._indexer = (id(rules), len(rules), DocIndexer(self._spec, rules.label_strings, self.vocab.strings))
        return self._indexer[2]

    def predict(self, docs: Iterable[Doc]) -> numpy.ndarray:
        """Margins of the docs, shape (n_docs, n_heads)."""
        docs = list(docs)
        predictor = self._predictor()
        if predictor is None:
            raise self._not_trained()
        rules = predictor.rules_
        labels, parents, offsets = self._doc_indexer(rules).arrays(docs)
        return rules.margins_from_arrays(labels, parents, offsets)

    def set_annotations(self, docs: Iterable[Doc], margins: numpy.ndarray) -> None:
        """Write every label's probability into `doc.cats`."""
        learner = self._predictor()
        assert learner is not None, "predict raises before set_annotations when the component is not trained"
        for doc, cats in zip(docs, cats_from_margins(margins, learner, self.labels)):
            doc.cats.update(cats)

    def explain(self, doc: Doc, *, by: str = "subtree") -> List[Dict[str, Any]]:
        """The rules that fired for a doc and their contributions to each label's margin, most influential first.

        by (str): "subtree" (one entry per label and fired subtree, its rules summed) or "rule" (one per rule).
        """
        from ..models.explain import fired_rules, group_by_subtree

        if by not in ("subtree", "rule"):
            raise ValueError(f"by={by!r} is invalid: choose 'subtree' or 'rule'")
        predictor = self._predictor()
        if predictor is None:
            raise ValueError(f"'{self.name}' is not trained yet: there are no rules to explain.")
        fired = fired_rules(predictor.rules_, docs_to_forest([doc], self._spec))
        return group_by_subtree(fired, predictor.rules_.heads) if by == "subtree" else fired

    def explain_html(self, doc: Doc, label: Optional[str] = None) -> str:
        """`explain_view` as an HTML fragment with its style and script."""
        return self.explain_view(doc, label)._repr_html_()

    def explain_view(self, doc: Doc, label: Optional[str] = None, *, max_subtrees: int = 12,
                     all_sentences: bool = False) -> Any:
        """The doc's sentence trees with the subtrees that fired for `label` (default: the predicted one) and the
        margin's decomposition, shown in Jupyter; `.page()` is a standalone HTML page (docs/visualize.md).

        max_subtrees (int): How many of the most influential fired subtrees to draw.
        all_sentences (bool): Draw every sentence's tree, also where no drawn subtree fired.
        """
        from ..visualize.document import explanation_view

        return explanation_view(self, doc, label, max_subtrees=max_subtrees, all_sentences=all_sentences)

    def rules_listing(self) -> str:
        """The learned rules, one per line, per label."""
        predictor = self._predictor()
        if predictor is None:
            return f"# '{self.name}' has no rules yet"
        return predictor.rules_.listing()

    def _model_data(self) -> Dict[str, Any]:
        predictor = self._predictor()
        return {"classifier": None if predictor is None else classifier_to_dict(predictor)}

    def _read_model(self, payload: Dict[str, Any]) -> Tuple[Optional[RuleClassifier]]:
        if set(payload) != {"classifier", "cfg_sha256"} or not isinstance(payload["classifier"], (dict, type(None))):
            raise ValueError("the model file holds no classifier")
        learner = None if payload["classifier"] is None else classifier_from_dict(payload["classifier"])
        unknown = sorted({str(c) for c in learner.classes_} - set(self.labels)) if learner is not None else []
        if unknown and self.labels:
            raise ModelFormatError(f"'{self.name}': the model scores classes {unknown} that are not among the labels "
                                   f"{list(self.labels)} of its cfg; the cfg was edited or belongs to another model.")
        return (learner,)


@contextmanager
def fit_progress() -> Iterator[None]:
    """Show the learners' INFO records with spaCy's log handler while a model is fitted, unless logging is
    configured."""
    log = logging.getLogger("spacy_treeboost")
    if log.handlers or log.level != logging.NOTSET or logging.getLogger().handlers:
        yield
        return
    log.setLevel(logging.INFO)
    log.addHandler(util.logger_stream_handler)
    try:
        yield
    finally:
        log.removeHandler(util.logger_stream_handler)
        log.setLevel(logging.NOTSET)


def training_log_loss(name: str, settings: RuleClassifier, learner: RuleClassifier, forest: Any,
                      gold: Sequence[Any]) -> float:
    """The mean log-loss of a fitted learner on its training documents (multi-label: of each label's binary one),
    warning when every document gets the same probabilities."""
    proba = learner.predict_proba(forest)
    warn_if_constant(name, settings, proba)
    proba = numpy.clip(proba, 1e-15, 1.0 - 1e-15)
    classes = [str(c) for c in learner.classes_]
    if getattr(learner, "multilabel_", False):
        truth = numpy.array([[c in {str(g) for g in labels} for c in classes] for labels in gold], dtype=float)
        return float(-numpy.mean(truth * numpy.log(proba) + (1.0 - truth) * numpy.log(1.0 - proba)))
    index = {c: j for j, c in enumerate(classes)}
    rows = numpy.arange(len(gold))
    return float(-numpy.mean(numpy.log(proba[rows, [index[str(g)] for g in gold]])))
