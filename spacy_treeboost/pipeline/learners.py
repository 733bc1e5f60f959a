"""The registered learners (each its estimator class, whose keyword arguments are the block's settings) and tree
builder, and the checks and warnings about a learner's settings."""
import functools
import warnings
from importlib import import_module
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Type

import catalogue
import numpy
from spacy.language import Language
from spacy.util import registry

from ..config_errors import config_error, reporting
from ..params import clone
from ..learning.corrective import CorrectiveBoostClassifier
from ..learning.learner import TreeBoostClassifier, default_booster
from ..learning.subtree_linear import SubtreeLinearClassifier
from ..trees.doc_trees import TreeSpec

NMTF_LEARNER_CLASSES = {f"spacy_treeboost.{cls}.v1": cls for cls in ("SSMFLK", "MFLK", "SSMFLKNaiveBayes",
                                                                       "SSMFLKSelfTrained")}


class _LearnerRegistry(catalogue.Registry):
    """The `learners` registry, whose NMTF learners are registered on first lookup (so that creating a `Language`
    imports neither scipy nor the NMTF package)."""

    def get(self, name: str) -> Any:
        if name in NMTF_LEARNER_CLASSES:
            nmtf_learners()
        return super().get(name)

    def __contains__(self, name: str) -> bool:
        return name in NMTF_LEARNER_CLASSES or super().__contains__(name)

    def get_all(self) -> Dict[str, Any]:
        nmtf_learners()
        return super().get_all()


if not hasattr(registry, "learners"):
    setattr(registry, "learners", _LearnerRegistry(("spacy", "learners"), entry_points=False))
if not hasattr(registry, "tree_builders"):
    registry.create("tree_builders", entry_points=False)
LEARNER_REGISTRY: catalogue.Registry = getattr(registry, "learners")

LEARNERS = {
    "spacy_treeboost.SubtreeBoost.v1": TreeBoostClassifier,
    "spacy_treeboost.SubtreeLinear.v1": SubtreeLinearClassifier,
    "spacy_treeboost.CorrectiveBoost.v1": CorrectiveBoostClassifier,
}
TREE_BUILDERS = {"spacy_treeboost.DocTrees.v1": TreeSpec}
for _name, _cls in LEARNERS.items():
    LEARNER_REGISTRY.register(_name, func=_cls)
for _name, _cls in TREE_BUILDERS.items():
    getattr(registry, "tree_builders").register(_name, func=reporting(_cls, _name))

TREE_KEYS = ("tree_mode", "node_attrs", "skip_flags")


def nmtf_learners() -> Dict[str, Type[Any]]:
    """The registered NMTF learners (`spacy_treeboost.nmtf`, imported here), by registered name."""
    nmtf = import_module("spacy_treeboost.nmtf")
    learners = {name: getattr(nmtf, cls) for name, cls in NMTF_LEARNER_CLASSES.items()}
    for name, cls in learners.items():
        if not catalogue.check_exists(*LEARNER_REGISTRY.namespace, name):
            LEARNER_REGISTRY.register(name, func=cls)
    return learners


def split_learner(learner: Any) -> Tuple[Any, bool]:
    """(the estimator that boosts during training or None, whether it is refitted before scoring)."""
    if isinstance(learner, TreeBoostClassifier):
        return learner, False
    if isinstance(learner, CorrectiveBoostClassifier) and not learner.refit_every:
        return learner.estimator or default_booster(), True
    return None, False


def learner_settings(learner: Any) -> Dict[str, Any]:
    """A learner's registered name and plain settings, for a component's cfg."""
    from ..learning.classifier_files import _plain_params

    names = {cls: name for name, cls in LEARNERS.items()}
    if type(learner) not in names:
        names = {cls: name for name, cls in nmtf_learners().items()}
    return {"@learners": names[type(learner)], **_plain_params(learner)}


def learner_from_settings(data: Dict[str, Any], registered: Dict[str, Any] = LEARNERS) -> Any:
    """The learner of `learner_settings`, one of the `registered` learners."""
    data = dict(data)
    cls = registered[data.pop("@learners")]
    if isinstance(data.get("estimator"), dict):
        data["estimator"] = TreeBoostClassifier(**data["estimator"])
    return cls(**data)


