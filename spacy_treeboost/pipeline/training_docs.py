"""What `treeboost_textcat` checks and prepares in `initialize`: labels, parser, targets, training docs, and what it
says about the training run."""
import sys
import warnings
from types import FrameType
from typing import Any, List, Optional, Sequence

from spacy.language import Language
from spacy.tokens import Doc
from spacy.training import Example

from ..config_errors import training_corpus
from ..datasets.convert import parser_install_hint
from ..params import invalid_setting


def check_whole_corpus(nlp: Optional[Language], name: str) -> None:
    """Refuse a streamed training corpus: the component learns from all training examples at once."""
    if nlp is not None and nlp.config.get("training", {}).get("max_epochs") == -1:
        raise ValueError(f"'{name}' learns from the whole training corpus at once, but [training] max_epochs = -1 "
                         "streams it, and initialize then sees only 100 examples. Set max_epochs = 0 (boosting rounds "
                         "are controlled by max_steps, eval_frequency and patience).")


def warn_idle_steps(nlp: Optional[Language], name: str) -> bool:
    """Warn when `spacy train` would run more than one step after a model fitted in `initialize` (each later step
    only evaluates the same model). RETURNS (bool): Whether it warned."""
    if nlp is None or training_corpus(nlp) is None:
        return False
    training = nlp.config.get("training", {})
    max_steps, patience = training.get("max_steps"), training.get("patience")
    limits = [v for v in (max_steps, patience) if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    if limits and min(limits) <= 1:
        return False
    steps = f"up to {min(limits):,} steps" if limits else "until the epochs end"
    warnings.warn(f"'{name}' is fitted in initialize, and every training step after that only evaluates the same "
                  f"model, but [training] runs {steps} (max_steps = {max_steps}, patience = {patience}): set "
                  "[training] max_steps = 1 (e.g. --training.max_steps 1), as python -m spacy_treeboost init-config "
                  "does.", IdleStepsWarning, stacklevel=3)
    return True


class IdleStepsWarning(UserWarning):
    """`spacy train` would run training steps that change nothing (`warn_idle_steps`)."""


def under_debug_data() -> bool:
    """Whether spaCy's `debug data` command is initializing the pipeline (to check the data, not to train it)."""
    frame: Optional[FrameType] = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "debug_data" and frame.f_globals.get("__name__") == "spacy.cli.debug_data":
            return True
        frame = frame.f_back
    return False


def label_statistics(name: str, examples: Sequence[Example], labels: Sequence[str]) -> List[str]:
    """The lines `spacy debug data` shows: each label's training documents (cats >= 0.5), those with none or several."""
    counts = {label: 0 for label in labels}
    none = several = 0
    for eg in examples:
        positive = [label for label, value in eg.reference.cats.items() if value >= 0.5 and label in counts]
        for label in positive:
            counts[label] += 1
        none += not positive
        several += len(positive) > 1
    width = max(len(label) for label in labels)
    lines = [f"'{name}': {len(labels)} labels in {len(examples):,} training documents (the model is not fitted "
             "under spacy debug data; spacy train fits it in initialize)"]
    lines += [f"  {label:<{width}}  {n:>8,} documents" for label, n in counts.items()]
    lines.append(f"  documents with no label: {none:,}, with several: {several:,}")
    return lines


def check_labels(name: str, labels: Sequence[str], exclusive: bool, hint: str = "") -> None:
    """Refuse label sets the component cannot learn (`hint`: a further sentence when there are none)."""
    if not labels:
        raise ValueError(f"'{name}' has no labels: the training examples have no cats. Give each example's "
                         f"reference doc.cats, or list labels in [initialize.components.{name}].{hint}")
    if exclusive and len(labels) < 2:
        raise ValueError(f"'{name}' has only one label ({labels[0]!r}) but exclusive_classes = true needs at least "
                         "two. Add the other class to the training data, or set exclusive_classes = false.")


def check_positive_label(labels: Sequence[str], positive: Optional[str]) -> None:
    """Refuse a positive label that is not a label."""
    if positive is not None and positive not in labels:
        raise invalid_setting("positive_label", positive, f"it is not one of the labels {list(labels)}; use one of "
                              "them, or null")


def check_parser(nlp: Optional[Language], name: str, tree_mode: str, parse_source: str) -> None:
    """Refuse dependency trees when no component before this one assigns token.dep."""
    if nlp is None or tree_mode == "chain" or name not in nlp.component_names:
        return
    before = nlp.component_names[: nlp.component_names.index(name)]
    if not any("token.dep" in nlp.get_pipe_meta(other).assigns for other in before):
        raise ValueError(
            f"'{name}' has tree_mode = \"{tree_mode}\" but no component before it in the pipeline "
            f"assigns token.dep, so docs cannot be parsed when evaluating or predicting (parse_source = "
            f"{parse_source!r} only decides where the training trees come from). Source a parser: "
            f"add \"tok2vec\" and \"parser\" with source = \"en_core_web_sm\" before '{name}' and list "
            "them in [training] frozen_components, as configs/dependency_sentiment.cfg does (its ${paths.parser}). "
            + parser_install_hint("--paths.parser"))


def targets(examples: List[Example], labels: Sequence[str], exclusive: bool, name: str) -> List[Any]:
    """One gold label per example (exclusive classes) or a list of labels per example."""
    golds = [[l for l in labels if eg.reference.cats.get(l, 0.0) >= 0.5] for eg in examples]
    if not exclusive:
        return golds
    for i, gold in enumerate(golds):
        if len(gold) != 1:
            raise ValueError(f"'{name}' has exclusive classes, but training example {i} has {len(gold)} gold labels "
                             f"({gold}) among {list(labels)}; each example needs exactly one (or set "
                             "exclusive_classes = false).")
    return [gold[0] for gold in golds]


def training_docs(examples: List[Example], nlp: Optional[Language], name: str, source: str) -> List[Doc]:
    """The docs the training trees are built from, annotated as `source` says."""
    if source == "reference":
        return [eg.reference for eg in examples]
    docs = [eg.predicted for eg in examples]
    if source == "pipeline" and nlp is not None and name in nlp.component_names:
        frozen = set(nlp.config.get("training", {}).get("frozen_components", []))
        for other in nlp.component_names[: nlp.component_names.index(name)]:
            proc = nlp.get_pipe(other)
            trainable = getattr(proc, "is_trainable", False)
            if trainable and other not in frozen and other not in nlp.disabled:
                continue
            docs = list(proc.pipe(docs, batch_size=nlp.batch_size)) if hasattr(proc, "pipe") else list(map(proc, docs))
    return docs
