"""Scorers for the cats-writing components, registered for `spacy train`."""
from functools import partial
from typing import Any, Callable, Dict, Iterable

import numpy
from spacy.scorer import Scorer
from spacy.training import Example
from spacy.util import registry

CATS_SCORE_WEIGHTS: Dict[str, Any] = {
    "cats_score": 1.0, "cats_score_desc": None, "cats_micro_p": None, "cats_micro_r": None, "cats_micro_f": None,
    "cats_macro_p": None, "cats_macro_r": None, "cats_macro_f": None, "cats_macro_auc": None,
    "cats_f_per_type": None, "cats_auc_per_type": None,
}

def score_treeboost_cats(examples: Iterable[Example], **kwargs: Any) -> Dict[str, Any]:
    """Score `doc.cats` with spaCy's `cats_*` keys; `exclusive_classes` in the cfg `kwargs` selects multi-label."""
    multi_label = not kwargs.pop("exclusive_classes", True)
    return Scorer.score_cats(examples, "cats", multi_label=multi_label, **kwargs)


@registry.scorers("spacy_treeboost.textcat_scorer.v1")
def make_textcat_scorer() -> Callable[..., Dict[str, Any]]:
    return score_treeboost_cats


def score_nmtf_cats(examples: Iterable[Example], *, prefix: str = "", **kwargs: Any) -> Dict[str, Any]:
    """Score `nmtf_sentiment`'s cats: spaCy's `cats_*` keys, plus `cats_log_loss` and `cats_ece` (expected
    calibration error, 10 bins) of P(positive) on the examples with a gold class, each key behind `prefix`.

    **kwargs: The component's cfg; `labels` holds the positive and the negative label.
    """
    from ..nmtf.calibration import expected_calibration_error, log_loss

    examples = list(examples)
    labels = list(kwargs.get("labels") or [])
    scores = score_treeboost_cats(examples, **kwargs)
    if len(labels) == 2:
        positive, negative = labels
        p, truth = [], []
        for eg in examples:
            gold = eg.reference.cats
            if gold and gold.get(positive, 0.0) != gold.get(negative, 0.0) and positive in eg.predicted.cats:
                p.append(eg.predicted.cats[positive])
                truth.append(float(gold.get(positive, 0.0) > gold.get(negative, 0.0)))
        scores["cats_log_loss"] = log_loss(numpy.array(p), numpy.array(truth)) if p else None
        scores["cats_ece"] = expected_calibration_error(numpy.array(p), numpy.array(truth)) if p else None
    return {prefix + key: value for key, value in scores.items()}


@registry.scorers("spacy_treeboost.nmtf_scorer.v2")
def make_nmtf_scorer_v2(prefix: str = "") -> Callable[..., Dict[str, Any]]:
    """The scorer of `nmtf_sentiment` (`score_nmtf_cats`). Beside another component that writes `doc.cats` set
    `prefix = "nmtf_"`, so that the two components' scores keep their own keys."""
    return partial(score_nmtf_cats, prefix=prefix)
