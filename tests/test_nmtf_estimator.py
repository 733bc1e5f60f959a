"""The scikit-learn estimator contract of MFLK and SSMFLK.

scikit-learn's own checks run in two groups: the construct/clone/parameter checks on every
configuration, and the checks that fit and predict on scikit-learn's random non-negative
matrices on the estimators without a lexicon (alpha = 0), since a lexicon prior has one row per
word and those checks vary the number of words. Not applicable: the classifier checks
(check_classifiers_*, check_class_weight_*, multi-output/multilabel, one-label and regression-target
checks) expect a classifier that learns classes from y, whereas MFLK's classes are fixed by the
lexicon (0 positive, 1 negative) and y only marks labelled documents; the error-message checks
(check_fit2d_1sample/1feature/predict1d, check_estimators_empty_data_messages,
check_estimators_nan_inf, check_complex_data) look for scikit-learn's wording, while the NMTF
errors say what is wrong in their own words (tested in test_nmtf.py); check_estimators_unfitted and
check_is_fitted expect scikit-learn's BaseEstimator (this package's NotFittedError, a ValueError and
AttributeError as scikit-learn's, is raised); DataFrame/not-an-array inputs and set_output need scikit-learn's validation
helpers, not a dependency of this package.
"""
import copy
import pickle

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import estimator_checks

from spacy_treeboost.nmtf import MFLK, SSMFLK

from estimator_check_names import SKLEARN_CHECKS

T8_COUNTS = np.array([[2, 0, 1, 1], [0, 2, 0, 1], [1, 0, 0, 0], [1, 1, 1, 2]], dtype=float)  # words x documents
T8_F0 = np.array([[1, 0], [0, 1], [1, 0], [0, 0]], dtype=float)
T8_X = sp.csr_matrix((T8_COUNTS / np.linalg.norm(T8_COUNTS, axis=0)).T)  # documents x words
T8_Y = np.array([0, -1, -1, 1])
PRINTED = dict(update="as_printed", init="kmeans", prior_scale="one", max_iter=5)

ESTIMATORS = {
    "MFLK": lambda: MFLK(lexicon_prior=T8_F0),
    "MFLK-printed": lambda: MFLK(lexicon_prior=T8_F0, **PRINTED),
    "MFLK-no-lexicon": lambda: MFLK(alpha=0.0, max_iter=5),
    "SSMFLK": lambda: SSMFLK(lexicon_prior=T8_F0),
    "SSMFLK-printed": lambda: SSMFLK(beta=0.5, beta_scale="one", label_start=0.0, lexicon_prior=T8_F0, **PRINTED),
    "SSMFLK-no-lexicon": lambda: SSMFLK(alpha=0.0, max_iter=5),
}
FITTING_CHECKS = [
    "check_fit_non_negative",
    "check_estimators_fit_returns_self",
    "check_estimators_overwrite_params",
    "check_dont_overwrite_parameters",
    "check_dict_unchanged",
    "check_estimators_pickle",
    "check_fit_idempotent",
    "check_fit_check_is_fitted",
    "check_estimator_sparse_matrix",
    "check_estimator_sparse_array",
    "check_f_contiguous_array_estimator",
    "check_readonly_memmap_input",
    "check_methods_subset_invariance",
    "check_methods_sample_order_invariance",
    "check_pipeline_consistency",
    "check_requires_y_none",
    "check_valid_tag_types",
    "check_estimator_sparse_tag",
]


def fit_args(name):
    return (T8_X, T8_Y) if name.startswith("SSMFLK") else (T8_X,)


def outputs(est):
    return [est.F_, est.S_, est.G_, est.labels_, est.predict_proba(T8_X), est.decision_function(T8_X),
            np.asarray(est.objective_)]


def assert_same_outputs(a, b):
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def param_hashes(est):
    return {k: joblib.hash(v) for k, v in est.get_params().items()}


@pytest.mark.parametrize("check", SKLEARN_CHECKS)
@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_scikit_learn_construction_checks(name, check):
    getattr(estimator_checks, check)(name, ESTIMATORS[name]())


@pytest.mark.parametrize("check", FITTING_CHECKS)
@pytest.mark.parametrize("name", ["MFLK-no-lexicon", "SSMFLK-no-lexicon"])
def test_scikit_learn_fitting_checks(name, check):
    getattr(estimator_checks, check)(name, ESTIMATORS[name]())


