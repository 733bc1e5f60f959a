"""The `nmtf_sentiment` component: lexicon-guided NMTF sentiment (MFLK / SSMFLK).

`initialize` builds the term-document matrix of the training documents (plus
optional unlabeled ones), the lexicon prior and, from labeled examples, the
document prior. Each `update` runs a few multiplicative iterations over that
whole matrix and ignores its batch, so spaCy's steps count iterations and the
dev score picks the best checkpoint. New documents are folded in with F and S
fixed. Only the vocabulary, the word weights, F and S are saved.
"""
import functools
import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Literal, Optional, Union

import numpy as np
from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.tokens import Doc
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab

from . import scoring  # noqa: F401  (registers spacy_treeboost.nmtf_scorer.v1, a picklable partial)
from ..files import msgpack_loads_safe, open_seal, seal, settings_digest, write_bytes_atomic
from ..nmtf.lexicons import Lexicon, create_hu_liu_lexicon, create_jsonl_lexicon, create_lexicon
from .learners import NMTF_LEARNERS, learner_from_settings, learner_settings
from ..nmtf import (
    MFLK,
    NEGATIVE,
    POSITIVE,
    UNLABELLED,
    SSMFLK,
    build_vocabulary,
    lexicon_prior,
    porter_stem,
    term_document_matrix,
    word_weights,
)

MODEL_FORMAT = "spacy_treeboost.nmtf_sentiment"
MODEL_FORMAT_VERSION = 1
SEALED_MODEL_FORMAT_VERSION = 2

# Registered here as well as through entry points, so that the names resolve when
# the package is used from a source checkout; lexicons.py itself stays spaCy-free.
util.registry.readers.register("spacy_treeboost.HuLiuLexicon.v1", func=create_hu_liu_lexicon)
util.registry.readers.register("spacy_treeboost.JsonlLexicon.v1", func=create_jsonl_lexicon)
util.registry.readers.register("spacy_treeboost.Lexicon.v1", func=create_lexicon)

DEFAULT_NMTF_SCORE_WEIGHTS = {
    "nmtf_cats_score": 1.0,
    "nmtf_cats_score_desc": None,
    "nmtf_cats_micro_p": None,
    "nmtf_cats_micro_r": None,
    "nmtf_cats_micro_f": None,
    "nmtf_cats_macro_p": None,
    "nmtf_cats_macro_r": None,
    "nmtf_cats_macro_f": None,
    "nmtf_cats_macro_auc": None,
    "nmtf_cats_f_per_type": None,
    "nmtf_cats_auc_per_type": None,
}


DEFAULT_CONFIG: Dict[str, Any] = {
    "positive_label": "positive",
    "negative_label": "negative",
    "learner": {"@learners": "spacy_treeboost.SSMFLK.v1"},
    "iterations_per_update": 10,
    "n_words": 5000,
    "norm": "l2",
    "word_norm": True,
    "token_attr": "LOWER",
    "stem": False,
    "scorer": {"@scorers": "spacy_treeboost.nmtf_scorer.v1"},
}


