"""A complete `spacy train` config for `treeboost_textcat`, as `python -m spacy_treeboost init-config` writes it."""
from typing import Dict, Optional

from thinc.api import Config

from .scoring import CATS_SCORE_WEIGHTS

MULTILABEL_SCORE_WEIGHTS = {**CATS_SCORE_WEIGHTS, "cats_score": None, "cats_micro_f": 0.0, "cats_macro_f": 1.0}


def starter_config(lang: str = "en", exclusive_classes: bool = True) -> Config:
    """The config of a pipeline with a sentencizer and `treeboost_textcat`, reading JSON lines and training in one
    step (the default learner is fitted in `initialize`); `paths.train` and `paths.dev` are to be set.

    lang (str): The language code of the blank pipeline.
    exclusive_classes (bool): One label per document; with False several, `model-best` selected by macro F (the
        multi-label `cats_score`, macro AUC, is often 1.0 from the first step).
    """
    import spacy

    nlp = spacy.blank(lang)
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("treeboost_textcat", config={"exclusive_classes": exclusive_classes})
    config = nlp.config.copy()
    for name in ("train", "dev"):
        config["corpora"][name] = {"@readers": "spacy_treeboost.JsonlCorpus.v1", "path": f"${{paths.{name}}}"}
    config["training"].update(max_epochs=0, max_steps=1, eval_frequency=1, patience=1)
    weights: Dict[str, Optional[float]] = {"sents_f": None, "sents_p": None, "sents_r": None}
    weights.update(CATS_SCORE_WEIGHTS if exclusive_classes else MULTILABEL_SCORE_WEIGHTS)
    config["training"]["score_weights"] = weights
    return config
