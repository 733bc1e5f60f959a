"""What the NMTF modules share: the class ids, and scipy.sparse imported on first use."""
from importlib import import_module
from typing import TYPE_CHECKING, Any


class _Lazy:
    """A module imported on first use: spaCy imports every factory of every plugin when a `Language`
    is created, and scipy should load only when an NMTF model is fitted or used."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(import_module(self._name), attr)


if TYPE_CHECKING:
    import scipy.sparse as sp
else:
    sp = _Lazy("scipy.sparse")

N_CLASSES = 2
POSITIVE, NEGATIVE = 0, 1
UNLABELLED = -1
