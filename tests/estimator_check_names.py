"""The scikit-learn estimator checks that every estimator of the project passes."""


SKLEARN_CHECKS = [
    "check_get_params_invariance",
    "check_set_params",
    "check_no_attributes_set_in_init",
    "check_parameters_default_constructible",
    "check_estimator_cloneable",
    "check_estimator_repr",
    "check_do_not_raise_errors_in_init_or_set_params",
    "check_mixin_order",
    "check_estimator_tags_renamed",
]
