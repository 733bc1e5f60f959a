"""The exceptions that are part of the public API (each error of bad input is a `ValueError` subclass)."""


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before `fit`: it has nothing to predict with.

    As scikit-learn's `sklearn.exceptions.NotFittedError`, it is both a `ValueError` and an `AttributeError`, so
    code that catches either (or scikit-learn's own checks) handles it.
    """
