"""The NMTF default-learner benchmark's cross-fitting, in this process."""
import numpy as np

from bench.nmtf_default_learner import cross_fitted_scores
from spacy_treeboost.nmtf.calibration import label_folds


def test_cross_fitted_scores_come_from_models_that_did_not_see_those_labels():
    y = np.array([0, 1, 0, 1, -1, 0, 1])
    seen = []

    def fit_scores(y_fold):
        seen.append(y_fold.copy())
        return np.where(y_fold == -1, 100.0 + len(seen), -1.0)

    out = cross_fitted_scores(fit_scores, y, n_folds=2)
    folds = label_folds(y, 2)
    for fold, y_fold in enumerate(seen):
        held = folds == fold
        assert (y_fold[held] == -1).all() and (y_fold[~held & (y >= 0)] == y[~held & (y >= 0)]).all()
        assert (out[held] == 101.0 + fold).all()
    assert out[4] == 0.0
