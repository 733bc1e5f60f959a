"""Settings and training-data errors as `ConfigValidationError`s, which `spacy train` prints with the setting's
location and without a traceback."""
import contextlib
import functools
import inspect
from typing import Any, Callable, Collection, Dict, Iterator, Optional, Sequence, Tuple

from confection import ConfigValidationError

from .params import Validated


def config_error(message: str, loc: Sequence[str]) -> ConfigValidationError:
    """A `ConfigValidationError` of `message` at `loc` (e.g. ["components", "textcat", "learner", "C"])."""
    return ConfigValidationError(errors=[{"loc": list(loc), "msg": message}])


def setting_error(err: Exception, block: Sequence[str], names: Collection[str] = ()) -> ConfigValidationError:
    """The `ConfigValidationError` of `err`, located at its setting when that is one of `names`, else at `block`."""
    if isinstance(err, ConfigValidationError):
        return err
    message = str(err)
    if isinstance(err, TypeError):
        message = f"a setting has the wrong type ({message}); compare the block with its documented settings"
    setting = getattr(err, "setting", None)
    return config_error(message, list(block) + ([setting] if isinstance(setting, str) and setting in names else []))


def _train_corpus_reader(nlp: Any) -> Optional[Tuple[str, Dict[str, Any]]]:
    """The name and the block of the reader that `[training] train_corpus` names in the pipeline's config."""
    try:
        config = nlp.config.interpolate()
        name = config["training"]["train_corpus"]
        block = functools.reduce(lambda b, part: b[part], name.split("."), config)
    except (KeyError, AttributeError, TypeError, ValueError):
        return None
    return (name, block) if isinstance(block, dict) else None


def corpus_reader_hint(nlp: Any) -> str:
    """A sentence naming the reader to use when spaCy's reader is given JSON lines; else ""."""
    found = None if nlp is None else _train_corpus_reader(nlp)
    if found is None:
        return ""
    name, block = found
    reader, path = block.get("@readers"), str(block.get("path"))
    if reader == "spacy_treeboost.JsonlCorpus.v1" or not path.endswith((".jsonl", ".jsonl.gz", ".json")):
        return ""
    return (f" The training corpus {path} is JSON lines, but its reader {reader} reads only .spacy files: set "
            f"@readers = \"spacy_treeboost.JsonlCorpus.v1\" in [{name}] "
            "(as the configs in configs/ do), or convert the file with python -m spacy_treeboost convert.")


@contextlib.contextmanager
def reported_at(block: Optional[Sequence[str]], names: Collection[str] = ()) -> Iterator[None]:
    """Raise a `ValueError` or `TypeError` as a `setting_error` at `block` (None: unchanged)."""
    try:
        yield
    except (ValueError, TypeError) as err:
        if block is None:
            raise
        raise setting_error(err, block, names) from None


def check_learner(learner: Any, block: Optional[Sequence[str]]) -> None:
    """Validate a learner's settings and its `estimator`'s, reported at `block` (None: plain `ValueError`s)."""
    for sub, part in ((), learner), (("estimator",), getattr(learner, "estimator", None)):
        if isinstance(part, Validated):
            with reported_at(None if block is None else [*block, *sub], part.get_params(deep=False)):
                part.validate_params()


def reporting(func: Callable[..., Any], name: str) -> Callable[..., Any]:
    """`func`, registered as `name`, with its errors as `ConfigValidationError`s: a setting's at the setting, an
    `OSError` at `path`."""
    names = list(inspect.signature(func).parameters)

    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            with reported_at([name], names):
                return func(*args, **kwargs)
        except OSError as err:
            raise config_error(str(err), [name, "path"]) from None

    functools.update_wrapper(build, func, updated=())
    return build


class DataError(ConfigValidationError):
    """Training data that a component cannot learn from, or a corpus that cannot be read."""

    def __init__(self, message: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("title", "The training data cannot be used")
        kwargs.setdefault("desc", message)
        super().__init__(**kwargs)

    def __str__(self) -> str:
        return self.desc or super().__str__()


def training_corpus(nlp: Any) -> Optional[str]:
    """The path of the training corpus of a pipeline (`[training] train_corpus`), or None."""
    found = None if nlp is None else _train_corpus_reader(nlp)
    path = None if found is None else found[1].get("path")
    return None if path is None else str(path)


@contextlib.contextmanager
def data_errors(corpus: Optional[str]) -> Iterator[None]:
    """Raise a `ValueError` as a `DataError` whose message starts with the `corpus` file."""
    try:
        yield
    except ConfigValidationError:
        raise
    except ValueError as err:
        raise DataError(f"{corpus}: {err}" if corpus else str(err)) from err
