"""Hyperparameters as scikit-learn reads them (`get_params`, `set_params`, `clone`) and their checks against a
class's `_parameter_constraints` table, which raise an `InvalidSettingError` naming the setting."""
import copy
import inspect
import math
from typing import Any, Callable, ClassVar, Dict, List, Literal, Mapping, NamedTuple, Optional, Sequence, TypeVar

import numpy

from .exceptions import InvalidSettingError

P = TypeVar("P", bound="Params")


class Params:
    """`get_params` / `set_params` from the signature of `__init__`."""

    @classmethod
    def _param_names(cls) -> List[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.name != "self" and p.kind != p.VAR_KEYWORD]

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The hyperparameters by name; with `deep`, also a nested estimator's as `name__param`."""
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
                raise InvalidSettingError(f"{type(self).__name__} has no parameter {name!r}; it has "
                                          f"{', '.join(names)}", setting=name, value=value)
            if sub:
                getattr(self, name).set_params(**{sub: value})
            else:
                setattr(self, name, value)
        return self


def clone(estimator: P) -> P:
    """An unfitted estimator with the same parameters (a nested estimator cloned in turn), as scikit-learn's."""
    params = estimator.get_params(deep=False)
    return type(estimator)(**{name: clone(value) if isinstance(value, Params) else copy.deepcopy(value)
                              for name, value in params.items()})


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


class Constraint:
    """One kind of value a parameter accepts, an entry of a `_parameter_constraints` table.

    test (Callable[[Any], bool]): Whether a value is of this kind.
    text (str): The accepted values, phrased as a fix ("use ...", "choose one of ...").
    """

    def __init__(self, test: Callable[[Any], bool], text: str) -> None:
        self.test, self.text = test, text


class Options(Constraint):
    """One of a fixed set of values (strings, or None)."""

    def __init__(self, *values: Any) -> None:
        self.values = values
        super().__init__(lambda value: any(value is v or (type(value) is type(v) and value == v) for v in values),
                         f"choose one of {', '.join(str(v) for v in values)}")


class Interval(Constraint):
    """A whole number ("int") or finite real number ("real", whole numbers too) in a range whose bounds (None: none)
    belong to it as `closed` says: "both", "left", "right" or "neither"."""

    def __init__(self, kind: Literal["int", "real"], low: Optional[float], high: Optional[float],
                 closed: Literal["both", "left", "right", "neither"] = "both") -> None:
        self.kind, self.low, self.high, self.closed = kind, low, high, closed
        low_in, high_in = closed in ("both", "left"), closed in ("both", "right")
        types = (int, numpy.integer) if kind == "int" else (int, float, numpy.integer, numpy.floating)

        def test(value: Any) -> bool:
            if isinstance(value, (bool, numpy.bool_)) or not isinstance(value, types) or not math.isfinite(value):
                return False
            return bool((low is None or value > low or (value == low and low_in))
                        and (high is None or value < high or (value == high and high_in)))

        what = "a whole number" if kind == "int" else "a number"
        if low is not None and high is not None and low_in and high_in:
            text = f"use {what} from {_number(low)} to {_number(high)}"
        else:
            bounds = ([f"{'>=' if low_in else '>'} {_number(low)}"] if low is not None else []) + \
                     ([f"{'<=' if high_in else '<'} {_number(high)}"] if high is not None else [])
            text = f"use {what} {' and '.join(bounds)}".rstrip()
        super().__init__(test, text)


class Boolean(Constraint):
    """True or False."""

    def __init__(self) -> None:
        super().__init__(lambda value: isinstance(value, (bool, numpy.bool_)), "use true or false")


class Text(Constraint):
    """A non-empty string."""

    def __init__(self) -> None:
        super().__init__(lambda value: isinstance(value, str) and bool(value), "use a non-empty string")


class Items(Constraint):
    """A non-empty list or tuple whose every item satisfies `item`."""

    def __init__(self, item: Constraint) -> None:
        self.item = item
        super().__init__(lambda value: isinstance(value, (list, tuple)) and len(value) > 0
                         and all(item.test(v) for v in value),
                         f"list one or more values ({item.text.replace('use ', '', 1)})")


class Instance(Constraint):
    """An instance of `cls`, which a user gives as `what` (e.g. 'a "spacy_treeboost.SubtreeBoost.v1" block')."""

    def __init__(self, cls: type, what: str) -> None:
        self.cls = cls
        super().__init__(lambda value: isinstance(value, cls), f"use {what}")


class Rule(NamedTuple):
    """A parameter's entry in a `_parameter_constraints` table.

    accepts (Sequence[Optional[Constraint]]): The kinds of value accepted; None in it accepts None.
    hint (Optional[str]): How to fix a bad value; None derives it from `accepts`.
    """

    accepts: Sequence[Optional[Constraint]]
    hint: Optional[str] = None

    def allows(self, value: Any) -> bool:
        return any(value is None if c is None else c.test(value) for c in self.accepts)

    def fix(self) -> str:
        if self.hint is not None:
            return self.hint
        described = [c.text for c in self.accepts if c is not None]
        return ", or ".join(described) + (", or None" if None in self.accepts else "")


def rule(*accepts: Optional[Constraint], hint: Optional[str] = None) -> Rule:
    """A `Rule` accepting any of `accepts`."""
    return Rule(accepts, hint)


def shown(value: Any) -> str:
    """A value as a message shows it: an estimator by its class, anything else by its repr."""
    if hasattr(value, "get_params") and not isinstance(value, type):
        return f"{type(value).__name__}(...)"
    return repr(value)


def invalid_setting(name: str, value: Any, fix: str) -> InvalidSettingError:
    """The error "name=value is invalid: fix" of a setting holding a value it does not accept."""
    return InvalidSettingError(f"{name}={shown(value)} is invalid: {fix}", setting=name, value=value)


def validate_params(params: Mapping[str, Any], constraints: Mapping[str, Rule]) -> None:
    """Check parameters against a constraint table, raising `invalid_setting` for the first one out of its rule."""
    for name, entry in constraints.items():
        if name in params and not entry.allows(params[name]):
            raise invalid_setting(name, params[name], entry.fix())


class Validated(Params):
    """Parameters with a `_parameter_constraints` table, checked by the public `validate_params()`."""

    _parameter_constraints: ClassVar[Dict[str, Rule]] = {}

    def validate_params(self) -> None:
        """Check the parameters against the class's constraint table, then how they combine."""
        validate_params(self.get_params(deep=False), self._parameter_constraints)
        self._validate_combination()

    def _validate_combination(self) -> None:
        """Checks that involve several parameters (none by default)."""
