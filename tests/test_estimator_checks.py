"""The scikit-learn estimator contract of the learners, checked with `sklearn.utils.estimator_checks`.

Run as they are (they only construct, clone and set parameters):
check_get_params_invariance, check_set_params, check_no_attributes_set_in_init,
check_parameters_default_constructible, check_estimator_cloneable, check_estimator_repr,
check_do_not_raise_errors_in_init_or_set_params, check_mixin_order, check_estimator_tags_renamed.

Rewritten here for the learners' own input (a `Forest` of trees), because scikit-learn's versions fit on
random numeric matrices: check_estimators_overwrite_params, check_dont_overwrite_parameters,
check_estimators_fit_returns_self, check_estimators_pickle, check_fit_idempotent, plus `clone`,
`pickle` and `copy.deepcopy` of fitted and unfitted estimators.

Not applicable:
- every check that fits or predicts on a numeric matrix X (check_fit2d_*, check_fit1d,
  check_estimators_dtypes, check_estimators_nan_inf, check_estimators_empty_data_messages,
  check_classifiers_*, check_supervised_y_*, check_n_features_in*, check_methods_*_invariance,
  check_dict_unchanged, check_estimator_sparse_*, check_dtype_object, check_complex_data,
  check_f_contiguous_array_estimator, check_readonly_memmap_input, check_sample_weights_*,
  check_pipeline_consistency, check_decision_proba_consistency, check_array_api_*): the rule
  classifiers take a `Forest` of labeled ordered trees, not a matrix;
- check_valid_tag_types, check_estimator_sparse_tag, check_positive_only_tag_during_fit and the
  set_output checks: they need `__sklearn_tags__` / `set_output`, which only exist by inheriting
  from scikit-learn, not a dependency of this package;
- check_estimators_unfitted and check_fit_check_is_fitted: they call scikit-learn's
  `check_is_fitted`, which needs a `BaseEstimator`; the learners raise this package's
  `NotFittedError` (a ValueError and AttributeError, as scikit-learn's) instead (tested below);
- check_param_validation: it needs scikit-learn's `_parameter_constraints`; every learner
  validates its parameters in `fit` with a message naming the parameter (tested in each
  learner's test module).
"""
import copy
import pickle

import joblib
import numpy
import pytest
from sklearn.base import clone
from sklearn.utils import estimator_checks

from reference import random_binary_classes, random_trees
from spacy_treeboost.learning.corrective import CorrectiveBoostClassifier
from spacy_treeboost.learning.learner import TreeBoostClassifier
from spacy_treeboost.learning.subtree_linear import SubtreeLinearClassifier
from spacy_treeboost.trees.forest import Forest
from spacy_treeboost.exceptions import NotFittedError
from estimator_check_names import SKLEARN_CHECKS

SMALL_BOOSTER = dict(n_rounds=4, max_pattern_size=2)
ESTIMATORS = {
    "TreeBoostClassifier": lambda: TreeBoostClassifier(),
    "TreeBoostClassifier-bact": lambda: TreeBoostClassifier("bact", boosting="arcgv", **SMALL_BOOSTER),
    "SubtreeLinearClassifier": lambda: SubtreeLinearClassifier(),
    "SubtreeLinearClassifier-C": lambda: SubtreeLinearClassifier(max_pattern_size=2, min_support=1, C=1.0, cv=2),
    "CorrectiveBoostClassifier": lambda: CorrectiveBoostClassifier(),
    "CorrectiveBoostClassifier-nested": lambda: CorrectiveBoostClassifier(
        TreeBoostClassifier("frequency", **SMALL_BOOSTER), C=1.0),
}
# the estimators that `fitted` trains quickly (the defaults run 100-1000 rounds or cross-validate)
FITTABLE = ["TreeBoostClassifier-bact", "SubtreeLinearClassifier-C", "CorrectiveBoostClassifier-nested"]

def training_data(name: str):
    """The positional arguments of `fit` for the named estimator."""
    f = Forest.from_trees(random_trees(7, min_docs=12, max_docs=12, max_nodes=8)[0])
    return f, random_binary_classes(len(f), 7)