@Language.factory(
    "nmtf_sentiment",
    assigns=["doc.cats"],
    default_config=DEFAULT_CONFIG,
    default_score_weights=DEFAULT_NMTF_SCORE_WEIGHTS,
)
def make_nmtf_sentiment(
    nlp: Language,
    name: str,
    positive_label: str,
    negative_label: str,
    learner: MFLK,
    iterations_per_update: int,
    n_words: int,
    norm: Literal["l1", "l2"],
    word_norm: bool,
    token_attr: Literal["LOWER", "NORM", "LEMMA"],
    stem: bool,
    scorer: Optional[Callable],
) -> "NMTFSentiment":
    """Create an NMTFSentiment component.

    nlp (Language): The pipeline.
    name (str): The component instance name.
    positive_label (str): The label written for positive polarity.
    negative_label (str): The label written for negative polarity.
    learner (MFLK): The factorization, a registered sub-config whose settings are the
        estimator's keyword arguments: "spacy_treeboost.SSMFLK.v1" (the lexicon and the
        labelled training documents) or "spacy_treeboost.MFLK.v1" (the lexicon only;
        labels are ignored). Its max_iter caps the iterations of training.
    iterations_per_update (int): Iterations run by each `update` call.
    n_words (int): Vocabulary size (most document-frequent words, stop words removed).
    norm (str): Per-document normalization of term frequencies, "l2" or "l1".
    word_norm (bool): Scale every word's row of the training matrix to unit norm
        (the same factors are applied to new documents).
    token_attr (str): Token attribute used as the word: LOWER, NORM or LEMMA.
    stem (bool): Porter-stem the words and the lexicon alike.
    scorer (Optional[Callable]): The scoring method.
    RETURNS (NMTFSentiment): The component.
    """
    return NMTFSentiment(
        nlp.vocab, None, name, positive_label=positive_label, negative_label=negative_label, learner=learner,
        iterations_per_update=iterations_per_update, n_words=n_words, norm=norm, word_norm=word_norm,
        token_attr=token_attr, stem=stem, scorer=scorer)


