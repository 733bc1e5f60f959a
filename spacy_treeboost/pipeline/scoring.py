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
    """Score `doc.cats` with spaCy's standard `cats_*` keys.

    examples (Iterable[Example]): The examples to score.
    **kwargs: The component's cfg; `exclusive_classes` selects exclusive or
        multi-label scoring.
    RETURNS (Dict[str, Any]): The `cats_*` scores.
    """
    multi_label = not kwargs.pop("exclusive_classes", True)
    return Scorer.score_cats(examples, "cats", multi_label=multi_label, **kwargs)


@registry.scorers("spacy_treeboost.textcat_scorer.v1")
def make_textcat_scorer() -> Callable[..., Dict[str, Any]]:
    return score_treeboost_cats


def score_prefixed_cats(examples: Iterable[Example], *, prefix: str, **kwargs: Any) -> Dict[str, Any]:
    """Score `doc.cats` like `score_treeboost_cats`, with every key prefixed."""
    return {prefix + key: value for key, value in score_treeboost_cats(examples, **kwargs).items()}


@registry.scorers("spacy_treeboost.nmtf_scorer.v1")
def make_nmtf_scorer(prefix: str = "nmtf_") -> Callable[..., Dict[str, Any]]:
    return partial(score_prefixed_cats, prefix=prefix)


def score_nmtf_cats(examples: Iterable[Example], *, prefix: str = "", **kwargs: Any) -> Dict[str, Any]:
    """Score `nmtf_sentiment`'s cats: spaCy's `cats_*` keys over its two labels, plus `cats_log_loss` and
    `cats_ece` (expected calibration error, 10 bins) of P(positive) on the examples with a gold class.

    examples (Iterable[Example]): The examples to score.
    prefix (str): Put before every key ("" gives spaCy's own keys, which `spacy evaluate` prints).
    **kwargs: The component's cfg; `labels` holds the positive and the negative label.
    RETURNS (Dict[str, Any]): The scores.
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
    """The scorer of `nmtf_sentiment`: spaCy's `cats_*` keys (printed by `spacy evaluate`) plus `cats_log_loss`
    and `cats_ece`, each behind `prefix`. In a pipeline with another component that writes `doc.cats` (e.g.
    `treeboost_textcat`) set `prefix = "nmtf_"`, so that the two components' scores keep their own keys.

    prefix (str): Put before every key.
    RETURNS (Callable): The scorer.
    """
    return partial(score_nmtf_cats, prefix=prefix)
