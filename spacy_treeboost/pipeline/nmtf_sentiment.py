"""The `nmtf_sentiment` component: lexicon-guided NMTF sentiment, fitted in `initialize` (`update` reports the
objective), its scores calibrated to P(positive) on the training documents."""
import warnings
from collections import Counter
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple

import numpy as np
from spacy import util
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example
from spacy.vocab import Vocab

from ..config_errors import config_error, data_errors, reported_at, reporting, training_corpus
from ..nmtf import (MFLK, UNLABELLED, SSMFLK, SSMFLKNaiveBayes, build_vocabulary, document_term_matrix, lexicon_prior,
                    lexicons, porter_stem, word_weights)
from ..nmtf.calibration import Calibration, label_folds
from ..nmtf.common import NEGATIVE, POSITIVE, sp
from ..nmtf.lexicons import Lexicon
from ..params import Boolean, Interval, Options, invalid_setting, rule, validate_params
from .component_files import TreeboostPipe
from .learners import learner_from_settings, learner_settings, nmtf_learners, warn_if_constant


def _reader(name: str, func: Callable[..., Lexicon]) -> Callable[..., Lexicon]:
    """`func` registered as the reader `name` (also by entry points), its errors as spaCy config errors."""
    return util.registry.readers.register(name, func=reporting(func, name))


read_hu_liu_lexicon = _reader("spacy_treeboost.HuLiuLexicon.v1", lexicons.read_hu_liu_lexicon)
read_jsonl_lexicon = _reader("spacy_treeboost.JsonlLexicon.v1", lexicons.read_jsonl_lexicon)
read_lexicon = _reader("spacy_treeboost.Lexicon.v1", lexicons.read_lexicon)

CALIBRATION_FOLDS = 2
MODEL_FORMAT = "spacy_treeboost.nmtf_sentiment"
SETTING_CONSTRAINTS = {
    "iterations_per_update": rule(Interval("int", 1, None)),
    "n_words": rule(Interval("int", 1, None)),
    "norm": rule(Options("l1", "l2")),
    "word_norm": rule(Boolean()),
    "token_attr": rule(Options("LOWER", "NORM", "LEMMA")),
    "stem": rule(Boolean()),
}


