"""What both components share: settings in `cfg`, labels, training-data and update checks, and their files, `cfg`
(JSON) and `model` (sealed msgpack holding the digest of its `cfg`). A failed load raises `ModelFormatError` and
leaves the component as it was."""
import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple, Type, Union

from spacy import util
from spacy.language import Language
from spacy.pipeline import TrainablePipe
from spacy.training import Example, validate_get_examples
from spacy.vocab import Vocab

from ..config_errors import config_error, data_errors, training_corpus
from ..files import (ModelFormatError, check_model_file, load_cfg_json, msgpack_loads_safe, seal, settings_digest,
                     unseal, write_bytes_atomic)
from ..params import shown


class TreeboostPipe(TrainablePipe):
    """The base of the components, which provide `factory`, `model_format`, `_validate_settings()`, `_reset()` (the
    state of an untrained component, or of the arguments `_read_model` returns), `_loss()`, `_model_data()` (the
    model file's payload) and `_read_model()`."""

    factory: str
    model_format: Tuple[str, int, str]  # the model file's format name, version and version key
    _validate_settings: Callable[..., None]  # (block=None, learner=None): checks `cfg`, config errors with a block
    _reset: Callable[..., None]
    _loss: Callable[[], Optional[float]]
    _model_data: Callable[[], Dict[str, Any]]
    _read_model: Callable[[Dict[str, Any]], Tuple[Any, ...]]  # the fitted state; a bad field: KeyError, ValueError...

    def _setup(self, vocab: Vocab, name: str, scorer: Optional[Callable], cfg: Dict[str, Any],
               learner: Any = None) -> None:
        """Hold the settings `cfg` (and the `learner` they describe), checked as config errors located under
        [components.name]."""
        self.vocab = vocab
        self.model = None
        self.name = name
        self.scorer = scorer
        self.cfg = cfg
        self._validate_settings(("components", name), learner)
        self._reset()

    def _check_registered(self, learner: Any, registered: Dict[str, Any]) -> None:
        if type(learner) not in registered.values():
            raise config_error(f"learner={shown(learner)} is invalid: use one of the registered learners "
                               f"{sorted(registered)}", ["components", self.name, "learner"])

    @property
    def labels(self) -> Tuple[str, ...]:
        """RETURNS (Tuple[str, ...]): The labels the component assigns."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        """RETURNS (List[str]): The labels, as `spacy init labels` stores them."""
        return list(self.cfg["labels"])

    def _examples(self, get_examples: Callable[[], Iterable[Example]], nlp: Optional[Language]) -> List[Example]:
        """The training examples, checked as spaCy checks them when there are any."""
        with data_errors(training_corpus(nlp)):
            examples = list(get_examples())
            if examples:
                validate_get_examples(lambda: examples, f"{type(self).__name__}.initialize")
        return examples

    def update(self, examples: Iterable[Example], *, drop: float = 0.0, sgd: Optional[Any] = None,
               losses: Optional[Dict[str, float]] = None) -> Dict[str, float]:
        """Train for one step (the batch is ignored) and report the training loss."""
        if losses is None:
            losses = {}
        losses.setdefault(self.name, 0.0)
        loss = self._loss()
        if loss is not None:
            losses[self.name] = loss
        return losses

    def _not_initialized(self, what: str) -> ValueError:
        return ValueError(f"'{self.name}' has no training {what}: it was not initialized in this run (a sourced or "
                          "loaded component is not retrained). List it in [training] frozen_components, or train "
                          "it from scratch (remove 'source').")

    def use_params(self, params: dict) -> Iterator[None]:
        yield

    def finish_update(self, sgd: Any = None) -> None:
        pass

    def _not_trained(self) -> ValueError:
        return ValueError(f"'{self.name}' is not trained: run `nlp.initialize` and train it (spacy train does both), "
                          "or load a trained pipeline.")

    def _restore_cfg(self, cfg: Dict[str, Any]) -> None:
        if not isinstance(cfg, dict):
            raise ModelFormatError(f"'{self.name}': the stored cfg is not a JSON object.")
        unknown = sorted(set(cfg) - set(self.cfg))
        if unknown:
            raise ModelFormatError(f"'{self.name}': the stored cfg has unknown settings {unknown}; it comes from "
                                   "another component or another spacy-treeboost (a learner's settings belong in "
                                   "its learner block): retrain the pipeline with this one.")
        self.cfg.update(cfg)
        try:
            self._validate_settings()
            if not isinstance(self.cfg["labels"], list) or not all(isinstance(l, str) for l in self.cfg["labels"]):
                raise ValueError(f"labels={self.cfg['labels']!r} is invalid: use a list of strings")
        except (ValueError, TypeError, KeyError) as err:
            raise ModelFormatError(f"'{self.name}': the stored cfg is invalid: {err}") from None

    def _check_cfg_digest(self, digest: str) -> None:
        if digest != settings_digest(self.cfg):
            raise ModelFormatError(
                f"'{self.name}': the cfg does not hold the settings the model was saved with (it was edited or "
                "damaged, or belongs to another model); restore both files from the same save.")

    def _model_bytes(self) -> bytes:
        return self._sealed(self._model_data())

    def _sealed(self, data: Dict[str, Any]) -> bytes:
        """The sealed model file of `data` (`_model_data()`) with the digest of the cfg it belongs to."""
        name, version, version_key = self.model_format
        return seal(dict(data, cfg_sha256=settings_digest(self.cfg)), name, version, version_key=version_key)

    def _load_model_bytes(self, data: bytes, cfg_loaded: bool = True) -> None:
        """Load a model file's bytes, checked against the cfg when that was loaded too."""
        name, version, version_key = self.model_format
        what = f"'{self.name}' model file"
        payload = unseal(data, name, version, error=ModelFormatError, what=what, version_key=version_key)
        if not isinstance(payload, dict) or not isinstance(payload.get("cfg_sha256"), str):
            raise ModelFormatError(f"The {what} does not hold a model of {self.factory} and the digest of its "
                                   "settings; retrain the component.")
        try:
            state = self._read_model(payload)
        except ModelFormatError:
            raise
        except (KeyError, TypeError, ValueError) as err:
            raise ModelFormatError(f"The {what} is not a model file of {self.factory} (corrupt field: {err}); "
                                   "retrain the component.") from None
        if cfg_loaded:
            self._check_cfg_digest(payload["cfg_sha256"])
        self._reset(*state)

    def _load(self, cfg: Any, model: Optional[bytes]) -> None:
        """Restore the settings `cfg` and the model file's bytes, each None when excluded; on failure the component
        is left as it was."""
        previous = dict(self.cfg)
        try:
            if cfg is not None:
                self._restore_cfg(cfg)
            if model is not None:
                self._load_model_bytes(model, cfg is not None)
        except Exception:
            self.cfg = previous
            self._validate_settings()
            raise

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """Serialize the settings and the fitted model."""
        serialize = {"cfg": lambda: json.dumps(self.cfg), "model": self._model_bytes}
        # spaCy types the getters as returning bytes, but it msgpack-packs any value: the cfg is stored as a string.
        return util.to_bytes(serialize, exclude)  # type: ignore[arg-type]

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> Any:
        """Load from bytes written by `to_bytes`; on failure the component is left as it was."""
        try:
            fields = msgpack_loads_safe(bytes_data)
            missing = [key for key in ("cfg", "model") if key not in exclude and key not in fields]
            if missing:
                raise KeyError(f"no {' and no '.join(missing)} field")
            cfg = None if "cfg" in exclude else load_cfg_json(fields["cfg"], f"'{self.name}' bytes")
            self._load(cfg, None if "model" in exclude else fields["model"])
        except ModelFormatError:
            raise
        except Exception as err:
            raise ModelFormatError(f"'{self.name}': not a serialized {self.factory} component "
                                   f"({type(err).__name__}: {err})") from None
        return self

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> None:
        """Write `cfg` and `model` into a directory (created if needed), each through a temporary file."""
        serialize = {
            "cfg": lambda p: write_bytes_atomic(p, json.dumps(self.cfg, indent=2).encode("utf8")),
            "model": lambda p: write_bytes_atomic(p, self._model_bytes()),
        }
        util.to_disk(path, serialize, exclude)

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = tuple()) -> Any:
        """Load from a directory written by `to_disk`; on failure the component is left as it was."""
        path = Path(path)
        try:
            cfg = None if "cfg" in exclude else load_cfg_json((path / "cfg").read_bytes(), str(path / "cfg"))
            if "model" not in exclude:
                check_model_file(path / "model", ModelFormatError, f"'{self.name}' model file")
            self._load(cfg, None if "model" in exclude else (path / "model").read_bytes())
        except OSError as err:
            raise ModelFormatError(f"'{self.name}': cannot read {err.filename}: {err.strerror}") from None
        except ModelFormatError as err:
            if str(path) in str(err):
                raise
            raise ModelFormatError(f"{path}: {err}") from None
        return self

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), self.vocab, self.name, self.scorer, self.cfg, self.to_bytes()))


def _rebuild(cls: Type[TreeboostPipe], vocab: Vocab, name: str, scorer: Optional[Callable], cfg: Dict[str, Any],
             data: bytes) -> Any:
    pipe = cls.__new__(cls)
    pipe._setup(vocab, name, scorer, dict(cfg))
    return pipe.from_bytes(data)
