"""Hyperparameters as scikit-learn reads them: `get_params(deep)` and `set_params`.

An estimator's parameters are the keyword arguments of its `__init__`, stored
unchanged under the same names, so `sklearn.base.clone` can rebuild it.
"""
import inspect
from typing import Any, Dict, List


class Params:
    """`get_params` / `set_params` from the signature of `__init__`."""

    @classmethod
    def _param_names(cls) -> List[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]

    def _store_params(self, values: Dict[str, Any]) -> None:
        """Store every `__init__` argument in `values` unchanged under its own name; call as
        `self._store_params(locals())` (arguments forwarded to a parent class's `__init__` are stored there)."""
        for name in self._param_names():
            if name in values:
                setattr(self, name, values[name])

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

    def set_params(self, **params: Any) -> "Params":
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
