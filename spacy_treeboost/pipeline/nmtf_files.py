"""The files of `nmtf_sentiment`: its cfg (JSON) and its model (vocabulary, word weights, F and S, sealed with a
SHA-256 checksum and tied to the cfg they were saved with)."""
import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np
from spacy import util

from ..files import msgpack_loads_safe, open_seal, seal, settings_digest, write_bytes_atomic
from ..nmtf import MFLK

MODEL_FORMAT = "spacy_treeboost.nmtf_sentiment"
MODEL_FORMAT_VERSION = 1
SEALED_MODEL_FORMAT_VERSION = 2

Fitted = Tuple[Optional[MFLK], List[str], Optional[np.ndarray]]


def model_data(estimator: Optional[MFLK], vocabulary: List[str], word_weights: Optional[np.ndarray]) -> Dict[str, Any]:
    """A component's model as plain data (the unsealed form of format version 1).

    estimator (Optional[MFLK]): The fitted factorization, or None before training.
    vocabulary (List[str]): The words of the matrix, in column order.
    word_weights (Optional[numpy.ndarray]): The per-word factors, if any.
    RETURNS (Dict[str, Any]): The data.
    """
    data: Dict[str, Any] = {"format": MODEL_FORMAT, "format_version": MODEL_FORMAT_VERSION, "fitted": False}
    if estimator is not None:
        data.update(fitted=True, vocabulary=list(vocabulary), F=estimator.F_.tolist(), S=estimator.S_.tolist(),
                    n_iter=int(estimator.n_iter_))
        if word_weights is not None:
            data["word_weights"] = word_weights.tolist()
    return data


def model_bytes(cfg: Dict[str, Any], data: Dict[str, Any]) -> bytes:
    """The sealed model file: `model_data` with the digest of the cfg it belongs to.

    cfg (Dict[str, Any]): The component's settings.
    data (Dict[str, Any]): The output of `model_data`.
    RETURNS (bytes): The file's content.
    """
    data = dict(data, cfg_sha256=settings_digest(cfg))
    return seal(data, MODEL_FORMAT, SEALED_MODEL_FORMAT_VERSION, version_key="format_version")


def read_model(raw: Any, source: str, name: str, cfg: Optional[Dict[str, Any]],
               new_estimator: Callable[[], MFLK]) -> Fitted:
    """The estimator, vocabulary and word weights of a model file, checked.

    raw (Any): The file's bytes, or its unpacked content.
    source (str): Where it came from, for messages.
    name (str): The component's name, for messages.
    cfg (Optional[Dict[str, Any]]): The loaded cfg the file must belong to, or None to skip that check.
    new_estimator (Callable[[], MFLK]): Makes the estimator that receives F and S.
    RETURNS (Tuple[Optional[MFLK], List[str], Optional[numpy.ndarray]]): (None, [], None) for an untrained model.
    """
    foreign = f"Cannot load {name} from {source}: not an nmtf_sentiment model file"
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
            f"spacy-treeboost: upgrade the package.")
    try:
        data, sealed = open_seal(outer, MODEL_FORMAT, SEALED_MODEL_FORMAT_VERSION, MODEL_FORMAT_VERSION,
                                 error=ValueError, what="nmtf_sentiment model file", version_key="format_version")
    except ValueError as err:
        raise ValueError(f"Cannot load {name} from {source}: {err}") from None
    if sealed:
        if not isinstance(data, dict) or data.get("format") != MODEL_FORMAT or not isinstance(data.get("cfg_sha256"), str):
            raise ValueError(f"{foreign} (its sealed content is not an nmtf_sentiment model).")
        if cfg is not None and data["cfg_sha256"] != settings_digest(cfg):
            raise ValueError(
                f"Cannot load {name} from {source}: the cfg does not hold the settings the model was saved "
                "with (it was edited or damaged, or belongs to another model); restore both files from the same "
                "save.")
    if not data.get("fitted"):
        return None, [], None
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
    estimator = new_estimator()
    estimator.F_, estimator.S_ = F, S
    estimator.n_iter_ = int(data.get("n_iter", 0))
    return estimator, vocabulary, weights


def check_cfg(cfg: Any, current: Dict[str, Any], source: str, name: str) -> None:
    """Refuse a loaded cfg that is not an nmtf_sentiment cfg or holds settings the component does not have.

    cfg (Any): The loaded cfg.
    current (Dict[str, Any]): The component's cfg, which lists its settings.
    source (str): Where the cfg came from, for messages.
    name (str): The component's name, for messages.
    """
    if not isinstance(cfg, dict) or not isinstance(cfg.get("labels"), list) or len(cfg["labels"]) != 2:
        raise ValueError(f"Cannot load {name} settings from {source}: not an nmtf_sentiment cfg.")
    unknown = sorted(set(cfg) - set(current))
    if unknown:
        raise ValueError(f"Cannot load {name} settings from {source}: unknown settings {unknown} (the "
                         "factorization settings of spacy-treeboost 0.1 moved into the learner block; retrain).")


class NMTFFiles:
    """`to_bytes`, `from_bytes`, `to_disk` and `from_disk` of the `nmtf_sentiment` component.

    The component provides `name`, `cfg`, `_estimator`, `_vocabulary`, `_word_weights`,
    `_validate_settings` and `_new_estimator`.
    """

    name: str
    cfg: Dict[str, Any]
    _estimator: Optional[MFLK]
    _vocabulary: List[str]
    _word_weights: Optional[np.ndarray]
    _validate_settings: Callable[[], None]
    _new_estimator: Callable[[], MFLK]

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

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> "NMTFFiles":
        """Load the component from bytes written by `to_bytes`.

        bytes_data (bytes): The data.
        exclude (Iterable[str]): String names of serialization fields to exclude.
        RETURNS (NMTFFiles): The loaded component.
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

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> "NMTFFiles":
        """Load the component from a directory written by `to_disk`.

        path (Union[str, Path]): The directory.
        exclude (Iterable[str]): String names of serialization fields to exclude.
        RETURNS (NMTFFiles): The loaded component.
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
        return model_bytes(self.cfg, self._model_data())

    def _model_data(self) -> Dict[str, Any]:
        return model_data(self._estimator, self._vocabulary, self._word_weights)

    def _load_cfg(self, read: Callable[[], Any], source: str) -> None:
        try:
            cfg = read()
        except Exception as err:
            raise ValueError(f"Cannot load {self.name} settings from {source}: not valid JSON ({err}).") from None
        check_cfg(cfg, self.cfg, source, self.name)
        previous = dict(self.cfg)
        self.cfg.update(cfg)
        try:
            self._validate_settings()
        except (ValueError, TypeError, KeyError) as err:
            self.cfg = previous
            raise ValueError(f"Cannot load {self.name} settings from {source}: {err}") from None

    def _load_model(self, read: Callable[[], Any], source: str, cfg_loaded: bool = True) -> None:
        """Load the model from `read()`: a model file's bytes, or its unpacked content."""
        try:
            raw = read()
        except OSError as err:
            raise ValueError(f"Cannot load {self.name}: cannot read {source}: {err.strerror}.") from None
        fitted = read_model(raw, source, self.name, self.cfg if cfg_loaded else None, self._new_estimator)
        self._estimator, self._vocabulary, self._word_weights = fitted
