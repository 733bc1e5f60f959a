"""Saving and loading the components: `cfg` (JSON) and `model` (sealed msgpack holding the digest of its `cfg`). A
failed load raises `ModelFormatError` and leaves the component as it was."""
import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from spacy import util
from spacy.vocab import Vocab

from ..files import (ModelFormatError, load_cfg_json, msgpack_loads_safe, read_cfg_file, read_model_file,
                     settings_digest, write_bytes_atomic)


class ComponentFiles:
    """Serialization, pickling, labels and the no-op gradient hooks of a component, which provides `factory`,
    `name`, `cfg`, `vocab`, `scorer`, `_validate_settings()`, `_model_bytes()` and `_load_model_bytes()`."""

    factory: str
    name: str
    cfg: Dict[str, Any]
    vocab: Vocab
    scorer: Optional[Callable]

    def _validate_settings(self) -> None:
        raise NotImplementedError

    @property
    def labels(self) -> Tuple[str, ...]:
        """RETURNS (Tuple[str, ...]): The labels the component assigns."""
        return tuple(self.cfg["labels"])

    @property
    def label_data(self) -> List[str]:
        """RETURNS (List[str]): The labels, as `spacy init labels` stores them."""
        return list(self.cfg["labels"])

    def use_params(self, params: dict) -> Iterator[None]:
        yield

    def finish_update(self, sgd: Any = None) -> None:
        pass

    def _not_trained(self) -> ValueError:
        return ValueError(f"'{self.name}' is not trained: run `nlp.initialize` and train it (spacy train does both), "
                          "or load a trained pipeline.")

    def _model_bytes(self) -> bytes:
        raise NotImplementedError

    def _load_model_bytes(self, data: bytes, cfg_loaded: bool = True) -> None:
        raise NotImplementedError

    def _restore_cfg(self, cfg: Dict[str, Any]) -> None:
        if not isinstance(cfg, dict):
            raise ModelFormatError(f"'{self.name}': the stored cfg is not a JSON object.")
        unknown = sorted(set(cfg) - set(self.cfg))
        if unknown:
            raise ModelFormatError(f"'{self.name}': the stored cfg has unknown settings {unknown}; it comes from "
                                   "another component or another spacy-treeboost (a learner's settings belong in its learner "
                                   "block): retrain the pipeline with this one.")
        previous = dict(self.cfg)
        self.cfg.update(cfg)
        try:
            self._validate_settings()
            if not isinstance(self.cfg["labels"], list) or not all(isinstance(l, str) for l in self.cfg["labels"]):
                raise ValueError(f"labels={self.cfg['labels']!r} is invalid: use a list of strings")
        except (ValueError, TypeError, KeyError) as err:
            self._put_back(previous)
            raise ModelFormatError(f"'{self.name}': the stored cfg is invalid: {err}") from None

    def _check_cfg_digest(self, digest: str) -> None:
        if digest != settings_digest(self.cfg):
            raise ModelFormatError(
                f"'{self.name}': the cfg does not hold the settings the model was saved with (it was edited or "
                "damaged, or belongs to another model); restore both files from the same save.")

    def _put_back(self, cfg: Dict[str, Any]) -> None:
        self.cfg = cfg
        self._validate_settings()

    def to_bytes(self, *, exclude: Iterable[str] = tuple()) -> bytes:
        """Serialize the settings and the fitted model."""
        serialize = {"cfg": lambda: json.dumps(self.cfg), "model": self._model_bytes}
        # spaCy types the getters as returning bytes, but it msgpack-packs any value: the cfg is stored as a string.
        return util.to_bytes(serialize, exclude)  # type: ignore[arg-type]

    def from_bytes(self, bytes_data: bytes, *, exclude: Iterable[str] = tuple()) -> Any:
        """Load from bytes written by `to_bytes`; on failure the component is left as it was."""
        cfg_loaded = "cfg" not in exclude
        deserialize = {"cfg": lambda b: self._restore_cfg(load_cfg_json(b, f"'{self.name}' bytes")),
                       "model": lambda b: self._load_model_bytes(b, cfg_loaded)}
        previous = dict(self.cfg)
        try:
            fields = msgpack_loads_safe(bytes_data)
            missing = [key for key in deserialize if key not in exclude and key not in fields]
            if missing:
                raise KeyError(f"no {' and no '.join(missing)} field")
            for key, setter in deserialize.items():
                if key not in exclude:
                    setter(fields[key])
        except Exception as err:
            self._put_back(previous)
            if isinstance(err, ModelFormatError):
                raise
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
        cfg_loaded = "cfg" not in exclude
        deserialize = {
            "cfg": lambda p: self._restore_cfg(read_cfg_file(p, self.name)),
            "model": lambda p: self._load_model_bytes(read_model_file(p, self.name), cfg_loaded),
        }
        previous = dict(self.cfg)
        try:
            util.from_disk(path, deserialize, exclude)
        except ModelFormatError as err:
            self._put_back(previous)
            if str(path) in str(err):
                raise
            raise ModelFormatError(f"{path}: {err}") from None
        return self

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), self.vocab, self.name, self.scorer, self.to_bytes()))


def _rebuild(cls: type, vocab: Vocab, name: str, scorer: Optional[Callable], data: bytes) -> Any:
    return cls(vocab, None, name, scorer=scorer).from_bytes(data)
