"""The exceptions that are part of the public API (each error of bad input is a `ValueError` subclass)."""
import functools
from typing import Any, Tuple


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before `fit`: a `ValueError` and an `AttributeError`, as scikit-learn's."""


class InvalidSettingError(ValueError):
    """A setting holds a value it does not accept; it carries the `setting`, so that a config error is located at
    it, and the `value`."""

    def __init__(self, message: str, *, setting: str, value: Any = None) -> None:
        super().__init__(message)
        self.setting = setting
        self.value = value

    def __reduce__(self) -> Tuple[Any, ...]:
        return functools.partial(InvalidSettingError, setting=self.setting, value=self.value), (str(self),)
