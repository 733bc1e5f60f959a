"""The model file of `nmtf_sentiment`: vocabulary, word weights, F and S (and the learner's other fitted values),
the calibration, sealed with a SHA-256 checksum and
tied to the cfg they were saved with. Saving and loading go through `ComponentFiles`."""
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ..files import ModelFormatError, msgpack_loads_safe, open_seal, seal, settings_digest
from ..nmtf import MFLK, SSMFLKNaiveBayes
from ..nmtf.calibration import Calibration
from ..nmtf.lexicons import Lexicon

MODEL_FORMAT = "spacy_treeboost.nmtf_sentiment"
MODEL_FORMAT_VERSION = 1

Fitted = Tuple[Optional[MFLK], List[str], Optional[np.ndarray], Optional[Calibration], Optional[Lexicon]]


def model_data(estimator: Optional[MFLK], vocabulary: List[str], word_weights: Optional[np.ndarray],
               calibration: Optional[Calibration] = None, lexicon: Optional[Lexicon] = None) -> Dict[str, Any]:
    """A component's model as plain data (the payload of a model file).

    estimator (Optional[MFLK]): The fitted factorization, or None before training.
    vocabulary (List[str]): The words of the matrix, in column order.
    word_weights (Optional[numpy.ndarray]): The per-word factors, if any.
    calibration (Optional[Calibration]): The map from scores to probabilities, if any.
    lexicon (Optional[Lexicon]): The lexicon the model was trained with (its words as the documents' tokens are
        written), if any.
    RETURNS (Dict[str, Any]): The data.
    """
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
    """The sealed model file: `model_data` with the digest of the cfg it belongs to.

    cfg (Dict[str, Any]): The component's settings.
    data (Dict[str, Any]): The output of `model_data`.
    RETURNS (bytes): The file's content.
    """
    data = dict(data, cfg_sha256=settings_digest(cfg))
    return seal(data, MODEL_FORMAT, MODEL_FORMAT_VERSION, version_key="format_version")


def read_model(raw: Any, source: str, name: str, cfg: Optional[Dict[str, Any]],
               new_estimator: Callable[[], MFLK]) -> Fitted:
    """The estimator, vocabulary and word weights of a model file, checked.

    raw (Any): The file's bytes, or its unpacked content.
    source (str): Where it came from, for messages.
    name (str): The component's name, for messages.
    cfg (Optional[Dict[str, Any]]): The loaded cfg the file must belong to, or None to skip that check.
    new_estimator (Callable[[], MFLK]): Makes the estimator that receives F and S.
    RETURNS (Tuple[Optional[MFLK], List[str], Optional[numpy.ndarray], Optional[Calibration], Optional[Lexicon]]):
        (None, [], None, None, None) for an untrained model; the calibration and the lexicon are None when the
        model has none.
    """
    foreign = f"Cannot load {name} from {source}: not an nmtf_sentiment model file"
    try:
        outer = msgpack_loads_safe(raw) if isinstance(raw, bytes) else raw
    except Exception as err:
        raise ModelFormatError(f"{foreign} (unreadable msgpack: {err}).") from None
    if not isinstance(outer, dict) or outer.get("format") != MODEL_FORMAT:
        raise ModelFormatError(f"{foreign} (expected format {MODEL_FORMAT!r}).")
    try:
        data = open_seal(outer, MODEL_FORMAT, MODEL_FORMAT_VERSION, error=ModelFormatError,
                         what="nmtf_sentiment model file", version_key="format_version")
    except ModelFormatError as err:
        raise ModelFormatError(f"Cannot load {name} from {source}: {err}") from None
    if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT or not isinstance(data.get("cfg_sha256"), str):
        raise ModelFormatError(f"{foreign} (its sealed content is not an nmtf_sentiment model).")
    if cfg is not None and data["cfg_sha256"] != settings_digest(cfg):
        raise ModelFormatError(
            f"Cannot load {name} from {source}: the cfg does not hold the settings the model was saved "
            "with (it was edited or damaged, or belongs to another model); restore both files from the same "
            "save.")
    if not data.get("fitted"):
        return None, [], None, None, None
    try:
        vocabulary = [str(w) for w in data["vocabulary"]]
        F = np.asarray(data["F"], dtype=np.float64)
        S = np.asarray(data["S"], dtype=np.float64)
        weights = None if data.get("word_weights") is None else np.asarray(data["word_weights"], dtype=np.float64)
    except (KeyError, TypeError, ValueError) as err:
        raise ModelFormatError(f"{foreign} (corrupt field: {err}).") from None
    if F.shape != (len(vocabulary), 2) or S.shape != (2, 2) or not (np.isfinite(F).all() and np.isfinite(S).all()):
        raise ModelFormatError(f"{foreign} (F must be {len(vocabulary)} x 2 and S 2 x 2, finite).")
    if weights is not None and (weights.shape != (len(vocabulary),) or not np.isfinite(weights).all()):
        raise ModelFormatError(f"{foreign} (word_weights must hold {len(vocabulary)} finite numbers).")
    estimator = new_estimator()
    estimator.F_, estimator.S_ = F, S
    estimator.n_iter_ = int(data.get("n_iter", 0))
    calibration = None
    try:
        if isinstance(estimator, SSMFLKNaiveBayes):
            if not isinstance(data.get("learner_state"), dict):
                raise ValueError("the learner's fitted values are missing")
            estimator.load_fitted_state(data["learner_state"])
            if len(estimator.nb_coef_) != len(vocabulary):
                raise ValueError(f"the naive Bayes coefficients must hold {len(vocabulary)} numbers")
        if data.get("calibration") is not None:
            calibration = Calibration.from_dict(data["calibration"])
        lexicon = None
        if data.get("lexicon") is not None:
            words = data["lexicon"]
            if not all(isinstance(w, str) for side in ("positive", "negative") for w in words[side]):
                raise ValueError("the lexicon must hold words")
            lexicon = Lexicon(words["positive"], words["negative"])
    except (KeyError, TypeError, ValueError) as err:
        raise ModelFormatError(f"{foreign} (corrupt field: {err}).") from None
    return estimator, vocabulary, weights, calibration, lexicon
