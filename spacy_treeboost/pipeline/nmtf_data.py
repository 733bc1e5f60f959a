"""What `nmtf_sentiment` reads and writes: a Doc's words and gold class, the training matrix, and its model file
(sealed with a SHA-256 checksum and tied to the cfg it was saved with)."""
import functools
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from ..files import ModelFormatError, seal, settings_digest, unseal
from ..nmtf import (MFLK, NEGATIVE, POSITIVE, UNLABELLED, SSMFLKNaiveBayes, build_vocabulary, document_term_matrix,
                    porter_stem, word_weights)
from ..nmtf.calibration import Calibration
from ..nmtf.common import sp
from ..nmtf.lexicons import Lexicon

MODEL_FORMAT = "spacy_treeboost.nmtf_sentiment"
MODEL_FORMAT_VERSION = 1

Fitted = Tuple[Optional[MFLK], List[str], Optional[np.ndarray], Optional[Calibration], Optional[Lexicon]]


def doc_words(doc: Doc, token_attr: str, stem: bool, name: str) -> List[str]:
    """The `token_attr` (LOWER, NORM or LEMMA, lower-cased) of a document's non-space tokens, Porter-stemmed with
    `stem`; `name` (the component's) is for messages."""
    if token_attr == "LEMMA":
        if len(doc) and not doc.has_annotation("LEMMA"):
            raise ValueError(
                f"{name} uses token_attr = LEMMA, but a document has no lemmas. Put a "
                f"lemmatizer before it (and in [training] annotating_components), or use LOWER.")
        words = [t.lemma_.lower() for t in doc if not t.is_space]
    elif token_attr == "NORM":
        words = [t.norm_ for t in doc if not t.is_space]
    else:
        words = [t.lower_ for t in doc if not t.is_space]
    return [_stem(w) for w in words] if stem else words


def gold_class(cats: Dict[str, float], labels: Sequence[str], index: int, name: str) -> int:
    """POSITIVE or NEGATIVE for an example's cats (`labels`: the positive and the negative label), UNLABELLED for
    empty cats; `index` and `name` are for messages."""
    if not cats:
        return UNLABELLED
    positive, negative = labels
    unknown = sorted(set(cats) - {positive, negative})
    if unknown:
        raise ValueError(
            f"Training example {index} has the label {unknown[0]!r}, but {name} knows only "
            f"{positive!r} and {negative!r}. Set positive_label and negative_label in "
            f"[components.{name}] to the corpus's labels, or map the corpus labels.")
    p_pos, p_neg = cats.get(positive, 0.0), cats.get(negative, 0.0)
    if p_pos == p_neg:
        raise ValueError(
            f"Training example {index} has cats {dict(cats)}: exactly one of {positive!r} and "
            f"{negative!r} must be the larger (give an unlabeled document empty cats).")
    return POSITIVE if p_pos > p_neg else NEGATIVE


def as_doc(item: Any, nlp: Optional[Language]) -> Doc:
    """An unlabelled document given as an Example, a Doc or a text."""
    if isinstance(item, Example):
        return item.predicted
    if isinstance(item, Doc):
        return item
    if isinstance(item, str) and nlp is not None:
        return nlp.make_doc(item)
    raise TypeError(f"Unlabeled documents must be Examples, Docs or texts, got {type(item).__name__}.")


def training_matrix(tokens: Sequence[Sequence[str]], n_words: int, norm: str,
                    word_norm: bool) -> Tuple[List[str], "sp.csr_matrix", Optional[np.ndarray]]:
    """The vocabulary (`n_words` words), the training documents' matrix (`norm` per document) and, with `word_norm`,
    the word weights giving every word unit norm."""
    vocabulary = build_vocabulary(tokens, max_words=n_words)
    X = document_term_matrix(tokens, vocabulary, norm=norm)
    weights = word_weights(X) if word_norm else None
    if weights is not None:
        X = document_term_matrix(tokens, vocabulary, norm=norm, word_weights=weights)
    return vocabulary, X, weights


@functools.lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return porter_stem(word)