def test_scikit_learn_dtype_check_on_mflk():
    """check_estimators_dtypes fits with y in {0, 1, 2}, which SSMFLK refuses as labels and MFLK ignores."""
    estimator_checks.check_estimators_dtypes("MFLK", MFLK(alpha=0.0, max_iter=5))


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_fit_sets_only_underscore_attributes_and_keeps_parameters(name):
    est = ESTIMATORS[name]()
    hashes, before = param_hashes(est), dict(vars(est))
    assert est.fit(*fit_args(name)) is est
    assert param_hashes(est) == hashes
    added = set(vars(est)) - set(before)
    assert added and all(k.endswith("_") or k.startswith("_") for k in added), added
    assert all(vars(est)[k] is v for k, v in before.items())


@pytest.mark.parametrize("name", list(ESTIMATORS))
def test_clone_pickle_and_deepcopy_of_fitted_and_unfitted_estimators(name):
    est = ESTIMATORS[name]().fit(*fit_args(name))
    expected = outputs(est)
    for copied in (pickle.loads(pickle.dumps(est)), copy.deepcopy(est)):
        assert type(copied) is type(est) and param_hashes(copied) == param_hashes(est)
        assert_same_outputs(outputs(copied), expected)
        # a copy resumes iterating from the same state as the original
        assert_same_outputs(outputs(copied.iterate(3)), outputs(copy.deepcopy(est).iterate(3)))
    fresh = clone(est)
    assert type(fresh) is type(est) and not any(k.endswith("_") or k.startswith("_") for k in vars(fresh))
    assert param_hashes(fresh) == param_hashes(est)
    assert_same_outputs(outputs(fresh.fit(*fit_args(name))), expected)
    unfitted = ESTIMATORS[name]()
    for copied in (pickle.loads(pickle.dumps(unfitted)), copy.deepcopy(unfitted), clone(unfitted)):
        assert type(copied) is type(unfitted) and vars(copied).keys() == vars(unfitted).keys()
        assert_same_outputs(outputs(copied.fit(*fit_args(name))), expected)


def test_get_params_and_set_params():
    est = SSMFLK(beta=2.0, lexicon_prior=T8_F0, alpha=0.25)
    params = est.get_params(deep=True)
    assert params == est.get_params(deep=False)
    assert set(params) == set(MFLK().get_params()) | {"beta", "beta_scale", "label_start", "label_min_docs", "start_weights", "label_prior"}
    assert params["beta"] == 2.0 and params["alpha"] == 0.25 and params["lexicon_prior"] is T8_F0
    assert SSMFLK(**params).get_params() == params
    assert est.set_params(alpha=0.5, label_start=0.0) is est and est.alpha == 0.5 and est.label_start == 0.0
    with pytest.raises(ValueError, match="MFLK has no parameter 'beta'"):
        MFLK().set_params(beta=1.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'gamma'"):
        SSMFLK(gamma=1.0)


def test_ssmflk_changes_no_default_of_mflk():
    mflk, ssmflk = MFLK().get_params(), SSMFLK().get_params()
    assert {k: ssmflk[k] for k in mflk} == mflk


def test_mflk_ignores_labels_and_ssmflk_without_labels_is_mflk():
    reference = outputs(MFLK(lexicon_prior=T8_F0).fit(T8_X))
    assert_same_outputs(outputs(MFLK(lexicon_prior=T8_F0).fit(T8_X, T8_Y)), reference)
    assert_same_outputs(outputs(SSMFLK(lexicon_prior=T8_F0).fit(T8_X)), reference)
    assert_same_outputs(outputs(SSMFLK(lexicon_prior=T8_F0).fit(T8_X, -np.ones(4, dtype=int))), reference)
    assert not np.array_equal(SSMFLK(lexicon_prior=T8_F0).fit(T8_X, T8_Y).G_, reference[2])


def test_fit_predict_and_dense_input_agree_with_fit():
    est = SSMFLK(lexicon_prior=T8_F0)
    labels = est.fit_predict(T8_X, T8_Y)
    np.testing.assert_array_equal(labels, est.labels_)
    assert labels.shape == (T8_X.shape[0],)
    dense = SSMFLK(lexicon_prior=T8_F0).fit(T8_X.toarray(), T8_Y)
    assert_same_outputs(outputs(dense), outputs(est))
    assert est.predict_proba(T8_X).shape == (4, 2) and est.fold_in(T8_X[:2]).shape == (2, 2)