class NMTFSentiment(TrainablePipe):
    """Document polarity from a lexicon-guided non-negative matrix tri-factorization.

    DOCS: docs/algorithms.md, section 4 (MFLK and SSMFLK, Li, Zhang & Sindhwani 2009).
    """

    def __init__(
        self,
        vocab: Vocab,
        model: None = None,
        name: str = "nmtf_sentiment",
        *,
        positive_label: str = "positive",
        negative_label: str = "negative",
        learner: Optional[MFLK] = None,
        iterations_per_update: int = 10,
        n_words: int = 5000,
        norm: str = "l2",
        word_norm: bool = True,
        token_attr: str = "LOWER",
        stem: bool = False,
        scorer: Optional[Callable] = None,
    ) -> None:
        """Initialize the component. See `make_nmtf_sentiment` for the settings.

        vocab (Vocab): The shared vocabulary.
        model (None): Unused; the factorization is not a thinc model.
        name (str): The component instance name, used to add entries to the losses during training.
        """
        if not positive_label or not negative_label or positive_label == negative_label:
            raise ValueError(
                f"positive_label and negative_label must be two different non-empty labels, "
                f"got {positive_label!r} and {negative_label!r}."
            )
        learner = SSMFLK() if learner is None else learner
        if type(learner) not in NMTF_LEARNERS.values():
            raise ValueError(f"learner={learner!r} is invalid: use one of the registered learners {sorted(NMTF_LEARNERS)}")
        self.vocab = vocab
        self.model = None
        self.name = name
        self.scorer = scorer
        self.cfg: Dict[str, Any] = {
            "labels": [positive_label, negative_label],
            "learner": learner_settings(learner),
            "iterations_per_update": iterations_per_update,
            "n_words": n_words,
            "norm": norm,
            "word_norm": word_norm,
            "token_attr": token_attr,
            "stem": stem,
        }
        self._validate_settings()
        self._estimator: Optional[MFLK] = None
        self._vocabulary: List[str] = []
        self._word_weights: Optional[np.ndarray] = None

    def _validate_settings(self) -> None:
        cfg = self.cfg
        if not isinstance(cfg["iterations_per_update"], int) or cfg["iterations_per_update"] < 1:
            raise ValueError(f"iterations_per_update must be at least 1, got {cfg['iterations_per_update']}.")
        if not isinstance(cfg["n_words"], int) or cfg["n_words"] < 1:
            raise ValueError(f"n_words must be at least 1, got {cfg['n_words']}.")
        if cfg["norm"] not in ("l1", "l2"):
            raise ValueError(f"norm must be 'l1' or 'l2', got {cfg['norm']!r}.")
        if cfg["token_attr"] not in ("LOWER", "NORM", "LEMMA"):
            raise ValueError(f"token_attr must be 'LOWER', 'NORM' or 'LEMMA', got {cfg['token_attr']!r}.")
        self._new_estimator()._check_params()

    @property
    def _uses_labels(self) -> bool:
        return self.cfg["learner"]["@learners"] == "spacy_treeboost.SSMFLK.v1"

    @property
    def labels(self) -> tuple:
        """RETURNS (Tuple[str, str]): The positive and the negative label."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        """RETURNS (List[str]): The labels, as `spacy init labels` stores them."""
        return list(self.cfg["labels"])

    @property
    def vocabulary(self) -> List[str]:
        """RETURNS (List[str]): The words of the term-document matrix, in row order."""
        return list(self._vocabulary)

    @property
    def is_fitted(self) -> bool:
        """RETURNS (bool): Whether F and S are available for prediction."""
        return self._estimator is not None

    def add_label(self, label: str) -> int:
        """Labels are fixed by `positive_label` and `negative_label`; this only checks one.

        label (str): The label.
        RETURNS (int): 0, since the label is already known.
        """
        if label not in self.labels:
            raise ValueError(
                f"{self.name} has exactly two labels, {self.labels}; set positive_label and "
                f"negative_label in the component config instead of adding {label!r}."
            )
        return 0

    def initialize(
        self,
        get_examples: Callable[[], Iterable[Example]],
        *,
        nlp: Optional[Language] = None,
        lexicon: Optional[Lexicon] = None,
        unlabeled: Optional[Callable[[Language], Iterable[Any]]] = None,
    ) -> None:
        """Build the training matrix and the priors, and start the factorization.

        get_examples (Callable[[], Iterable[Example]]): The training examples; those
            with empty `reference.cats` count as unlabeled documents.
        nlp (Optional[Language]): The pipeline.
        lexicon (Optional[Lexicon]): The sentiment lexicon, e.g. from the reader
            `spacy_treeboost.HuLiuLexicon.v1`. Required unless alpha is 0.
        unlabeled (Optional[Callable[[Language], Iterable[Any]]]): A corpus reader of
            extra unlabeled documents (Examples, Docs or texts).
        """
        examples = list(get_examples())
        if examples:
            validate_get_examples(lambda: examples, f"{self.name}.initialize")
        if lexicon is None and self.cfg["learner"]["alpha"] > 0:
            raise ValueError(
                f"{self.name} needs a sentiment lexicon: add "
                f'`lexicon = {{"@readers": "spacy_treeboost.HuLiuLexicon.v1", "path": ...}}` under '
                f"[initialize.components.{self.name}], or set alpha = 0."
            )
        docs: List[Doc] = []
        y: List[int] = []
        for i, eg in enumerate(examples):
            docs.append(eg.predicted)
            y.append(self._gold_class(eg.reference.cats, i) if self._uses_labels else UNLABELLED)
        if unlabeled is not None:
            for item in unlabeled(nlp) if callable(unlabeled) else unlabeled:
                docs.append(self._as_doc(item, nlp))
                y.append(UNLABELLED)
        if not docs:
            raise ValueError(f"{self.name} got no training documents: the training corpus is empty (and no unlabeled reader is set).")
        tokens = [self._tokens(doc) for doc in docs]
        vocabulary = build_vocabulary(tokens, max_words=self.cfg["n_words"])
        X = term_document_matrix(tokens, vocabulary, norm=self.cfg["norm"])
        weights = word_weights(X) if self.cfg.get("word_norm", False) else None
        if weights is not None:
            X = term_document_matrix(tokens, vocabulary, norm=self.cfg["norm"], word_weights=weights)
        if lexicon is not None:
            if self.cfg.get("stem", False):
                lexicon = lexicon.map(porter_stem)
            F0 = lexicon_prior(vocabulary, lexicon.positive, lexicon.negative)
        else:
            F0 = np.zeros((len(vocabulary), 2))
        estimator = self._new_estimator()
        estimator.initialize(X, F0, np.asarray(y, dtype=np.int64) if self._uses_labels else None)
        self._estimator = estimator
        self._vocabulary = vocabulary
        self._word_weights = weights

    def update(
        self,
        examples: Iterable[Example],
        *,
        drop: float = 0.0,
        sgd: Optional[Callable] = None,
        losses: Optional[Dict[str, float]] = None,
    ) -> Dict[str, float]:
        """Run `iterations_per_update` iterations over the whole training matrix.

        examples (Iterable[Example]): The batch; ignored, since every iteration uses
            all training documents.
        drop (float): Ignored.
        sgd (Optional[Callable]): Ignored.
        losses (Optional[Dict[str, float]]): Losses by component; this component's
            entry becomes the current objective J.
        RETURNS (Dict[str, float]): The losses.
        """
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        estimator = self._estimator
        if estimator is None or not hasattr(estimator, "_X"):
            raise ValueError(
                f"{self.name} has no training matrix: it was not initialized in this run (a sourced or "
                f"loaded component is not retrained). Add it to [training] frozen_components, or train it "
                f"from scratch."
            )
        remaining = estimator.max_iter - estimator.n_iter_
        if remaining > 0:
            estimator.iterate(min(self.cfg["iterations_per_update"], remaining))
        losses[self.name] = float(estimator.objective_[-1])
        return losses

    def predict(self, docs: Iterable[Doc]) -> np.ndarray:
        """Fold the documents in and return their class probabilities.

        docs (Iterable[Doc]): The documents.
        RETURNS (numpy.ndarray): Shape (n_docs, 2): positive, negative.
        """
        docs = list(docs)
        if self._estimator is None:
            raise ValueError(f"'{self.name}' is not trained: run `nlp.initialize` and train it (spacy train does both), "
                             "or load a trained pipeline.")
        if not docs:
            return np.zeros((0, 2))
        X = term_document_matrix(
            [self._tokens(doc) for doc in docs], self._vocabulary, norm=self.cfg["norm"], word_weights=self._word_weights
        )
        return self._estimator.predict_proba(X)

    def set_annotations(self, docs: Iterable[Doc], scores: np.ndarray) -> None:
        """Write both labels to `doc.cats`.

        docs (Iterable[Doc]): The documents.
        scores (numpy.ndarray): The output of `predict`.
        """
        positive, negative = self.labels
        for doc, (p_pos, p_neg) in zip(docs, scores):
            doc.cats[positive] = float(p_pos)
            doc.cats[negative] = float(p_neg)

    def use_params(self, params: dict) -> Iterator[None]:
        """Parameter averaging does not apply: the factors are used as they are.

        params (dict): Ignored.
        """
        yield

    def finish_update(self, sgd: Optional[Callable] = None) -> None:
        """Nothing to do: `update` changes the factors directly.

        sgd (Optional[Callable]): Ignored.
        """

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """Serialize the settings and the learned vocabulary, F and S.

        exclude (Iterable[str]): String names of serialization fields to exclude.
        RETURNS (bytes): The serialized component.
        """
        serialize = {
            "cfg": lambda: json.dumps(self.cfg),
            "model": self._model_bytes,
        }
        return util.to_bytes(serialize, exclude)

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "NMTFSentiment":
        """Load the component from bytes written by `to_bytes`.

        bytes_data (bytes): The data.
        exclude (Iterable[str]): String names of serialization fields to exclude.
        RETURNS (NMTFSentiment): The loaded component.
        """
        try:
            fields = msgpack_loads_safe(bytes_data)
        except Exception as err:
            raise ValueError(f"Cannot load {self.name}: the bytes are not a serialized nmtf_sentiment component ({err}).") from None
        if not isinstance(fields, dict) or not ({"cfg", "model"} - set(exclude)) <= set(fields):
            raise ValueError(f"Cannot load {self.name}: the bytes are not a serialized nmtf_sentiment component.")
        if "cfg" not in exclude:
            self._load_cfg(lambda: json.loads(fields["cfg"]), "bytes")
        if "model" not in exclude:
            self._load_model(lambda: fields["model"], "bytes", "cfg" not in exclude)
        return self

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        """Write `cfg` (JSON, floats kept exactly) and `model` (msgpack sealed with a SHA-256 checksum) to a
        directory, each through a temporary file renamed over the old one.

        path (Union[str, Path]): The directory; created if needed.
        exclude (Iterable[str]): String names of serialization fields to exclude.
        """
        serialize = {
            "cfg": lambda p: write_bytes_atomic(p, json.dumps(self.cfg, indent=2).encode("utf-8")),
            "model": lambda p: write_bytes_atomic(p, self._model_bytes()),
        }
        util.to_disk(path, serialize, exclude)

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "NMTFSentiment":
        """Load the component from a directory written by `to_disk`.

        path (Union[str, Path]): The directory.
        exclude (Iterable[str]): String names of serialization fields to exclude.
        RETURNS (NMTFSentiment): The loaded component.
        """
        path = util.ensure_path(path)
        for field in ("cfg", "model"):
            if field not in exclude and not (path / field).is_file():
                raise ValueError(f"Cannot load {self.name} from {path}: the file '{field}' is missing.")
        if "cfg" not in exclude:
            self._load_cfg(lambda: json.loads((path / "cfg").read_bytes().decode("utf-8-sig")), str(path / "cfg"))
        if "model" not in exclude:
            self._load_model(lambda: (path / "model").read_bytes(), str(path / "model"), "cfg" not in exclude)
        return self

    def _model_bytes(self) -> bytes:
        data = self._model_data()
        data["cfg_sha256"] = settings_digest(self.cfg)
        return seal(data, MODEL_FORMAT, SEALED_MODEL_FORMAT_VERSION, version_key="format_version")

    def _new_estimator(self) -> MFLK:
        return learner_from_settings(self.cfg["learner"], NMTF_LEARNERS)

    def _gold_class(self, cats: Dict[str, float], index: int) -> int:
        if not cats:
            return UNLABELLED
        positive, negative = self.labels
        unknown = sorted(set(cats) - {positive, negative})
        if unknown:
            raise ValueError(
                f"Training example {index} has the label {unknown[0]!r}, but {self.name} knows only "
                f"{positive!r} and {negative!r}. Set positive_label and negative_label in "
                f"[components.{self.name}] to the corpus's labels, or map the corpus labels."
            )
        p_pos, p_neg = cats.get(positive, 0.0), cats.get(negative, 0.0)
        if p_pos == p_neg:
            raise ValueError(
                f"Training example {index} has cats {dict(cats)}: exactly one of {positive!r} and "
                f"{negative!r} must be the larger (give an unlabeled document empty cats)."
            )
        return POSITIVE if p_pos > p_neg else NEGATIVE

    def _tokens(self, doc: Doc) -> List[str]:
        words = self._words(doc)
        if self.cfg.get("stem", False):
            return [_stem(w) for w in words]
        return words

    def _words(self, doc: Doc) -> List[str]:
        attr = self.cfg["token_attr"]
        if attr == "LEMMA":
            if len(doc) and not doc.has_annotation("LEMMA"):
                raise ValueError(
                    f"{self.name} uses token_attr = LEMMA, but a document has no lemmas. Put a "
                    f"lemmatizer before it (and in [training] annotating_components), or use LOWER."
                )
            return [t.lemma_.lower() for t in doc if not t.is_space]
        if attr == "NORM":
            return [t.norm_ for t in doc if not t.is_space]
        return [t.lower_ for t in doc if not t.is_space]

    def _as_doc(self, item: Any, nlp: Optional[Language]) -> Doc:
        if isinstance(item, Example):
            return item.predicted
        if isinstance(item, Doc):
            return item
        if isinstance(item, str) and nlp is not None:
            return nlp.make_doc(item)
        raise TypeError(f"Unlabeled documents must be Examples, Docs or texts, got {type(item).__name__}.")

    def _model_data(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {"format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION, "fitted": False}
        if self._estimator is not None:
            data.update(
                fitted=True,
                vocabulary=list(self._vocabulary),
                F=self._estimator.F_.tolist(),
                S=self._estimator.S_.tolist(),
                n_iter=int(self._estimator.n_iter_),
            )
            if self._word_weights is not None:
                data["word_weights"] = self._word_weights.tolist()
        return data

    def _load_cfg(self, read: Callable[[], Any], source: str) -> None:
        try:
            cfg = read()
        except Exception as err:
            raise ValueError(f"Cannot load {self.name} settings from {source}: not valid JSON ({err}).") from None
        if not isinstance(cfg, dict) or not isinstance(cfg.get("labels"), list) or len(cfg["labels"]) != 2:
            raise ValueError(f"Cannot load {self.name} settings from {source}: not an nmtf_sentiment cfg.")
        unknown = sorted(set(cfg) - set(self.cfg))
        if unknown:
            raise ValueError(f"Cannot load {self.name} settings from {source}: unknown settings {unknown} (the "
                             "factorization settings of spacy-treeboost 0.1 moved into the learner block; retrain).")
        previous = dict(self.cfg)
        self.cfg.update(cfg)
        try:
            self._validate_settings()
        except (ValueError, TypeError, KeyError) as err:
            self.cfg = previous
            raise ValueError(f"Cannot load {self.name} settings from {source}: {err}") from None

    def _load_model(self, read: Callable[[], Any], source: str, cfg_loaded: bool = True) -> None:
        """Load the model from `read()`: a model file's bytes, or its unpacked content."""
        foreign = f"Cannot load {self.name} from {source}: not an nmtf_sentiment model file"
        try:
            raw = read()
        except OSError as err:
            raise ValueError(f"Cannot load {self.name}: cannot read {source}: {err.strerror}.") from None
        try:
            outer = msgpack_loads_safe(raw) if isinstance(raw, bytes) else raw
        except Exception as err:
            raise ValueError(f"{foreign} (unreadable msgpack: {err}).") from None
        if not isinstance(outer, dict) or outer.get("format") != MODEL_FORMAT:
            raise ValueError(f"{foreign} (expected format {MODEL_FORMAT!r}).")
        version = outer.get("format_version")
        if not isinstance(version, int) or version > SEALED_MODEL_FORMAT_VERSION:
            raise ValueError(
                f"{foreign} version {SEALED_MODEL_FORMAT_VERSION} (found {version!r}); it was written by a newer "
                f"spacy-treeboost: upgrade the package."
            )
        try:
            data, sealed = open_seal(outer, MODEL_FORMAT, SEALED_MODEL_FORMAT_VERSION, MODEL_FORMAT_VERSION,
                                     error=ValueError, what="nmtf_sentiment model file", version_key="format_version")
        except ValueError as err:
            raise ValueError(f"Cannot load {self.name} from {source}: {err}") from None
        if sealed:
            if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT or not isinstance(data.get("cfg_sha256"), str):
                raise ValueError(f"{foreign} (its sealed content is not an nmtf_sentiment model).")
            if cfg_loaded and data["cfg_sha256"] != settings_digest(self.cfg):
                raise ValueError(
                    f"Cannot load {self.name} from {source}: the cfg does not hold the settings the model was saved "
                    "with (it was edited or damaged, or belongs to another model); restore both files from the same "
                    "save.")
        if not data.get("fitted"):
            self._estimator, self._vocabulary, self._word_weights = None, [], None
            return
        try:
            vocabulary = [str(w) for w in data["vocabulary"]]
            F = np.asarray(data["F"], dtype=np.float64)
            S = np.asarray(data["S"], dtype=np.float64)
            weights = None if data.get("word_weights") is None else np.asarray(data["word_weights"], dtype=np.float64)
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{foreign} (corrupt field: {err}).") from None
        if F.shape != (len(vocabulary), 2) or S.shape != (2, 2) or not (np.isfinite(F).all() and np.isfinite(S).all()):
            raise ValueError(f"{foreign} (F must be {len(vocabulary)} x 2 and S 2 x 2, finite).")
        if weights is not None and (weights.shape != (len(vocabulary),) or not np.isfinite(weights).all()):
            raise ValueError(f"{foreign} (word_weights must hold {len(vocabulary)} finite numbers).")
        estimator = self._new_estimator()
        estimator.F_, estimator.S_ = F, S
        estimator.n_iter_ = int(data.get("n_iter", 0))
        self._estimator, self._vocabulary, self._word_weights = estimator, vocabulary, weights


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return porter_stem(word)