def model_data(estimator: Optional[MFLK], vocabulary: List[str], word_weights: Optional[np.ndarray],
               calibration: Optional[Calibration] = None, lexicon: Optional[Lexicon] = None) -> Dict[str, Any]:
    """A component's model as plain data, the payload of its model file (the estimator is None before training)."""
    data: Dict[str, Any] = {"format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION, "fitted": False}
    if estimator is not None:
        data.update(fitted=True, vocabulary=list(vocabulary), F=estimator.F_.tolist(), S=estimator.S_.tolist(),
                    n_iter=int(estimator.n_iter_))
        if word_weights is not None:
            data["word_weights"] = word_weights.tolist()
        if hasattr(estimator, "fitted_state"):
            data["learner_state"] = estimator.fitted_state()
        if calibration is not None:
            data["calibration"] = calibration.to_dict()
        if lexicon is not None:
            data["lexicon"] = {"positive": sorted(lexicon.positive), "negative": sorted(lexicon.negative)}
    return data


def model_bytes(cfg: Dict[str, Any], data: Dict[str, Any]) -> bytes:
    """The sealed model file: `model_data` with the digest of the `cfg` it belongs to."""
    data = dict(data, cfg_sha256=settings_digest(cfg))
    return seal(data, MODEL_FORMAT, MODEL_FORMAT_VERSION, version_key="format_version")


def open_model(raw: bytes, name: str) -> Dict[str, Any]:
    """The content of a model file, its seal and format checked; `name` (the component's) is for messages."""
    try:
        data = unseal(raw, MODEL_FORMAT, MODEL_FORMAT_VERSION, error=ModelFormatError,
                      what="nmtf_sentiment model file", version_key="format_version")
    except ModelFormatError as err:
        raise ModelFormatError(f"Cannot load {name} from its model file: {err}") from None
    if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT or not isinstance(data.get("cfg_sha256"), str):
        raise ModelFormatError(f"Cannot load {name} from its model file: its sealed content is not an nmtf_sentiment "
                               "model; retrain the component.")
    return data


def read_model(data: Dict[str, Any], name: str, new_estimator: Callable[[], MFLK]) -> Fitted:
    """The estimator (made by `new_estimator`), vocabulary, word weights, calibration and lexicon of the output of
    `open_model`, checked; (None, [], None, None, None) for an untrained model."""
    if not data.get("fitted"):
        return None, [], None, None, None
    corrupt = f"Cannot load {name} from its model file: not an nmtf_sentiment model file (corrupt field: {{}})."
    try:
        vocabulary = [str(w) for w in data["vocabulary"]]
        F = np.asarray(data["F"], dtype=np.float64)
        S = np.asarray(data["S"], dtype=np.float64)
        weights = None if data.get("word_weights") is None else np.asarray(data["word_weights"], dtype=np.float64)
    except (KeyError, TypeError, ValueError) as err:
        raise ModelFormatError(corrupt.format(err)) from None
    if F.shape != (len(vocabulary), 2) or S.shape != (2, 2) or not (np.isfinite(F).all() and np.isfinite(S).all()):
        raise ModelFormatError(corrupt.format(f"F must be {len(vocabulary)} x 2 and S 2 x 2, finite"))
    if weights is not None and (weights.shape != (len(vocabulary),) or not np.isfinite(weights).all()):
        raise ModelFormatError(corrupt.format(f"word_weights must hold {len(vocabulary)} finite numbers"))
    estimator = new_estimator()
    estimator.F_, estimator.S_ = F, S
    estimator.n_iter_ = int(data.get("n_iter", 0))
    calibration = lexicon = None
    try:
        if isinstance(estimator, SSMFLKNaiveBayes):
            if not isinstance(data.get("learner_state"), dict):
                raise ValueError("the learner's fitted values are missing")
            estimator.load_fitted_state(data["learner_state"])
            if len(estimator.nb_coef_) != len(vocabulary):
                raise ValueError(f"the naive Bayes coefficients must hold {len(vocabulary)} numbers")
        if data.get("calibration") is not None:
            calibration = Calibration.from_dict(data["calibration"])
        if data.get("lexicon") is not None:
            words = data["lexicon"]
            if not all(isinstance(w, str) for side in ("positive", "negative") for w in words[side]):
                raise ValueError("the lexicon must hold words")
            lexicon = Lexicon(words["positive"], words["negative"])
    except (KeyError, TypeError, ValueError) as err:
        raise ModelFormatError(corrupt.format(err)) from None
    return estimator, vocabulary, weights, calibration, lexicon
