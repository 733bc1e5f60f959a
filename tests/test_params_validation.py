"""The one settings validator: every estimator's `_parameter_constraints` table, checked by `validate_params`."""
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spacy_treeboost.learning.corrective import CorrectiveBoostClassifier
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.nmtf.factorization import MFLK
from spacy_treeboost.nmtf.hybrid import SSMFLKNaiveBayes
from spacy_treeboost.nmtf.hybrid import SSMFLKSelfTrained
from spacy_treeboost.nmtf.factorization import SSMFLK
from spacy_treeboost.exceptions import InvalidSettingError
from spacy_treeboost.params import Boolean, Instance, Interval, Items, Options, Text, Validated, rule, validate_params
from spacy_treeboost.pipeline.treeboost_textcat import SETTING_CONSTRAINTS, TreeBoostTextCategorizer

ESTIMATORS = [TreeBoostClassifier, SubtreeLinearClassifier, CorrectiveBoostClassifier, MFLK, SSMFLK, SSMFLKNaiveBayes,
              SSMFLKSelfTrained]
# Values no constraint of any table accepts.
ALWAYS_BAD = st.one_of(st.just(float("nan")), st.just(float("inf")), st.just(-math.inf), st.just(object()),
                       st.just({"a": 1}), st.just(b"bytes"))


def valid_values(constraint):
    """Values a constraint accepts, drawn from its declared bounds and options (not from its check)."""
    if constraint is None:
        return st.none()
    if isinstance(constraint, Options):
        return st.sampled_from(constraint.values)
    if isinstance(constraint, Boolean):
        return st.booleans()
    if isinstance(constraint, Text):
        return st.text(min_size=1, max_size=10)
    if isinstance(constraint, Items):
        return st.lists(valid_values(constraint.item), min_size=1, max_size=4)
    if isinstance(constraint, Instance):
        return st.builds(constraint.cls)
    low = constraint.low if constraint.low is not None else -1e9
    high = constraint.high if constraint.high is not None else 1e9
    if constraint.kind == "int":
        low_i = math.ceil(low) + (1 if constraint.closed in ("right", "neither") and float(low).is_integer() else 0)
        high_i = math.floor(high) - (1 if constraint.closed in ("left", "neither") and float(high).is_integer() else 0)
        return st.integers(low_i, high_i)
    return st.floats(low, high, exclude_min=constraint.closed in ("right", "neither"),
                     exclude_max=constraint.closed in ("left", "neither"), allow_nan=False)


def invalid_values(entry):
    """Values outside every constraint of a rule: out of range, of the wrong type, or not an option."""
    out = [ALWAYS_BAD]
    if not any(isinstance(c, Text) for c in entry.accepts):
        out.append(st.just("not-an-option-%"))
    if None not in entry.accepts and not any(isinstance(c, Options) and None in c.values for c in entry.accepts):
        out.append(st.none())
    for c in entry.accepts:
        if isinstance(c, Interval):
            if c.low is not None:
                out.append(st.floats(-1e12, c.low, exclude_max=c.closed in ("both", "left"), allow_nan=False)
                           if c.kind == "real" else st.integers(-10 ** 9, math.ceil(c.low) - 1))
            if c.high is not None:
                out.append(st.floats(c.high, 1e12, exclude_min=c.closed in ("both", "right"), allow_nan=False)
                           if c.kind == "real" else st.integers(math.floor(c.high) + 1, math.floor(c.high) + 10 ** 9))
            if c.kind == "int":
                out.append(st.floats(0.5, 10.5).filter(lambda v: not float(v).is_integer()))
    return st.one_of(out)


def test_every_estimator_declares_a_constraint_for_each_checked_parameter():
    for cls in ESTIMATORS:
        assert issubclass(cls, Validated)
        names = set(cls._param_names())
        table = cls._parameter_constraints
        assert table and set(table) <= names, cls
        assert set(SETTING_CONSTRAINTS) <= set(TreeBoostTextCategorizer.__init__.__code__.co_varnames)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_invalid_values_raise_a_value_error_naming_the_parameter(data):
    cls = data.draw(st.sampled_from(ESTIMATORS))
    name = data.draw(st.sampled_from(sorted(cls._parameter_constraints)))
    entry = cls._parameter_constraints[name]
    value = data.draw(invalid_values(entry))
    estimator = cls(**{name: value})
    with pytest.raises(InvalidSettingError) as err:
        estimator.validate_params()
    assert str(err.value).startswith(f"{name}={value!r} is invalid: "), str(err.value)
    assert err.value.setting == name and err.value.value is value


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_valid_values_never_raise(data):
    cls = data.draw(st.sampled_from(ESTIMATORS))
    params = {}
    for name, entry in cls._parameter_constraints.items():
        if data.draw(st.booleans()):
            params[name] = data.draw(st.one_of([valid_values(c) for c in entry.accepts]))
    if cls is SubtreeLinearClassifier and params.get("backend", None) == "local":
        params["n_workers"] = 1
    if cls is SubtreeLinearClassifier and params.get("ray_address") is not None:
        params["backend"] = "ray"
    if cls is TreeBoostClassifier:
        params.update(n_rounds=min(params.get("n_rounds", 100), 1000), max_cache_mb=None)
    cls(**params).validate_params()


@given(value=st.one_of(st.integers(-50, 50), st.floats(allow_nan=True), st.booleans(), st.text(max_size=3),
                       st.none()))
def test_interval_agrees_with_its_bounds(value):
    entry = rule(Interval("int", 2, 20), None)
    expected = value is None or (type(value) is int and 2 <= value <= 20)
    if expected:
        validate_params({"cv": value}, {"cv": entry})
    else:
        with pytest.raises(ValueError, match=r"^cv=.* is invalid: use a whole number from 2 to 20, or None$"):
            validate_params({"cv": value}, {"cv": entry})


def test_messages_say_what_is_wrong_and_how_to_fix_it():
    table = {"loss": rule(Options("logistic", "squared_hinge")), "tol": rule(Interval("real", 0, 1, "neither")),
             "Cs": rule(Items(Interval("real", 0, None, "neither")))}
    with pytest.raises(ValueError, match=r"^loss='hinge' is invalid: choose one of logistic, squared_hinge$"):
        validate_params({"loss": "hinge"}, table)
    with pytest.raises(ValueError, match=r"^tol=1 is invalid: use a number > 0 and < 1$"):
        validate_params({"tol": 1}, table)
    with pytest.raises(ValueError, match=r"^Cs=\[\] is invalid: list one or more values \(a number > 0\)$"):
        validate_params({"Cs": []}, table)
    validate_params({"loss": "logistic", "tol": 0.5, "Cs": (1, 2.5), "other": "unchecked"}, table)
