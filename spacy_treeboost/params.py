"""Hyperparameters as scikit-learn reads them: `get_params(deep)` and `set_params`.

An estimator's parameters are the arguments of its explicit `__init__` signature, which
stores each unchanged under its own name (`self.name = name`), so `sklearn.base.clone`
can rebuild it.
"""
import inspect
from typing import Any, Dict, List, TypeVar

P = TypeVar("P", bound="Params")


class Params:
    """`get_params` / `set_params` from the signature of `__init__`."""

    @classmethod
    def _param_names(cls) -> List[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The hyperparameters, as scikit-learn's `get_params`.

        deep (bool): Also list a nested estimator's parameters as `name__param`.
        RETURNS (Dict[str, Any]): Parameter name to value.
        """
        out = {}
        for name in self._param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update({f"{name}__{k}": v for k, v in value.get_params().items()})
            out[name] = value
        return out

    def set_params(self: P, **params: Any) -> P:
        """Set hyperparameters (`estimator__name` reaches a nested estimator). RETURNS: self."""
        names = self._param_names()
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in names:
                raise ValueError(f"{type(self).__name__} has no parameter {name!r}; it has {', '.join(names)}")
            if sub:
                getattr(self, name).set_params(**{sub: value})
            else:
                setattr(self, name, value)
        return self
