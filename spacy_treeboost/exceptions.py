"""The exceptions that are part of the public API (each error of bad input is a `ValueError` subclass)."""
from typing import Any, Tuple


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before `fit`: it has nothing to predict with.

    As scikit-learn's `sklearn.exceptions.NotFittedError`, it is both a `ValueError` and an `AttributeError`, so
    code that catches either (or scikit-learn's own checks) handles it.
    """


class InvalidSettingError(ValueError):
    """A setting (a hyperparameter or a component setting) holds a value it does not accept.

    As scikit-learn's `InvalidParameterError`, it is a `ValueError`; it also carries which setting failed, so
    that a config error can be located at the setting without reading the message.

    message (str): What is wrong and how to fix it, e.g. "C=0 is invalid: use a number from 1e-06 to 1e+06".
    setting (str): The setting's name, e.g. "C".
    value (Any): The value refused.
    """

    def __init__(self, message: str, *, setting: str, value: Any = None) -> None:
        super().__init__(message)
        self.setting = setting
        self.value = value

    def __reduce__(self) -> Tuple[Any, ...]:
        return _invalid_setting, (str(self), self.setting, self.value)


def _invalid_setting(message: str, setting: str, value: Any) -> InvalidSettingError:
    return InvalidSettingError(message, setting=setting, value=value)
