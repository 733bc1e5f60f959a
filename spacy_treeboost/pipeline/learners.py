"""The registered sub-configs of the components: their learners and the tree builder.

Each learner is registered as its estimator class, so a config block's settings are the
estimator's own keyword arguments (declared, documented and validated once, in
`spacy_treeboost.learning`):

    [components.treeboost_textcat.learner]
    @learners = "spacy_treeboost.SubtreeLinear.v1"
    max_pattern_size = 3

    [components.treeboost_textcat.trees]
    @tree_builders = "spacy_treeboost.DocTrees.v1"
    tree_mode = "chain"
    node_attrs = ["LOWER"]
"""
from importlib import import_module
from typing import Any, Dict, Optional, Tuple, Type

import catalogue
from spacy.util import registry

from ..config_errors import reporting
from ..learning.calibration import CalibratedBoostClassifier
from ..learning.corrective import CorrectiveBoostClassifier
from ..learning.learner import TreeBoostClassifier, default_booster
from ..learning.subtree_linear import SubtreeLinearClassifier
from ..trees.doc_trees import TreeSpec

NMTF_LEARNER_CLASSES = {"spacy_treeboost.SSMFLK.v1": "SSMFLK", "spacy_treeboost.MFLK.v1": "MFLK",
                        "spacy_treeboost.SSMFLKNaiveBayes.v1": "SSMFLKNaiveBayes",
                        "spacy_treeboost.SSMFLKSelfTrained.v1": "SSMFLKSelfTrained"}


class _LearnerRegistry(catalogue.Registry):
    """The `learners` registry. Its NMTF learners are registered on first lookup: creating a `Language` imports
    this module (through the factories), and must not import scipy or the NMTF package."""

    def get(self, name: str) -> Any:
        if name in NMTF_LEARNER_CLASSES:
            nmtf_learners()
        return super().get(name)

    def has(self, name: str) -> bool:
        return name in NMTF_LEARNER_CLASSES or super().has(name)


def _learners() -> catalogue.Registry:
    return getattr(registry, "learners")


if not hasattr(registry, "learners"):
    setattr(registry, "learners", _LearnerRegistry(("spacy", "learners"), entry_points=False))
if not hasattr(registry, "tree_builders"):
    registry.create("tree_builders", entry_points=False)

LEARNERS = {
    "spacy_treeboost.SubtreeBoost.v1": TreeBoostClassifier,
    "spacy_treeboost.SubtreeLinear.v1": SubtreeLinearClassifier,
    "spacy_treeboost.CorrectiveBoost.v1": CorrectiveBoostClassifier,
    "spacy_treeboost.CalibratedBoost.v1": CalibratedBoostClassifier,
}
TREE_BUILDERS = {"spacy_treeboost.DocTrees.v1": TreeSpec}
for _name, _cls in LEARNERS.items():
    _learners().register(_name, func=_cls)
for _name, _cls in TREE_BUILDERS.items():
    getattr(registry, "tree_builders").register(_name, func=reporting(_cls, _name))

TREE_KEYS = ("tree_mode", "node_attrs", "skip_flags")


def nmtf_learners() -> Dict[str, Type[Any]]:
    """The registered NMTF learners (`spacy_treeboost.nmtf`, imported here), by registered name."""
    nmtf = import_module("spacy_treeboost.nmtf")
    learners = {name: getattr(nmtf, cls) for name, cls in NMTF_LEARNER_CLASSES.items()}
    for name, cls in learners.items():
        if not catalogue.check_exists(*_learners().namespace, name):
            _learners().register(name, func=cls)
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


def copy_execution(source: Any, target: Any) -> Any:
    """`target` with the settings of where `source` and its booster run (n_workers, backend, ray_address): settings
    of the machine that trains, which a learner's cfg does not keep."""
    from ..learning.learner import EXECUTION_PARAMS

    for src, dst in ((source, target), (getattr(source, "estimator", None), getattr(target, "estimator", None))):
        if src is not None and dst is not None:
            dst.set_params(**{k: v for k, v in src.get_params(deep=False).items() if k in EXECUTION_PARAMS})
    return target


def unfitted_copy(learner: Any, positive_class: Optional[str] = None) -> Any:
    """An unfitted copy of a learner, where it runs included; a positive class, if given, goes to the learner or its
    booster."""
    learner = copy_execution(learner, learner_from_settings(learner_settings(learner)))
    if positive_class is not None:
        target = learner if "positive_class" in learner.get_params(deep=False) else learner.estimator
        if target is None:
            target = learner.estimator = default_booster()
        target.positive_class = positive_class
    return learner