class NMTFSentiment(TreeboostPipe):
    """Document polarity from a lexicon-guided non-negative matrix tri-factorization (docs/nmtf.md,
    docs/nmtf_sentiment.md; docs/algorithms.md, section 4: Li, Zhang & Sindhwani 2009)."""

    factory = "nmtf_sentiment"
    model_format = (MODEL_FORMAT, 1, "format_version")

    def __init__(self, vocab: Vocab, model: None, name: str = "nmtf_sentiment", *, positive_label: str,
                 negative_label: str, learner: MFLK, iterations_per_update: int, n_words: int, norm: str,
                 word_norm: bool, token_attr: str, stem: bool, scorer: Optional[Callable]) -> None:
        """Initialize the component; `make_nmtf_sentiment` describes the settings, `model` is unused."""
        self.name = name
        if not positive_label or not negative_label or positive_label == negative_label:
            raise config_error(f"positive_label and negative_label must be two different non-empty labels, got "
                               f"{positive_label!r} and {negative_label!r}.", ["components", name, "negative_label"])
        self._check_registered(learner, nmtf_learners())
        settings = learner_settings(learner)
        if settings.pop("lexicon_prior", None) is not None:
            raise config_error(f"{name}'s learner must not hold a lexicon_prior: the component builds it from the "
                               f"lexicon under [initialize.components.{name}] and its own vocabulary.",
                               ["components", name, "learner", "lexicon_prior"])
        cfg = {"labels": [positive_label, negative_label], "learner": settings,
               "iterations_per_update": iterations_per_update, "n_words": n_words, "norm": norm,
               "word_norm": word_norm, "token_attr": token_attr, "stem": stem}
        self._setup(vocab, name, scorer, cfg)
        self.fit_info_: Optional[Dict[str, Any]] = None

    def _validate_settings(self, block: Optional[Sequence[str]] = None, learner: Any = None) -> None:
        """Check the settings in `cfg`; with the config `block`, errors are config errors located at the setting."""
        with reported_at(block, self.cfg):
            if not isinstance(self.cfg["labels"], list) or len(self.cfg["labels"]) != 2:
                raise invalid_setting("labels", self.cfg["labels"], "use the positive and the negative label")
            validate_params(self.cfg, SETTING_CONSTRAINTS)
        with reported_at(None if block is None else [*block, "learner"], self.cfg["learner"]):
            self._new_estimator().validate_params()

    def _reset(self, estimator: Optional[MFLK] = None, vocabulary: Sequence[str] = (),
               weights: Optional[np.ndarray] = None, calibration: Optional[Calibration] = None,
               lexicon: Optional[Lexicon] = None) -> None:
        """Hold a fitted model (None: untrained)."""
        self._estimator = estimator
        self._vocabulary = list(vocabulary)
        self._word_weights = weights
        self._calibration = calibration
        self._lexicon = lexicon

    @property
    def _uses_labels(self) -> bool:
        return issubclass(nmtf_learners()[self.cfg["learner"]["@learners"]], SSMFLK)

    @property
    def calibration(self) -> Optional[Calibration]:
        """RETURNS (Optional[Calibration]): The map from scores to P(positive), None before training."""
        return self._calibration

    @property
    def vocabulary(self) -> List[str]:
        """RETURNS (List[str]): The words of the document-term matrix, in column order."""
        return list(self._vocabulary)

    @property
    def is_fitted(self) -> bool:
        """RETURNS (bool): Whether F and S are available for prediction."""
        return self._estimator is not None

    def add_label(self, label: str) -> int:
        """Check a label: they are fixed by `positive_label` and `negative_label`. RETURNS (int): 0."""
        if label not in self.labels:
            raise ValueError(f"{self.name} has exactly two labels, {self.labels}; set positive_label and "
                             f"negative_label in the component config instead of adding {label!r}.")
        return 0

    def initialize(self, get_examples: Callable[[], Iterable[Example]], *, nlp: Optional[Language] = None,
                   lexicon: Optional[Lexicon] = None,
                   unlabeled: Optional[Callable[[Language], Iterable[Any]]] = None) -> None:
        """Build the training matrix and the priors, and fit the factorization and the calibration.

        get_examples (Callable[[], Iterable[Example]]): The training examples; empty `reference.cats`: unlabeled.
        lexicon (Optional[Lexicon]): The sentiment lexicon, e.g. from `spacy_treeboost.HuLiuLexicon.v1`; required
            unless alpha is 0.
        unlabeled (Optional[Callable[[Language], Iterable[Any]]]): A reader of extra unlabeled Examples, Docs or texts.
        """
        if lexicon is None and self.cfg["learner"]["alpha"] > 0:
            raise config_error(f'{self.name} needs a sentiment lexicon: add `lexicon = {{"@readers": '
                               f'"spacy_treeboost.HuLiuLexicon.v1", "path": ...}}` under '
                               f"[initialize.components.{self.name}], or set alpha = 0.",
                               ["initialize", "components", self.name, "lexicon"])
        examples = self._examples(get_examples, nlp)
        with data_errors(training_corpus(nlp)):
            self._warn_shared_keys(nlp)
            docs, gold = self._training_documents(examples, nlp, unlabeled)
            tokens = [self._tokens(doc) for doc in docs]
            vocabulary = build_vocabulary(tokens, max_words=self.cfg["n_words"])
            X = document_term_matrix(tokens, vocabulary, norm=self.cfg["norm"])
            weights = word_weights(X) if self.cfg["word_norm"] else None
            if weights is not None:
                X = document_term_matrix(tokens, vocabulary, norm=self.cfg["norm"], word_weights=weights)
            F0 = None
            if lexicon is not None:
                lexicon = lexicon.map(porter_stem) if self.cfg["stem"] else lexicon
                F0 = lexicon_prior(vocabulary, lexicon.positive, lexicon.negative)
            y = np.asarray(gold, dtype=np.int64)
            estimator = self._new_estimator().set_params(lexicon_prior=F0)
            estimator.initialize(X, y if self._uses_labels else None)
            held_out = self._fit(estimator, X, y)
        score = estimator.decision_function(X)
        if held_out is not None:
            score[y != UNLABELLED] = held_out[y != UNLABELLED]
        self._reset(estimator, vocabulary, weights, Calibration.fit(score, y), lexicon)
        warn_if_constant(self.name, estimator, score)

    def _training_documents(self, examples: List[Example], nlp: Optional[Language],
                            unlabeled: Optional[Callable[[Language], Iterable[Any]]]) -> Tuple[List[Doc], List[int]]:
        docs = [eg.predicted for eg in examples]
        gold = [self._gold_class(eg.reference.cats, i) for i, eg in enumerate(examples)]
        if unlabeled is not None:
            if nlp is None:
                raise ValueError(f"{self.name}: an unlabeled reader needs the pipeline; pass nlp to initialize.")
            for item in unlabeled(nlp) if callable(unlabeled) else unlabeled:
                if isinstance(item, str):
                    item = nlp.make_doc(item)
                elif isinstance(item, Example):
                    item = item.predicted
                elif not isinstance(item, Doc):
                    raise TypeError(f"Unlabeled documents must be Examples, Docs or texts, got {type(item).__name__}.")
                docs.append(item)
                gold.append(UNLABELLED)
        if not docs:
            raise ValueError(f"{self.name} got no training documents: the training corpus is empty (and no "
                             "unlabeled reader is set). Give it documents.")
        return docs, gold

    def _fit(self, estimator: MFLK, X: "sp.csr_matrix", y: np.ndarray) -> Optional[np.ndarray]:
        """Run `max_iter` iterations or, with labels of both classes and a learner that uses them, those of the
        latest checkpoint (every `iterations_per_update`) at which models fitted without one fold of the labels are
        within one standard error of their best held-out accuracy.

        RETURNS (Optional[numpy.ndarray]): The held-out scores at that checkpoint (0 unlabelled), None without folds.
        """
        max_iter = estimator.max_iter
        if not (self._uses_labels and (y == POSITIVE).any() and (y == NEGATIVE).any()):
            estimator.iterate(max_iter)
            return None
        folds = label_folds(y, CALIBRATION_FOLDS)
        labelled = folds >= 0
        fold_models = [self._new_estimator().set_params(lexicon_prior=estimator.lexicon_prior).initialize(
            X, np.where(folds == fold, UNLABELLED, y)) for fold in range(CALIBRATION_FOLDS)]
        checkpoints: List[int] = []
        scores: List[np.ndarray] = []
        done = 0
        while True:
            score = np.zeros(len(folds))
            for fold, model in enumerate(fold_models):
                held = np.flatnonzero(folds == fold)
                score[held] = model.decision_function(X[held])
            checkpoints.append(done)
            scores.append(score)
            if done >= max_iter or all(model.converged_ for model in fold_models):
                break
            step = min(self.cfg["iterations_per_update"], max_iter - done)
            for model in fold_models:
                model.iterate(step)
            done += step
        truth = y[labelled] == POSITIVE
        accuracy = np.array([np.mean((score[labelled] >= 0) == truth) for score in scores])
        best = float(accuracy.max())
        margin = np.sqrt(best * (1.0 - best) / int(labelled.sum()))
        chosen = int(np.flatnonzero(accuracy >= best - margin)[-1])
        estimator.iterate(checkpoints[chosen])
        self.fit_info_ = {"iterations": checkpoints[chosen], "checkpoints": checkpoints,
                          "held_out_accuracy": accuracy.tolist()}
        return scores[chosen]

    def _loss(self) -> float:
        """The objective J (the model is fitted in `initialize`)."""
        if self._estimator is None or not self._estimator.can_iterate():
            raise self._not_initialized("matrix")
        return float(self._estimator.objective_[-1])

    def predict(self, docs: Iterable[Doc]) -> np.ndarray:
        """RETURNS (numpy.ndarray): The calibrated (positive, negative) probabilities of each document."""
        docs = list(docs)
        if self._estimator is None:
            raise self._not_trained()
        if not docs:
            return np.zeros((0, 2))
        X = self._document_matrix([self._tokens(doc) for doc in docs])
        if self._calibration is None:
            return self._estimator.predict_proba(X)
        p = self._calibration.positive_probability(self._estimator.decision_function(X))
        return np.stack([p, 1.0 - p], axis=1)

    def set_annotations(self, docs: Iterable[Doc], scores: np.ndarray) -> None:
        """Write both labels' scores (the output of `predict`) to `doc.cats`."""
        positive, negative = self.labels
        for doc, (p_pos, p_neg) in zip(docs, scores):
            doc.cats[positive] = float(p_pos)
            doc.cats[negative] = float(p_neg)

    def _document_matrix(self, documents: List[List[str]]) -> Any:
        """The rows of new documents. In a document whose known words are all lexicon words, each lexicon word the
        vocabulary does not know counts as one occurrence spread over the known lexicon words of its polarity."""
        norm, weights = self.cfg["norm"], self._word_weights
        X = document_term_matrix(documents, self._vocabulary, norm=norm, word_weights=weights)
        lexicon = self._lexicon
        if lexicon is None:
            return X
        index = {word: i for i, word in enumerate(self._vocabulary)}
        known = {side: [index[w] for w in sorted(words) if w in index]
                 for side, words in (("positive", lexicon.positive), ("negative", lexicon.negative))}
        rows = X.tolil()
        changed = False
        for d, tokens in enumerate(documents):
            if any(token in index and token not in lexicon for token in tokens):
                continue
            unknown = Counter(lexicon.polarity(token) for token in tokens if token not in index)
            if not any(unknown[side] and columns for side, columns in known.items()):
                continue
            row = np.bincount([index[t] for t in tokens if t in index], minlength=len(index)).astype(np.float64)
            for side, columns in known.items():
                if unknown[side] and columns:
                    row[columns] += unknown[side] / len(columns)
            row /= np.linalg.norm(row) if norm == "l2" else row.sum()
            rows[d] = row if weights is None else row * weights
            changed = True
        return rows.tocsr() if changed else X

    def _model_data(self) -> Dict[str, Any]:
        """The model as plain data, the payload of its model file."""
        data: Dict[str, Any] = {"format": MODEL_FORMAT, "format_version": self.model_format[1], "fitted": False}
        estimator = self._estimator
        if estimator is not None:
            data.update(fitted=True, vocabulary=list(self._vocabulary), F=estimator.F_.tolist(),
                        S=estimator.S_.tolist(), n_iter=int(estimator.n_iter_))
            if self._word_weights is not None:
                data["word_weights"] = self._word_weights.tolist()
            if hasattr(estimator, "fitted_state"):
                data["learner_state"] = estimator.fitted_state()
            if self._calibration is not None:
                data["calibration"] = self._calibration.to_dict()
            if self._lexicon is not None:
                data["lexicon"] = {"positive": sorted(self._lexicon.positive),
                                   "negative": sorted(self._lexicon.negative)}
        return data

    def _read_model(self, data: Dict[str, Any]) -> Tuple[Any, ...]:
        """The estimator, vocabulary, word weights, calibration and lexicon of a model's data (none: untrained)."""
        if data.get("format") != MODEL_FORMAT:
            raise ValueError(f"format {data.get('format')!r}, expected {MODEL_FORMAT!r}")
        if not data.get("fitted"):
            return ()
        vocabulary = [str(w) for w in data["vocabulary"]]
        F = np.asarray(data["F"], dtype=np.float64)
        S = np.asarray(data["S"], dtype=np.float64)
        weights = None if data.get("word_weights") is None else np.asarray(data["word_weights"], dtype=np.float64)
        if F.shape != (len(vocabulary), 2) or S.shape != (2, 2) or not (np.isfinite(F).all() and np.isfinite(S).all()):
            raise ValueError(f"F must be {len(vocabulary)} x 2 and S 2 x 2, finite")
        if weights is not None and (weights.shape != (len(vocabulary),) or not np.isfinite(weights).all()):
            raise ValueError(f"word_weights must hold {len(vocabulary)} finite numbers")
        estimator = self._new_estimator()
        estimator.F_, estimator.S_ = F, S
        estimator.n_iter_ = int(data.get("n_iter", 0))
        if isinstance(estimator, SSMFLKNaiveBayes):
            if not isinstance(data.get("learner_state"), dict):
                raise ValueError("the learner's fitted values are missing")
            estimator.load_fitted_state(data["learner_state"])
            if len(estimator.nb_coef_) != len(vocabulary):
                raise ValueError(f"the naive Bayes coefficients must hold {len(vocabulary)} numbers")
        calibration = None if data.get("calibration") is None else Calibration.from_dict(data["calibration"])
        lexicon = None
        if data.get("lexicon") is not None:
            words = data["lexicon"]
            if not all(isinstance(w, str) for side in ("positive", "negative") for w in words[side]):
                raise ValueError("the lexicon must hold words")
            lexicon = Lexicon(words["positive"], words["negative"])
        return estimator, vocabulary, weights, calibration, lexicon

    def _new_estimator(self) -> MFLK:
        return learner_from_settings(self.cfg["learner"], nmtf_learners())

    def _gold_class(self, cats: Dict[str, float], index: int) -> int:
        """POSITIVE or NEGATIVE for an example's cats; UNLABELLED for empty cats, and for cats of other labels or
        of a tie when the learner does not use labels."""
        positive, negative = self.labels
        unknown = sorted(set(cats) - {positive, negative})
        p_pos, p_neg = cats.get(positive, 0.0), cats.get(negative, 0.0)
        if not cats or ((unknown or p_pos == p_neg) and not self._uses_labels):
            return UNLABELLED
        if unknown:
            raise ValueError(f"Training example {index} has the label {unknown[0]!r}, but {self.name} knows only "
                             f"{positive!r} and {negative!r}. Set positive_label and negative_label in "
                             f"[components.{self.name}] to the corpus's labels, or map the corpus labels.")
        if p_pos == p_neg:
            raise ValueError(f"Training example {index} has cats {dict(cats)}: exactly one of {positive!r} and "
                             f"{negative!r} must be the larger (give an unlabeled document empty cats).")
        return POSITIVE if p_pos > p_neg else NEGATIVE

    def _warn_shared_keys(self, nlp: Optional[Language]) -> None:
        prefix = getattr(self.scorer, "keywords", {}).get("prefix")
        if nlp is None or prefix != "":
            return
        others = [name for name in nlp.pipe_names if name != self.name
                  and "doc.cats" in nlp.get_pipe_meta(name).assigns]
        if others:
            warnings.warn(f"{self.name} and {others[0]} both write doc.cats and report spaCy's cats_* scores; in "
                          f"`spacy evaluate` and `spacy train` the later component's scores replace the other's. Set "
                          f'[components.{self.name}.scorer] prefix = "nmtf_" to report {self.name} as nmtf_cats_*.')

    def _tokens(self, doc: Doc) -> List[str]:
        """The `token_attr` (LOWER, NORM or LEMMA, lower-cased) of a document's non-space tokens, Porter-stemmed
        with `stem`."""
        token_attr = self.cfg["token_attr"]
        if token_attr == "LEMMA" and len(doc) and not doc.has_annotation("LEMMA"):
            raise ValueError(f"{self.name} uses token_attr = LEMMA, but a document has no lemmas. Put a lemmatizer "
                             "before it (and in [training] annotating_components), or use LOWER.")
        attr = {"LEMMA": "lemma_", "NORM": "norm_"}.get(token_attr, "lower_")
        words = [getattr(t, attr).lower() if attr == "lemma_" else getattr(t, attr) for t in doc if not t.is_space]
        return [porter_stem(w) for w in words] if self.cfg["stem"] else words