def outputs(name: str, est):
    """What a fitted estimator computes, for comparing copies."""
    X = training_data(name)[0]
    return [est.decision_function(X), numpy.asarray(est.predict(X)), est.rules_.to_bytes()]


def assert_same_outputs(a, b):
    for x, y in zip(a, b):
        if isinstance(x, bytes):
            assert x == y
        else:
            numpy.testing.assert_array_equal(x, y)


def fitted(name: str):
    est = ESTIMATORS[name]()
    assert est.fit(*training_data(name)) is est
    return est


@pytest.mark.parametrize("check", SKLEARN_CHECKS)
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_scikit_learn_checks(name, check):
    getattr(estimator_checks, check)(name, ESTIMATORS[name]())


@pytest.mark.parametrize("name", FITTABLE)
def test_fit_overwrites_no_parameter_and_sets_only_trailing_underscore_attributes(name):
    """check_estimators_overwrite_params and check_dont_overwrite_parameters on the learner's own input."""
    est = ESTIMATORS[name]()
    params = est.get_params()
    hashes = {k: joblib.hash(v) for k, v in params.items()}
    before = dict(vars(est))
    est.fit(*training_data(name))
    assert {k: joblib.hash(v) for k, v in est.get_params().items()} == hashes
    added = set(vars(est)) - set(before)
    assert added and all(k.endswith("_") or k.startswith("_") for k in added), added
    assert all(vars(est)[k] is v for k, v in before.items())


@pytest.mark.parametrize("name", FITTABLE)
def test_clone_pickle_and_deepcopy_of_fitted_and_unfitted_estimators(name):
    est = fitted(name)
    expected = outputs(name, est)
    for copied in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        assert type(copied) is type(est) and copied.get_params(deep=False).keys() == est.get_params(deep=False).keys()
        assert_same_outputs(outputs(name, copied), expected)
    fresh = clone(est)
    assert type(fresh) is type(est) and not any(k.endswith("_") for k in vars(fresh))
    assert {k: joblib.hash(v) for k, v in fresh.get_params().items()} == {
        k: joblib.hash(v) for k, v in est.get_params().items()}
    for k, v in fresh.get_params(deep=False).items():
        if hasattr(v, "get_params"):
            assert v is not est.get_params(deep=False)[k]
    # the clone refits to the same model (check_fit_idempotent)
    assert_same_outputs(outputs(name, fresh.fit(*training_data(name))), expected)
    unfitted = ESTIMATORS[name]()
    for copied in (pickle.loads(pickle.dumps(unfitted)), copy.deepcopy(unfitted), clone(unfitted)):
        assert type(copied) is type(unfitted) and vars(copied).keys() == vars(unfitted).keys()
        assert_same_outputs(outputs(name, copied.fit(*training_data(name))), expected)


def test_pickled_booster_predicts_but_keeps_no_search_space():
    est = fitted("TreeBoostClassifier-bact")
    assert hasattr(est, "space_")
    again = pickle.loads(pickle.dumps(est))
    assert not hasattr(again, "space_")


def test_nested_parameters_reach_the_inner_estimator():
    est = CorrectiveBoostClassifier(TreeBoostClassifier("frequency", **SMALL_BOOSTER), C=1.0)
    params = est.get_params(deep=True)
    assert params["estimator__n_rounds"] == 4 and params["C"] == 1.0
    assert "estimator__n_rounds" not in est.get_params(deep=False)
    est.set_params(estimator__n_rounds=2, C=0.5)
    assert est.estimator.n_rounds == 2 and est.C == 0.5
    with pytest.raises(ValueError, match="has no parameter 'rounds'"):
        est.set_params(rounds=3)


@pytest.mark.parametrize("name", FITTABLE)
def test_unfitted_rule_classifiers_refuse_to_predict(name):
    est = ESTIMATORS[name]()
    with pytest.raises(NotFittedError, match="not fitted yet; call fit first"):
        est.decision_function(training_data(name)[0])
    for caught in (ValueError, AttributeError):
        with pytest.raises(caught, match="not fitted yet"):
            est.decision_function(training_data(name)[0])