def unfitted_copy(learner: Any, positive_class: Optional[str] = None) -> Any:
    """An unfitted `clone` of a learner; a positive class, if given, goes to the learner or its booster."""
    learner = clone(learner)
    if positive_class is not None:
        if "positive_class" in learner.get_params(deep=False):
            learner.set_params(positive_class=positive_class)
        else:
            learner.set_params(estimator=learner.estimator or default_booster())
            learner.estimator.set_params(positive_class=positive_class)
    return learner


FACTORIES = ("treeboost_textcat", "nmtf_sentiment")
INT64 = range(-(2 ** 63), 2 ** 64)


def _big_integers(value: Any, loc: List[str]) -> Iterator[Tuple[List[str], int]]:
    """The location and value of each whole number in a config block that exceeds 64 bits."""
    if isinstance(value, int) and not isinstance(value, bool) and value not in INT64:
        yield loc, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _big_integers(item, [*loc, str(key)])
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _big_integers(item, loc)


def _checking_settings(create_pipe: Callable[..., Any]) -> Callable[..., Any]:
    """spaCy's `Language.create_pipe`, refusing this package's settings that hold a whole number beyond 64 bits,
    which spaCy's JSON check (through ujson) can let through and leave an exception set behind."""

    @functools.wraps(create_pipe)
    def create(self: Language, factory_name: str, name: Optional[str] = None, *args: Any, **kwargs: Any) -> Any:
        config = kwargs.get("config") if factory_name in FACTORIES else None
        found = next(_big_integers(config, []), None) if isinstance(config, dict) else None
        if found is not None:
            loc, value = found
            raise config_error(f"{loc[-1]}={value} is invalid: use a whole number that fits in 64 bits (a config "
                               "holds JSON values only)", ["components", name or factory_name, *loc])
        return create_pipe(self, factory_name, name, *args, **kwargs)

    setattr(create, "checks_settings", True)
    return create


if not getattr(Language.create_pipe, "checks_settings", False):
    setattr(Language, "create_pipe", _checking_settings(Language.create_pipe))


CONSTANT_SPREAD = 1e-6


def likely_setting(learner: Any) -> str:
    """The setting most likely to make a learner's model score every training document alike, and what to change."""
    estimator = getattr(learner, "estimator", None)
    params = learner.get_params(deep=False)
    C = params.get("C")
    if isinstance(params.get("max_rules"), int):
        return (f"max_rules = {params['max_rules']} keeps too few subtrees to tell the documents apart; raise it or "
                "set it to null")
    if C is not None and C <= 0.01:
        return (f"C = {C:g} regularizes every weight to about 0; raise C, or set C = null to choose it by "
                "cross-validation")
    lr_C = params.get("lr_C")
    if lr_C is not None and not 1e-6 <= lr_C <= 1e6:
        return f"lr_C = {lr_C:g} is extreme; use a value from 1e-06 to 1e+06 (1 is usual)"
    booster = learner if isinstance(learner, TreeBoostClassifier) else estimator
    if isinstance(booster, TreeBoostClassifier):
        if booster.smoothing is not None and booster.smoothing >= 1:
            return (f"smoothing = {booster.smoothing:g} pulls every rule's confidence to about 0; set it to null "
                    "(1/m) or to a small number")
        return (f"min_support = {booster.min_support} or max_pattern_size = {booster.max_pattern_size} leaves too few "
                "subtrees; lower min_support or raise max_pattern_size (or raise n_rounds)")
    if "min_support" in params:
        return (f"min_support = {params['min_support']} or max_pattern_size = {params['max_pattern_size']} leaves too "
                "few subtrees; lower min_support, or raise C")
    return ("alpha (the lexicon's weight) or beta (the labels' weight) is likely out of scale; use the defaults, or "
            "check that the lexicon's words occur in the documents")


def warn_if_constant(name: str, learner: Any, scores: Any) -> bool:
    """Warn when a model gives every training document (a row of `scores`) the same scores, naming the likely
    setting of `learner`. RETURNS (bool): Whether it warned."""
    scores = numpy.asarray(scores, dtype=float).reshape(len(scores), -1)
    if len(scores) < 2 or (numpy.isfinite(scores).all() and float(numpy.ptp(scores, axis=0).max()) > CONSTANT_SPREAD):
        return False
    warnings.warn(f"'{name}' gives every training document the same scores: the trained model tells no document "
                  f"apart. The likely cause is in its learner block: {likely_setting(learner)}.", stacklevel=2)
    return True
